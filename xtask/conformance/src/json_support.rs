// SPDX-License-Identifier: GPL-2.0-only
//! Host-side glue between JSON fixture cases and typed drivers (feature `json`).

use std::string::{String, ToString};
use std::vec::Vec;

pub use serde_json::Value;

use crate::{Case, Sequence};

mod narrow;
pub use narrow::Narrowing;

/// A case as stream payloads: stateless (input, expected) or a sequence
/// (init, [(op, expected after)]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Encoded {
    /// postcard input and expected output.
    Case(Vec<u8>, Vec<u8>),
    /// postcard init and each (op, expected state).
    Seq(Vec<u8>, Vec<(Vec<u8>, Vec<u8>)>),
}

fn typed<T: serde::de::DeserializeOwned>(v: &Value, what: &str) -> Result<T, String> {
    // Integers narrow as the kernel oracle's C harness stored them (see `narrow`).
    T::deserialize(Narrowing(v)).map_err(|e| std::format!("{what}: {e}"))
}

/// `in.ops`; a sequence's typed Init reads the rest of `in` (e.g. `init`, `variant`).
fn ops(input: &Value) -> Result<&Vec<Value>, String> {
    input
        .get("ops")
        .and_then(Value::as_array)
        .ok_or_else(|| "in: missing field `ops`".to_string())
}

/// A fixture op `{"op": "name", ...fields}` in serde's externally tagged form
/// `{"name": {...fields}}`, so op enums are plain enums that postcard can carry too
/// (postcard cannot read internally tagged enums). Other values pass unchanged.
pub(crate) fn externally_tagged(op: &Value) -> Value {
    let Some(obj) = op.as_object() else {
        return op.clone();
    };
    let Some(Value::String(name)) = obj.get("op") else {
        return op.clone();
    };
    let fields: serde_json::Map<String, Value> = obj
        .iter()
        .filter(|(k, _)| k.as_str() != "op")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    serde_json::json!({ name.clone(): fields })
}

pub(crate) fn run_case<C: Case>(input: &Value, variant: &str) -> Result<Value, String> {
    let c: C = typed(input, "in")?;
    let out = c.run(variant).map_err(|e| std::format!("in: {e}"))?;
    serde_json::to_value(out).map_err(|e| e.to_string())
}

pub(crate) fn run_seq<S: Sequence>(input: &Value, variant: &str) -> Result<Value, String> {
    let init: S::Init = typed(input, "in")?;
    let mut state = S::start(&init, variant).map_err(|e| std::format!("in: {e}"))?;
    let mut after = Vec::new();
    for (i, op) in ops(input)?.iter().enumerate() {
        let what = std::format!("op {i}");
        let op: S::Op = typed(&externally_tagged(op), &what)?;
        let a = S::apply(&mut state, &op).map_err(|e| std::format!("{what}: {e}"))?;
        after.push(serde_json::to_value(a).map_err(|e| e.to_string())?);
    }
    Ok(serde_json::json!({ "after": after }))
}

fn bytes<T: serde::Serialize>(v: &T) -> Result<Vec<u8>, String> {
    postcard::to_stdvec(v).map_err(|e| e.to_string())
}

pub(crate) fn encode_case<C: Case>(input: &Value, out: &Value) -> Result<Encoded, String> {
    let c: C = typed(input, "in")?;
    let want: C::Out = typed(out, "out")?;
    Ok(Encoded::Case(bytes(&c)?, bytes(&want)?))
}

pub(crate) fn encode_seq<S: Sequence>(input: &Value, out: &Value) -> Result<Encoded, String> {
    let init: S::Init = typed(input, "in")?;
    let after = out
        .get("after")
        .and_then(Value::as_array)
        .ok_or_else(|| "out: missing field `after`".to_string())?;
    let ops = ops(input)?;
    if ops.len() != after.len() {
        return Err(std::format!(
            "{} ops but {} states in out.after",
            ops.len(),
            after.len()
        ));
    }
    let mut pairs = Vec::with_capacity(ops.len());
    for (i, (op, a)) in ops.iter().zip(after).enumerate() {
        let op: S::Op = typed(&externally_tagged(op), &std::format!("op {i}"))?;
        let a: S::After = typed(a, &std::format!("out.after[{i}]"))?;
        pairs.push((bytes(&op)?, bytes(&a)?));
    }
    Ok(Encoded::Seq(bytes(&init)?, pairs))
}
