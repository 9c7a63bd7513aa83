// SPDX-License-Identifier: GPL-2.0-only
//! Reads a fixture's JSON the way the kernel oracle's C harness stored it.
//!
//! The fixture READMEs say JSON integers may be as large as 2^64 − 1 and that an input
//! the kernel keeps in a narrower variable (an `unsigned int` reference frequency, a u32
//! `util_sum`, an `int running`) is truncated as C truncates. The drivers' input structs
//! mirror the kernel's types, so this deserializer applies the C conversion at the field:
//! any JSON integer (u64 or i64) is taken modulo 2^width of the field it lands in, never
//! refused as out of range. A value outside both u64 and i64 is still an error.
//!
//! It wraps a [`Value`] and otherwise behaves like `serde_json`'s own `Value` deserializer
//! (maps, sequences, options, externally tagged enums).

use serde::de::{self, DeserializeSeed, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};
use serde::forward_to_deserialize_any;
use serde_json::{Error, Value};

/// A JSON value read with C integer conversions (see the module doc).
#[derive(Clone, Copy)]
pub struct Narrowing<'de>(pub &'de Value);

/// The integer's two's-complement bits as C sees them when it converts to any integer
/// type: the value modulo 2^64. `None` for a non-integer.
fn bits(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64().or_else(|| n.as_i64().map(|i| i as u64)), // C wraps
        _ => None,
    }
}

/// The integer methods of a narrowing deserializer: `self.int_bits()` converted to the
/// asked-for width as C converts it, or `deserialize_any` (which reports the mismatch).
macro_rules! narrowing_ints {
    () => {
        narrowing_ints! {
            deserialize_u8 => visit_u8 as u8,
            deserialize_u16 => visit_u16 as u16,
            deserialize_u32 => visit_u32 as u32,
            deserialize_u64 => visit_u64 as u64,
            deserialize_i8 => visit_i8 as i8,
            deserialize_i16 => visit_i16 as i16,
            deserialize_i32 => visit_i32 as i32,
            deserialize_i64 => visit_i64 as i64,
        }
    };
    ($($method:ident => $visit:ident as $ty:ty),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
                match self.int_bits() {
                    Some(b) => visitor.$visit(b as $ty),
                    None => self.deserialize_any(visitor),
                }
            }
        )*
    };
}

impl Narrowing<'_> {
    fn int_bits(&self) -> Option<u64> {
        bits(self.0)
    }
}

impl<'de> de::Deserializer<'de> for Narrowing<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => visitor.visit_u64(u),
                (_, Some(i), _) => visitor.visit_i64(i),
                (_, _, Some(f)) => visitor.visit_f64(f),
                _ => Err(de::Error::custom("unrepresentable number")),
            },
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(a) => visitor.visit_seq(Seq(a.iter())),
            Value::Object(m) => visitor.visit_map(Obj {
                iter: m.iter(),
                value: None,
            }),
        }
    }

    narrowing_ints!();

    /// A C `bool` (or an int tested for truth): any integer, non-zero is true.
    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match bits(self.0) {
            Some(b) => visitor.visit_bool(b != 0),
            None => self.deserialize_any(visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Value::String(s) => visitor.visit_enum(Enum(s, None)),
            Value::Object(m) if m.len() == 1 => {
                let Some((k, v)) = m.iter().next() else {
                    return Err(de::Error::custom("empty enum object"));
                };
                visitor.visit_enum(Enum(k, Some(v)))
            }
            _ => Err(de::Error::invalid_type(unexpected(self.0), &"an enum")),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_unit()
    }

    forward_to_deserialize_any! {
        i128 u128 f32 f64 char str string bytes byte_buf unit unit_struct seq tuple
        tuple_struct map struct identifier
    }
}

fn unexpected(v: &Value) -> de::Unexpected<'_> {
    match v {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::Number(_) => de::Unexpected::Other("number"),
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
    }
}

struct Seq<'de>(core::slice::Iter<'de, Value>);

