//! The string fields of a JSON tool result, compressed one by one: what a host does
//! with a JSON result whose keys and numbers the model must see as they were
//! (the Hermes plugin's `transform_tool_result`).

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::fmt;

/// Strings shorter than this (in characters) with no `\r`, ESC or backspace are left
/// alone: no rule could shorten them.
pub const MIN_FIELD_CHARS: usize = 64;

/// What [`compress_json_fields`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fields {
    /// `text` is not one JSON value.
    NotJson,
    /// No field changed.
    Unchanged,
    /// The document with its changed fields, written as Python's `json.dumps(…,
    /// ensure_ascii=False)` writes it (`", "` and `": "` between items).
    Changed(String),
}

/// Compresses the string values of the JSON document `text` with `compress` (which
/// answers `None` for a string it leaves as it is). Strings under a key in
/// `keep_keys` (and in arrays under such a key) are names, not output, and are kept;
/// so are strings shorter than [`MIN_FIELD_CHARS`] characters without `\r`, ESC or
/// backspace. Keys, their order, numbers (their exact text), booleans and nulls are
/// kept; a duplicate key keeps its first position and its last value.
pub fn compress_json_fields(
    text: &str,
    keep_keys: &[&str],
    compress: &mut dyn FnMut(&str) -> Option<String>,
) -> Fields {
    let Ok(root) = serde_json::from_str::<&RawValue>(text) else {
        return Fields::NotJson;
    };
    let mut out = String::with_capacity(text.len());
    match walk(root, None, keep_keys, compress, &mut out) {
        Ok(true) => Fields::Changed(out),
        Ok(false) => Fields::Unchanged,
        Err(_) => Fields::NotJson,
    }
}

/// Writes `v` to `out`; `Ok(true)` when a string inside changed.
fn walk(
    v: &RawValue,
    key: Option<&str>,
    keep: &[&str],
    compress: &mut dyn FnMut(&str) -> Option<String>,
    out: &mut String,
) -> serde_json::Result<bool> {
    let raw = v.get().trim();
    match raw.as_bytes().first() {
        Some(b'{') => {
            let Entries(entries) = serde_json::from_str(raw)?;
            let mut changed = false;
            out.push('{');
            for (i, (k, val)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&serde_json::to_string(k)?);
                out.push_str(": ");
                changed |= walk(val, Some(k), keep, compress, out)?;
            }
            out.push('}');
            Ok(changed)
        }
        Some(b'[') => {
            let items: Vec<&RawValue> = serde_json::from_str(raw)?;
            let mut changed = false;
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                changed |= walk(item, key, keep, compress, out)?;
            }
            out.push(']');
            Ok(changed)
        }
        Some(b'"') => {
            let s: String = serde_json::from_str(raw)?;
            let skip = key.is_some_and(|k| keep.contains(&k))
                || (s.chars().count() < MIN_FIELD_CHARS && !s.contains(['\r', '\x1b', '\x08']));
            let new = if skip { None } else { compress(&s) };
            out.push_str(&serde_json::to_string(new.as_deref().unwrap_or(&s))?);
            Ok(new.is_some())
        }
        // Numbers, booleans and null: their exact text.
        _ => {
            out.push_str(raw);
            Ok(false)
        }
    }
}

/// An object's entries in order; a duplicate key keeps its first position and takes
/// the last value (as Python's `json.loads` and serde_json's ordered map do).
struct Entries<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for Entries<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Entries<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut m: M) -> Result<Self::Value, M::Error> {
                let mut v: Vec<(String, &'a RawValue)> = Vec::new();
                while let Some((k, val)) = m.next_entry::<String, &'a RawValue>()? {
                    match v.iter_mut().find(|(x, _)| *x == k) {
                        Some(slot) => slot.1 = val,
                        None => v.push((k, val)),
                    }
                }
                Ok(Entries(v))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upper(s: &str) -> Option<String> {
        s.starts_with("long").then(|| "SHORT".to_string())
    }

    #[test]
    fn fields_change_and_everything_else_keeps_its_text() {
        let long = format!("long {}", "x".repeat(80));
        let doc = format!(
            r#"{{"output":"{long}","exit_code":7,"x":0.10000000000000000555,"big":1E400,"id":"{long}","list":["{long}",true,null],"é":"ok","output":"{long}"}}"#
        );
        let got = compress_json_fields(&doc, &["id"], &mut upper);
        assert_eq!(
            got,
            Fields::Changed(format!(
                r#"{{"output": "SHORT", "exit_code": 7, "x": 0.10000000000000000555, "big": 1E400, "id": "{long}", "list": ["SHORT", true, null], "é": "ok"}}"#
            ))
        );
        // Strings under a kept key stay, in arrays too; short strings are not asked.
        let got = compress_json_fields(
            &format!(r#"{{"path":["{long}"],"s":"long but short"}}"#),
            &["path"],
            &mut upper,
        );
        assert_eq!(got, Fields::Unchanged);
        // Control characters make a short string worth asking; escapes are JSON's.
        let mut seen = Vec::new();
        let got = compress_json_fields(r#"["a\rb\u001b[0m"]"#, &[], &mut |s: &str| {
            seen.push(s.to_string());
            Some("c\n\u{1}".into())
        });
        assert_eq!(seen, ["a\rb\x1b[0m"]);
        assert_eq!(got, Fields::Changed(r#"["c\n\u0001"]"#.into()));
        assert_eq!(
            compress_json_fields("not json", &[], &mut upper),
            Fields::NotJson
        );
        assert_eq!(
            compress_json_fields("{} {}", &[], &mut upper),
            Fields::NotJson
        );
    }
}
