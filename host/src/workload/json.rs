// SPDX-License-Identifier: GPL-2.0-only
//! A lenient JSON reader for rt-app files.
//!
//! rt-app reads its configuration with json-c, which accepts C and C++ comments and
//! trailing commas, and keeps every member of an object in file order even when a key
//! repeats (`"run": 1000, "sleep": 1000, "run": 2000` is three events). `serde_json`
//! neither accepts the comments nor keeps duplicate keys, and it forgets where a value
//! was. This reader keeps objects as ordered member lists with the 1-based line and
//! column of every key and value, so each later error can point at the file line.
//!
//! Numbers are kept as their source text ([`Value::Number`]); the caller decides which
//! integer width a key has, so `1.5` or `1e3` for a duration is an error there, never a
//! float here. Nesting is limited to [`MAX_DEPTH`] so no input can exhaust the stack.

use std::fmt;

/// Deepest nesting of arrays and objects accepted (rt-app files use 5 or 6 levels).
pub const MAX_DEPTH: usize = 64;

/// A 1-based line and column (columns count characters, not bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, serde::Serialize)]
pub struct Loc {
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// The 1-based line and column of byte `offset` in `text` (clamped to the text).
pub fn loc_of_offset(text: &str, offset: usize) -> Loc {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Loc {
        line: u32::try_from(line).unwrap_or(u32::MAX),
        column: u32::try_from(column).unwrap_or(u32::MAX),
    }
}

/// A JSON value and where it starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Where the value starts.
    pub at: Loc,
    /// The value.
    pub value: Value,
}

/// One `"key": value` member of an object.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    /// The key, unescaped.
    pub key: String,
    /// Where the key starts.
    pub at: Loc,
    /// The value.
    pub value: Node,
}

/// A JSON value. Objects keep every member, duplicates included, in file order.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number, as written (`-12`, `1.5e3`).
    Number(String),
    /// A string, unescaped.
    Str(String),
    /// An array.
    Array(Vec<Node>),
    /// An object, in file order.
    Object(Vec<Member>),
}

impl Value {
    /// The JSON type name, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(n) if is_integer_text(n) => "an integer",
            Value::Number(_) => "a non-integer number",
            Value::Str(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
}

/// Whether a number's text is an integer (no fraction, no exponent).
fn is_integer_text(n: &str) -> bool {
    !n.contains(['.', 'e', 'E'])
}

/// Why a text is not (lenient) JSON, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// Where the reader stopped.
    pub at: Loc,
    /// What it expected.
    pub msg: String,
}

/// Parses one lenient-JSON document (a single value, then only blanks and comments).
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    let mut r = Reader {
        text,
        pos: 0,
        loc: Loc { line: 1, column: 1 },
    };
    r.skip_blanks()?;
    let node = r.value(0)?;
    r.skip_blanks()?;
    if r.peek().is_some() {
        return Err(r.error("unexpected text after the end of the document"));
    }
    Ok(node)
}

struct Reader<'a> {
    text: &'a str,
    pos: usize,
    loc: Loc,
}