impl<'de> SeqAccess<'de> for Seq<'de> {
    type Error = Error;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0
            .next()
            .map(|v| seed.deserialize(Narrowing(v)))
            .transpose()
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Obj<'de> {
    iter: serde_json::map::Iter<'de>,
    value: Option<&'de Value>,
}

impl<'de> MapAccess<'de> for Obj<'de> {
    type Error = Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.iter.next() {
            Some((k, v)) => {
                self.value = Some(v);
                seed.deserialize(Key(k)).map(Some)
            }
            None => Ok(None),
        }
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.value.take() {
            Some(v) => seed.deserialize(Narrowing(v)),
            None => Err(de::Error::custom("value without a key")),
        }
    }
    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

/// An object key: a string, or an integer written as one (`{"0": ...}` keyed by CPU).
struct Key<'de>(&'de str);

impl Key<'_> {
    fn int_bits(&self) -> Option<u64> {
        let s = self.0;
        s.parse::<u64>()
            .ok()
            .or_else(|| s.parse::<i64>().ok().map(|i| i as u64)) // C wraps
    }
}

impl<'de> de::Deserializer<'de> for Key<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        visitor.visit_borrowed_str(self.0)
    }

    narrowing_ints!();

    forward_to_deserialize_any! {
        bool i128 u128 f32 f64 char str string bytes byte_buf option unit unit_struct
        newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

struct Enum<'de>(&'de str, Option<&'de Value>);

impl<'de> EnumAccess<'de> for Enum<'de> {
    type Error = Error;
    type Variant = Variant<'de>;
    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Variant<'de>), Error> {
        let name: de::value::BorrowedStrDeserializer<'de, Error> =
            de::value::BorrowedStrDeserializer::new(self.0);
        Ok((seed.deserialize(name)?, Variant(self.1)))
    }
}

struct Variant<'de>(Option<&'de Value>);

impl<'de> VariantAccess<'de> for Variant<'de> {
    type Error = Error;
    fn unit_variant(self) -> Result<(), Error> {
        match self.0 {
            None | Some(Value::Null) => Ok(()),
            Some(v) => Err(de::Error::invalid_type(unexpected(v), &"a unit variant")),
        }
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        seed.deserialize(Narrowing(self.0.unwrap_or(&Value::Null)))
    }
    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        de::Deserializer::deserialize_any(Narrowing(self.0.unwrap_or(&Value::Null)), visitor)
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.0 {
            Some(v) => de::Deserializer::deserialize_any(Narrowing(v), visitor),
            None => visitor.visit_map(de::value::MapDeserializer::<_, Error>::new(
                core::iter::empty::<((), ())>(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;
    use std::string::ToString;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Widths {
        a: u32,
        b: i32,
        c: u8,
        d: u64,
        e: i64,
        f: bool,
        g: Option<u32>,
        h: heapless::Vec<u32, 2>,
    }

    fn read(v: &Value) -> Result<Widths, Error> {
        Widths::deserialize(Narrowing(v))
    }

    #[test]
    fn integers_narrow_as_c_converts_them() {
        let v = json!({
            "a": 4_294_968_750u64, "b": 0xFFFF_FFFFu64, "c": 258, "d": -1, "e": u64::MAX,
            "f": 2, "g": 4_294_967_296u64, "h": [u64::MAX, 1]
        });
        assert_eq!(
            read(&v).unwrap(),
            Widths {
                a: 1454, // next_freq-00060's raw frequency kept in an unsigned int
                b: -1,
                c: 2,
                d: u64::MAX,
                e: -1,
                f: true,
                g: Some(0),
                h: heapless::Vec::from_slice(&[u32::MAX, 1]).unwrap(),
            }
        );
    }

    #[test]
    fn non_integers_are_still_refused() {
        let v = json!({"a": 1.5, "b": 0, "c": 0, "d": 0, "e": 0, "f": 0, "g": null, "h": []});
        assert!(read(&v).unwrap_err().to_string().contains("floating point"));
        let v = json!({"a": "1", "b": 0, "c": 0, "d": 0, "e": 0, "f": 0, "g": null, "h": []});
        assert!(read(&v).is_err());
    }
}
