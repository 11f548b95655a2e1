//! Where each tool result sits in a request body's bytes, and splicing new results in.
//!
//! The proxy never re-serialises a body: it finds the byte range of each tool result's
//! content value (Anthropic `tool_result` `content`, Chat Completions `role: "tool"`
//! `content`, Responses `function_call_output` `output`), rewrites only those values,
//! and copies every other byte from the client's body. String escapes, number
//! spellings, key order and whitespace outside a rewritten result stay the client's.
//!
//! One scan of the body finds them all: the request is read into small borrowed
//! structs (only the keys that locate a result or name its tool; every other value is
//! skipped, not built), and each content value is a borrowed [`RawValue`]: a
//! `&RawValue` deserialised from a `&str` is a slice of that `&str`, so its offset is a
//! pointer difference.

use crate::rewrite::Api;
use serde::de::{Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::HashMap;
use std::marker::PhantomData;
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

/// What one scan of a body found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scan {
    /// Byte range of the `messages` (or `input`) array, half-open.
    pub list: Range<usize>,
    /// The tool results, in body order.
    pub spans: Vec<ResultSpan>,
}

fn offset(text: &str, raw: &RawValue) -> Range<usize> {
    let start = raw.get().as_ptr() as usize - text.as_ptr() as usize;
    start..start + raw.get().len()
}

type Str<'a> = Option<Cow<'a, str>>;

#[derive(Deserialize)]
struct Top<'a> {
    #[serde(borrow)]
    messages: Option<&'a RawValue>,
    #[serde(borrow)]
    input: Option<&'a RawValue>,
}

/// An Anthropic message: only its `content` blocks matter.
#[derive(Deserialize)]
struct AMsg<'a> {
    #[serde(borrow)]
    content: Option<Blocks<'a>>,
}

impl<'a> AMsg<'a> {
    fn blocks(&self) -> &[ABlock<'a>] {
        self.content.as_ref().map_or(&[], |b| &b.0)
    }
}

/// A message's `content`: a list of blocks, or anything else (a string: no blocks).
struct Blocks<'a>(Vec<ABlock<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for Blocks<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Blocks<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string or a list of content blocks")
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Blocks(Vec::new()))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Blocks(Vec::new()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut v = Vec::new();
                while let Some(b) = seq.next_element::<ABlock<'a>>()? {
                    v.push(b);
                }
                Ok(Blocks(v))
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

#[derive(Deserialize)]
struct ABlock<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(borrow)]
    id: Str<'a>,
    #[serde(borrow)]
    name: Str<'a>,
    #[serde(borrow)]
    tool_use_id: Str<'a>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct CMsg<'a> {
    #[serde(borrow)]
    role: Str<'a>,
    #[serde(borrow)]
    content: Option<&'a RawValue>,
    #[serde(borrow)]
    tool_call_id: Str<'a>,
    #[serde(borrow)]
    tool_calls: Option<Vec<CCall<'a>>>,
}

#[derive(Deserialize)]
struct CCall<'a> {
    #[serde(borrow)]
    id: Str<'a>,
    #[serde(borrow)]
    function: Option<CFn<'a>>,
}

#[derive(Deserialize)]
struct CFn<'a> {
    #[serde(borrow)]
    name: Str<'a>,
}

#[derive(Deserialize)]
struct RItem<'a> {
    #[serde(rename = "type", borrow)]
    kind: Str<'a>,
    #[serde(borrow)]
    call_id: Str<'a>,
    #[serde(borrow)]
    name: Str<'a>,
    #[serde(borrow)]
    output: Option<&'a RawValue>,
}