impl Reader<'_> {
    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.loc.line = self.loc.line.saturating_add(1);
            self.loc.column = 1;
        } else {
            self.loc.column = self.loc.column.saturating_add(1);
        }
        Some(c)
    }

    fn error(&self, msg: impl Into<String>) -> SyntaxError {
        SyntaxError {
            at: self.loc,
            msg: msg.into(),
        }
    }

    /// What the next character is, for messages.
    fn found(&self) -> String {
        match self.peek() {
            None => "end of file".into(),
            Some(c) => format!("{c:?}"),
        }
    }

    /// Skips whitespace, `// ...` and `/* ... */` comments.
    fn skip_blanks(&mut self) -> Result<(), SyntaxError> {
        loop {
            match self.peek() {
                Some(c) if c.is_whitespace() => {
                    self.bump();
                }
                Some('/') => {
                    let start = self.loc;
                    self.bump();
                    match self.bump() {
                        Some('/') => {
                            while let Some(c) = self.bump() {
                                if c == '\n' {
                                    break;
                                }
                            }
                        }
                        Some('*') => loop {
                            match self.bump() {
                                Some('*') if self.peek() == Some('/') => {
                                    self.bump();
                                    break;
                                }
                                Some(_) => {}
                                None => {
                                    return Err(SyntaxError {
                                        at: start,
                                        msg: "unterminated /* comment".into(),
                                    })
                                }
                            }
                        },
                        _ => {
                            return Err(SyntaxError {
                                at: start,
                                msg: "a lone '/' (comments are // or /* */)".into(),
                            })
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, SyntaxError> {
        let at = self.loc;
        let value = match self.peek() {
            Some('{') => self.object(depth)?,
            Some('[') => self.array(depth)?,
            Some('"') => Value::Str(self.string()?),
            Some(c) if c == '-' || c.is_ascii_digit() => Value::Number(self.number()?),
            Some(c) if c.is_ascii_alphabetic() => self.literal()?,
            _ => return Err(self.error(format!("expected a value, found {}", self.found()))),
        };
        Ok(Node { at, value })
    }

    fn enter(&self, depth: usize) -> Result<usize, SyntaxError> {
        if depth >= MAX_DEPTH {
            return Err(self.error(format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        Ok(depth + 1)
    }

    fn object(&mut self, depth: usize) -> Result<Value, SyntaxError> {
        let depth = self.enter(depth)?;
        self.bump(); // '{'
        let mut members = Vec::new();
        loop {
            self.skip_blanks()?;
            match self.peek() {
                Some('}') => {
                    self.bump();
                    return Ok(Value::Object(members));
                }
                Some('"') => {}
                _ => {
                    return Err(self.error(format!(
                        "expected a \"key\" or '}}', found {}",
                        self.found()
                    )))
                }
            }
            let at = self.loc;
            let key = self.string()?;
            self.skip_blanks()?;
            if self.peek() != Some(':') {
                return Err(self.error(format!(
                    "expected ':' after key \"{key}\", found {}",
                    self.found()
                )));
            }
            self.bump();
            self.skip_blanks()?;
            let value = self.value(depth)?;
            members.push(Member { key, at, value });
            self.skip_blanks()?;
            match self.peek() {
                Some(',') => {
                    self.bump();
                }
                Some('}') => {}
                _ => {
                    return Err(self.error(format!(
                        "expected ',' or '}}' after a member, found {}",
                        self.found()
                    )))
                }
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, SyntaxError> {
        let depth = self.enter(depth)?;
        self.bump(); // '['
        let mut items = Vec::new();
        loop {
            self.skip_blanks()?;
            if self.peek() == Some(']') {
                self.bump();
                return Ok(Value::Array(items));
            }
            items.push(self.value(depth)?);
            self.skip_blanks()?;
            match self.peek() {
                Some(',') => {
                    self.bump();
                }
                Some(']') => {}
                _ => {
                    return Err(self.error(format!(
                        "expected ',' or ']' after an array item, found {}",
                        self.found()
                    )))
                }
            }
        }
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        let start = self.loc;
        self.bump(); // '"'
        let mut s = String::new();
        loop {
            let Some(c) = self.bump() else {
                return Err(SyntaxError {
                    at: start,
                    msg: "unterminated string".into(),
                });
            };
            match c {
                '"' => return Ok(s),
                '\\' => s.push(self.escape()?),
                '\n' => {
                    return Err(SyntaxError {
                        at: start,
                        msg: "unterminated string (newline inside a string)".into(),
                    })
                }
                c => s.push(c),
            }
        }
    }

    fn escape(&mut self) -> Result<char, SyntaxError> {
        let at = self.loc;
        let bad = |msg: &str| SyntaxError {
            at,
            msg: msg.into(),
        };
        Ok(match self.bump() {
            Some('"') => '"',
            Some('\\') => '\\',
            Some('/') => '/',
            Some('b') => '\u{8}',
            Some('f') => '\u{c}',
            Some('n') => '\n',
            Some('r') => '\r',
            Some('t') => '\t',
            Some('u') => {
                let hi = self.hex4()?;
                if (0xd800..0xdc00).contains(&hi) {
                    if self.bump() != Some('\\') || self.bump() != Some('u') {
                        return Err(bad("a high surrogate \\u escape without its low half"));
                    }
                    let lo = self.hex4()?;
                    if !(0xdc00..0xe000).contains(&lo) {
                        return Err(bad("invalid low surrogate in a \\u escape"));
                    }
                    let c = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
                    char::from_u32(c).ok_or_else(|| bad("invalid \\u escape"))?
                } else {
                    char::from_u32(hi).ok_or_else(|| bad("invalid \\u escape"))?
                }
            }
            _ => return Err(bad("invalid escape in a string")),
        })
    }

    fn hex4(&mut self) -> Result<u32, SyntaxError> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = self
                .peek()
                .and_then(|c| c.to_digit(16))
                .ok_or_else(|| self.error("expected 4 hex digits after \\u"))?;
            self.bump();
            v = v * 16 + d;
        }
        Ok(v)
    }

    /// A JSON number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    fn number(&mut self) -> Result<String, SyntaxError> {
        let start = self.pos;
        if self.peek() == Some('-') {
            self.bump();
        }
        let digits = |r: &mut Self| -> usize {
            let mut n = 0;
            while r.peek().is_some_and(|c| c.is_ascii_digit()) {
                r.bump();
                n += 1;
            }
            n
        };
        let int_start = self.pos;
        if digits(self) == 0 {
            return Err(self.error(format!("expected a digit, found {}", self.found())));
        }
        if self.text[int_start..].starts_with('0') && self.pos - int_start > 1 {
            return Err(self.error("a number may not have leading zeros"));
        }
        if self.peek() == Some('.') {
            self.bump();
            if digits(self) == 0 {
                return Err(self.error("expected a digit after '.'"));
            }
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            self.bump();
            if matches!(self.peek(), Some('+' | '-')) {
                self.bump();
            }
            if digits(self) == 0 {
                return Err(self.error("expected a digit in the exponent"));
            }
        }
        Ok(self.text[start..self.pos].to_string())
    }

    fn literal(&mut self) -> Result<Value, SyntaxError> {
        let at = self.loc;
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_alphanumeric()) {
            self.bump();
        }
        match &self.text[start..self.pos] {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            "null" => Ok(Value::Null),
            word => Err(SyntaxError {
                at,
                msg: format!("expected a value, found `{word}` (strings need double quotes)"),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(n: &Node) -> &[Member] {
        match &n.value {
            Value::Object(m) => m,
            v => panic!("not an object: {v:?}"),
        }
    }

    #[test]
    fn duplicate_keys_stay_in_file_order_with_positions() {
        let n = parse("{\n  \"run\": 10,\n  \"sleep\": 5, \"run\": 20,\n}").unwrap();
        let m = obj(&n);
        let keys: Vec<_> = m.iter().map(|m| (m.key.as_str(), m.at)).collect();
        assert_eq!(
            keys,
            [
                ("run", Loc { line: 2, column: 3 }),
                ("sleep", Loc { line: 3, column: 3 }),
                (
                    "run",
                    Loc {
                        line: 3,
                        column: 15
                    }
                ),
            ]
        );
        assert_eq!(m[2].value.value, Value::Number("20".into()));
        assert_eq!(
            m[2].value.at,
            Loc {
                line: 3,
                column: 22
            }
        );
    }

    #[test]
    fn comments_and_trailing_commas_are_accepted() {
        let n =
            parse("// head\n{ /* a */ \"a\": [1, 2,], // tail\n \"b\": \"x\\u00e9\", }\n/* end */")
                .unwrap();
        let m = obj(&n);
        assert_eq!(m.len(), 2);
        assert_eq!(
            m[0].value.value,
            Value::Array(vec![
                Node {
                    at: Loc {
                        line: 2,
                        column: 17
                    },
                    value: Value::Number("1".into())
                },
                Node {
                    at: Loc {
                        line: 2,
                        column: 20
                    },
                    value: Value::Number("2".into())
                },
            ])
        );
        assert_eq!(m[1].value.value, Value::Str("xé".into()));
    }

    #[test]
    fn errors_name_line_and_column() {
        let e = parse("{\n  \"a\": 1\n  \"b\": 2\n}").unwrap_err();
        assert_eq!(e.at, Loc { line: 3, column: 3 });
        assert_eq!(e.msg, "expected ',' or '}' after a member, found '\"'");
        let e = parse("{ /* open").unwrap_err();
        assert_eq!(
            (e.at, e.msg.as_str()),
            (Loc { line: 1, column: 3 }, "unterminated /* comment")
        );
        let e = parse("{\"a\": yes}").unwrap_err();
        assert_eq!(
            e.msg,
            "expected a value, found `yes` (strings need double quotes)"
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let text = "[".repeat(100_000);
        let e = parse(&text).unwrap_err();
        assert_eq!(e.msg, "nesting deeper than 64 levels");
    }

    #[test]
    fn every_prefix_of_a_document_is_an_error_or_a_value_never_a_panic() {
        let doc = "{\"tasks\": {\"t\": {\"run\": -10, \"s\": \"\\u00e9\\ud83d\\ude00\", \"x\": [1.5e3, true, null]}}}";
        for end in 0..doc.len() {
            if doc.is_char_boundary(end) {
                assert!(parse(&doc[..end]).is_err(), "prefix {end} parsed");
            }
        }
        assert!(parse(doc).is_ok());
    }

    #[test]
    fn loc_of_offset_counts_characters() {
        assert_eq!(loc_of_offset("ab\ncé d", 7), Loc { line: 2, column: 4 });
        assert_eq!(loc_of_offset("ab", 99), Loc { line: 1, column: 3 });
    }
}
