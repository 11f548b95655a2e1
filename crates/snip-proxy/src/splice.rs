//! Where each tool result sits in a request body's bytes, and splicing new results in.
//!
//! The proxy never re-serialises a body: it finds the byte range of each tool result's
//! content value (Anthropic `tool_result` `content`, Chat Completions `role: "tool"`
//! `content`, Responses `function_call_output` `output`), rewrites only those values,
//! and copies every other byte from the client's body. String escapes, number
//! spellings, key order and whitespace outside a rewritten result stay the client's.
//!
//! Ranges come from `serde_json`'s borrowed [`RawValue`]s: a `&RawValue` deserialised
//! from a `&str` is a slice of that `&str`, so its offset is a pointer difference.

use crate::rewrite::Api;
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::HashMap;
use std::ops::Range;

/// One tool result's content value in a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResultSpan {
    /// Where it is: (index in `messages`/`input`, index of the block in the message's
    /// `content`, or 0 for Chat and Responses).
    pub path: (usize, usize),
    /// Byte range of the content value (`"…"`, `[…]`), half-open.
    pub range: Range<usize>,
    /// The name of the tool call it answers, when the request names it.
    pub tool: Option<String>,
}

type Obj<'a> = HashMap<String, &'a RawValue>;

fn offset(text: &str, raw: &RawValue) -> Range<usize> {
    let start = raw.get().as_ptr() as usize - text.as_ptr() as usize;
    start..start + raw.get().len()
}

fn str_of(o: &Obj<'_>, key: &str) -> Option<String> {
    serde_json::from_str::<String>(o.get(key)?.get()).ok()
}

