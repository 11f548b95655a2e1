//! Scoping a request to one value of a JSON (or JSON Lines) original by JSON pointer.

use std::collections::BTreeMap;

/// Resolves a JSON pointer in a JSON (or JSON Lines) original to the bytes it scopes:
/// a string's decoded UTF-8 value, or any other value's exact text.
pub(super) fn resolve_field(all: &[u8], pointer: &str) -> Result<Vec<u8>, String> {
    if !(pointer.is_empty() || pointer.starts_with('/')) {
        return Err(format!(
            "field {pointer:?} is not a JSON pointer: it must be empty or start with '/', e.g. \"/items/0/text\""
        ));
    }
    let text = std::str::from_utf8(all).map_err(|_| {
        "field needs a JSON original, and this one is not UTF-8 text; drop field".to_string()
    })?;
    let mut tokens: Vec<String> = if pointer.is_empty() {
        Vec::new()
    } else {
        pointer[1..]
            .split('/')
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect()
    };
    let mut cur: &serde_json::value::RawValue = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(whole_err) => {
            // JSON Lines: the first token is the 0-based line index.
            let lines: Vec<&str> = text.split('\n').collect();
            let non_empty = lines.iter().filter(|l| !l.trim().is_empty()).count();
            // JSON Lines only when the first line is a JSON value: plain text is not.
            let first_is_json = lines
                .iter()
                .find(|l| !l.trim().is_empty())
                .is_some_and(|l| {
                    serde_json::from_str::<&serde_json::value::RawValue>(l.trim_end_matches('\r'))
                        .is_ok()
                });
            if non_empty < 2 || tokens.is_empty() || !first_is_json {
                return Err(format!("field needs a JSON original, and this one does not parse ({whole_err}); drop field"));
            }
            let first = tokens.remove(0);
            let i: usize = first
                .parse()
                .map_err(|_| format!("this original is JSON Lines: the pointer's first token must be a 0-based line index, not {first:?}"))?;
            let line = lines.get(i).ok_or_else(|| {
                format!(
                    "JSON Lines original has {} lines; line index {i} is past the end",
                    lines.len()
                )
            })?;
            serde_json::from_str(line.trim_end_matches('\r'))
                .map_err(|e| format!("line index {i} is not a JSON value ({e})"))?
        }
    };
    for (k, tok) in tokens.iter().enumerate() {
        let at = || {
            let p: Vec<&str> = pointer.split('/').take(k + 2).collect();
            p.join("/")
        };
        let t = cur.get().trim_start();
        if t.starts_with('{') {
            let map: BTreeMap<String, &serde_json::value::RawValue> =
                serde_json::from_str(cur.get())
                    .map_err(|e| format!("cannot read object at {}: {e}", at()))?;
            cur = map
                .get(tok.as_str())
                .copied()
                .ok_or_else(|| format!("field {} does not exist (no key {tok:?})", at()))?;
        } else if t.starts_with('[') {
            let arr: Vec<&serde_json::value::RawValue> = serde_json::from_str(cur.get())
                .map_err(|e| format!("cannot read array at {}: {e}", at()))?;
            let i: usize = tok
                .parse()
                .ok()
                .filter(|_| tok == "0" || !tok.starts_with('0'))
                .ok_or_else(|| format!("field {}: {tok:?} is not an array index", at()))?;
            cur = arr.get(i).copied().ok_or_else(|| {
                format!(
                    "field {}: index {i} is past the end ({} items)",
                    at(),
                    arr.len()
                )
            })?;
        } else {
            return Err(format!("field {}: cannot descend into a scalar", at()));
        }
    }
    let raw = cur.get();
    if raw.trim_start().starts_with('"') {
        let s: String = serde_json::from_str(raw)
            .map_err(|e| format!("field {pointer:?}: cannot decode string ({e})"))?;
        Ok(s.into_bytes())
    } else {
        Ok(raw.as_bytes().to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_resolve() {
        let doc = br#"{"a":[{"b":"x\ny\u00e9"}],"n":{"k":[1, 2.50]},"a/b":"s","m~n":"t"}"#;
        assert_eq!(resolve_field(doc, "/a/0/b").unwrap(), "x\nyé".as_bytes());
        assert_eq!(resolve_field(doc, "/n/k").unwrap(), b"[1, 2.50]");
        assert_eq!(resolve_field(doc, "/a~1b").unwrap(), b"s");
        assert_eq!(resolve_field(doc, "/m~0n").unwrap(), b"t");
        assert!(resolve_field(doc, "/a/01").is_err());
        assert!(resolve_field(doc, "/a/1").is_err());
        assert!(resolve_field(doc, "/zz").is_err());
        assert!(resolve_field(doc, "a").is_err());
        assert!(resolve_field(b"not json", "/a").is_err());
        let jsonl = b"{\"m\":\"one\"}\n{\"m\":\"two\"}\n";
        assert_eq!(resolve_field(jsonl, "/1/m").unwrap(), b"two");
        // A plain multi-line log is not JSON Lines: the error says it does not parse.
        let e = resolve_field(b"line one\nline two\n", "/a").unwrap_err();
        assert!(e.contains("does not parse"), "{e}");
    }
}