/// The tool results of `text` read as `api`, in body order, and where its `messages`
/// (or `input`) array is. `None` when the body is not a JSON object whose `messages`
/// (or `input`) is an array of objects of that API's shape (a known key of the wrong
/// type, or a repeated one, counts as another shape): the caller then forwards the
/// body as it came.
pub(crate) fn scan(api: Api, text: &str) -> Option<Scan> {
    let top: Top<'_> = serde_json::from_str(text).ok()?;
    let raw = match api {
        Api::OpenAiResponses => top.input?,
        _ => top.messages?,
    };
    let list = offset(text, raw);
    let raw = raw.get();
    let mut names: HashMap<Cow<'_, str>, Cow<'_, str>> = HashMap::new();
    let mut spans = Vec::new();
    let tool = |names: &HashMap<Cow<'_, str>, Cow<'_, str>>, id: &Str<'_>| {
        id.as_ref()
            .and_then(|id| names.get(id))
            .map(|n| n.to_string())
    };
    match api {
        Api::AnthropicMessages | Api::AnthropicCountTokens => {
            let msgs: Vec<AMsg<'_>> = serde_json::from_str(raw).ok()?;
            for b in msgs.iter().flat_map(AMsg::blocks) {
                if b.kind.as_deref() == Some("tool_use") {
                    if let (Some(id), Some(name)) = (&b.id, &b.name) {
                        names.insert(id.clone(), name.clone());
                    }
                }
            }
            for (i, m) in msgs.iter().enumerate() {
                for (j, b) in m.blocks().iter().enumerate() {
                    if b.kind.as_deref() != Some("tool_result") {
                        continue;
                    }
                    if let Some(c) = b.content {
                        spans.push(ResultSpan {
                            path: (i, j),
                            range: offset(text, c),
                            tool: tool(&names, &b.tool_use_id),
                        });
                    }
                }
            }
        }
        Api::OpenAiChat => {
            let msgs: Vec<CMsg<'_>> = serde_json::from_str(raw).ok()?;
            for call in msgs.iter().filter_map(|m| m.tool_calls.as_ref()).flatten() {
                let name = call.function.as_ref().and_then(|f| f.name.as_ref());
                if let (Some(id), Some(name)) = (&call.id, name) {
                    names.insert(id.clone(), name.clone());
                }
            }
            for (i, m) in msgs.iter().enumerate() {
                if m.role.as_deref() != Some("tool") {
                    continue;
                }
                if let Some(c) = m.content {
                    spans.push(ResultSpan {
                        path: (i, 0),
                        range: offset(text, c),
                        tool: tool(&names, &m.tool_call_id),
                    });
                }
            }
        }
        Api::OpenAiResponses => {
            let items: Vec<RItem<'_>> = serde_json::from_str(raw).ok()?;
            for m in &items {
                if matches!(
                    m.kind.as_deref(),
                    Some("function_call" | "custom_tool_call")
                ) {
                    if let (Some(id), Some(name)) = (&m.call_id, &m.name) {
                        names.insert(id.clone(), name.clone());
                    }
                }
            }
            for (i, m) in items.iter().enumerate() {
                if !matches!(
                    m.kind.as_deref(),
                    Some("function_call_output" | "custom_tool_call_output")
                ) {
                    continue;
                }
                if let Some(c) = m.output {
                    spans.push(ResultSpan {
                        path: (i, 0),
                        range: offset(text, c),
                        tool: tool(&names, &m.call_id),
                    });
                }
            }
        }
    }
    Some(Scan { list, spans })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_cover_exactly_the_content_values() {
        let body = r#"{ "model":"m", "messages" : [ {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]},
            {"role":"user","content":[ {"type":"tool_result","tool_use_id":"t1", "content" :  "a\u00e9b" } ]} ] }"#;
        let scan = scan(Api::AnthropicMessages, body).unwrap();
        assert_eq!(&body[scan.list.clone()][..3], "[ {");
        let s = scan.spans;
        assert_eq!(s.len(), 1);
        assert_eq!(&body[s[0].range.clone()], r#""a\u00e9b""#);
        assert_eq!(s[0].path, (1, 0));
        assert_eq!(s[0].tool.as_deref(), Some("Bash"));
    }

    #[test]
    fn chat_and_responses_results_are_found_with_their_tool_names() {
        let chat = r#"{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"shell","arguments":"{}"}}]},
            {"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"x"}]},{"role":"user","content":"ok"}]}"#;
        let s = scan(Api::OpenAiChat, chat).unwrap().spans;
        assert_eq!(s.len(), 1);
        assert_eq!(&chat[s[0].range.clone()], r#"[{"type":"text","text":"x"}]"#);
        assert_eq!((s[0].path, s[0].tool.as_deref()), ((1, 0), Some("shell")));
        let resp = r#"{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]},
            {"type":"function_call","call_id":"k","name":"exec_command","arguments":"{}"},
            {"type":"function_call_output","call_id":"k","output":"done\\n"}]}"#;
        let s = scan(Api::OpenAiResponses, resp).unwrap().spans;
        assert_eq!(s.len(), 1);
        assert_eq!(&resp[s[0].range.clone()], r#""done\\n""#);
        assert_eq!(
            (s[0].path, s[0].tool.as_deref()),
            ((2, 0), Some("exec_command"))
        );
    }

    #[test]
    fn another_shape_is_not_scanned() {
        for (api, body) in [
            (Api::AnthropicMessages, r#"{"messages":{}}"#),
            (Api::AnthropicMessages, r#"{"messages":[1]}"#),
            (Api::AnthropicMessages, r#"{"messages":[],"messages":[]}"#),
            (Api::AnthropicMessages, r#"[{"role":"user"}]"#),
            (Api::OpenAiChat, r#"{"messages":[{"role":7}]}"#),
            (Api::OpenAiResponses, r#"{"input":"just text"}"#),
            (Api::OpenAiResponses, r#"{"messages":[]}"#),
        ] {
            assert_eq!(scan(api, body), None, "{body}");
        }
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