/// The tool results of `text` read as `api`, in body order. `None` when the body is not
/// a JSON object whose `messages` (or `input`) is an array; entries of another shape are
/// skipped, as the rewrite skips them.
pub(crate) fn result_spans(api: Api, text: &str) -> Option<Vec<ResultSpan>> {
    let top: Obj<'_> = serde_json::from_str(text).ok()?;
    let key = match api {
        Api::OpenAiResponses => "input",
        _ => "messages",
    };
    let list: Vec<&RawValue> = serde_json::from_str(top.get(key)?.get()).ok()?;
    let entries: Vec<Option<Obj<'_>>> = list
        .iter()
        .map(|r| serde_json::from_str::<Obj<'_>>(r.get()).ok())
        .collect();
    let mut names: HashMap<String, String> = HashMap::new();
    let mut out = Vec::new();
    match api {
        Api::AnthropicMessages | Api::AnthropicCountTokens => {
            let blocks: Vec<Vec<Obj<'_>>> = entries
                .iter()
                .map(|m| {
                    m.as_ref()
                        .and_then(|m| m.get("content"))
                        .and_then(|c| serde_json::from_str::<Vec<&RawValue>>(c.get()).ok())
                        .map(|bs| {
                            bs.iter()
                                .map(|b| {
                                    serde_json::from_str::<Obj<'_>>(b.get()).unwrap_or_default()
                                })
                                .collect()
                        })
                        .unwrap_or_default()
                })
                .collect();
            for b in blocks.iter().flatten() {
                if str_of(b, "type").as_deref() == Some("tool_use") {
                    if let (Some(id), Some(name)) = (str_of(b, "id"), str_of(b, "name")) {
                        names.insert(id, name);
                    }
                }
            }
            for (i, bs) in blocks.iter().enumerate() {
                for (j, b) in bs.iter().enumerate() {
                    if str_of(b, "type").as_deref() != Some("tool_result") {
                        continue;
                    }
                    if let Some(c) = b.get("content") {
                        let tool = str_of(b, "tool_use_id").and_then(|id| names.get(&id).cloned());
                        out.push(ResultSpan {
                            path: (i, j),
                            range: offset(text, c),
                            tool,
                        });
                    }
                }
            }
        }
        Api::OpenAiChat => {
            for m in entries.iter().flatten() {
                let Some(calls) = m
                    .get("tool_calls")
                    .and_then(|c| serde_json::from_str::<Vec<Value>>(c.get()).ok())
                else {
                    continue;
                };
                for call in calls {
                    if let (Some(id), Some(name)) = (
                        call.get("id").and_then(Value::as_str),
                        call.pointer("/function/name").and_then(Value::as_str),
                    ) {
                        names.insert(id.to_string(), name.to_string());
                    }
                }
            }
            for (i, m) in entries.iter().enumerate() {
                let Some(m) = m else { continue };
                if str_of(m, "role").as_deref() != Some("tool") {
                    continue;
                }
                if let Some(c) = m.get("content") {
                    let tool = str_of(m, "tool_call_id").and_then(|id| names.get(&id).cloned());
                    out.push(ResultSpan {
                        path: (i, 0),
                        range: offset(text, c),
                        tool,
                    });
                }
            }
        }
        Api::OpenAiResponses => {
            for m in entries.iter().flatten() {
                if matches!(
                    str_of(m, "type").as_deref(),
                    Some("function_call" | "custom_tool_call")
                ) {
                    if let (Some(id), Some(name)) = (str_of(m, "call_id"), str_of(m, "name")) {
                        names.insert(id, name);
                    }
                }
            }
            for (i, m) in entries.iter().enumerate() {
                let Some(m) = m else { continue };
                if !matches!(
                    str_of(m, "type").as_deref(),
                    Some("function_call_output" | "custom_tool_call_output")
                ) {
                    continue;
                }
                if let Some(c) = m.get("output") {
                    let tool = str_of(m, "call_id").and_then(|id| names.get(&id).cloned());
                    out.push(ResultSpan {
                        path: (i, 0),
                        range: offset(text, c),
                        tool,
                    });
                }
            }
        }
    }
    Some(out)
}

/// `body` with each `(range, bytes)` edit applied; edits are sorted and do not
/// overlap. Every byte outside the ranges is copied from `body`.
pub(crate) fn apply(body: &[u8], edits: &[(Range<usize>, Vec<u8>)]) -> Vec<u8> {
    let grown: usize = edits.iter().map(|(_, b)| b.len()).sum();
    let mut out = Vec::with_capacity(body.len() + grown);
    let mut at = 0;
    for (r, bytes) in edits {
        out.extend_from_slice(&body[at..r.start]);
        out.extend_from_slice(bytes);
        at = r.end;
    }
    out.extend_from_slice(&body[at..]);
    out
}

/// The edits that carry `new`'s changed results into `old`: for each result of `old`
/// whose content value reads differently in `new` (compared as JSON values), `new`'s
/// bytes for it. `None` when the two bodies do not have the same results in the same
/// places (the caller then does not use `new`).
pub(crate) fn carry_over(api: Api, old: &str, new: &str) -> Option<Vec<(Range<usize>, Vec<u8>)>> {
    let a = result_spans(api, old)?;
    let b = result_spans(api, new)?;
    if a.len() != b.len() || a.iter().zip(&b).any(|(x, y)| x.path != y.path) {
        return None;
    }
    let mut edits = Vec::new();
    for (x, y) in a.iter().zip(&b) {
        let (xs, ys) = (&old[x.range.clone()], &new[y.range.clone()]);
        if xs == ys {
            continue;
        }
        let xv: Value = serde_json::from_str(xs).ok()?;
        let yv: Value = serde_json::from_str(ys).ok()?;
        if xv != yv {
            edits.push((x.range.clone(), ys.as_bytes().to_vec()));
        }
    }
    Some(edits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_cover_exactly_the_content_values() {
        let body = r#"{ "model":"m", "messages" : [ {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]},
            {"role":"user","content":[ {"type":"tool_result","tool_use_id":"t1", "content" :  "a\u00e9b" } ]} ] }"#;
        let s = result_spans(Api::AnthropicMessages, body).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(&body[s[0].range.clone()], r#""a\u00e9b""#);
        assert_eq!(s[0].path, (1, 0));
        assert_eq!(s[0].tool.as_deref(), Some("Bash"));
    }

    #[test]
    fn apply_copies_every_byte_outside_the_edits() {
        let out = apply(
            b"0123456789",
            &[(1..3, b"ab".to_vec()), (5..6, b"XYZ".to_vec())],
        );
        assert_eq!(out, b"0ab34XYZ6789");
    }
}
