//! Reading tool results out of each request format and writing summaries back.
//!
//! Every format is read into the same list of [`Slot`]s, oldest first; only a slot's
//! content value (Responses: a `function_call_output` item's `output`) is ever
//! replaced.

use crate::summary::tool_label;
use crate::{Format, Skip};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// One tool result of a request.
#[derive(Debug, Clone)]
pub(crate) struct Slot {
    /// Index of its message in `messages` (Responses: of its item in `input`).
    pub msg: usize,
    /// Index of its `tool_result` block in the message's content (Anthropic).
    block: Option<usize>,
    /// Its text, when the content is a string or a non-empty list of text blocks
    /// (joined with `\n`); `None` for any other content.
    pub text: Option<String>,
    /// Whether the content is a list of blocks (the summary then goes in one text
    /// block: `text`, or `input_text` for Responses).
    list: bool,
    /// The `cache_control` of the last content block that had one (kept on the
    /// summary's block).
    cache_control: Option<Value>,
    /// The tool's label: name and main argument of the call it answers.
    pub tool: String,
    /// The host's error flag (`is_error`), when it has one.
    pub is_error: Option<bool>,
    /// The call it answers: the tool's name and arguments, when found.
    pub call: crate::digest::Call,
}

/// Finds the format from the messages' tool shapes.
pub(crate) fn detect(list: &[Value]) -> Result<Format, Skip> {
    let mut openai = false;
    let mut anthropic = false;
    let mut responses = false;
    for m in list {
        let Some(obj) = m.as_object() else { continue };
        responses |= matches!(
            obj.get("type").and_then(Value::as_str),
            Some(
                "function_call"
                    | "function_call_output"
                    | "custom_tool_call"
                    | "custom_tool_call_output"
            )
        );
        if matches!(obj.get("role").and_then(Value::as_str), Some("tool"))
            || obj.contains_key("tool_calls")
        {
            openai = true;
        }
        if let Some(Value::Array(blocks)) = obj.get("content") {
            anthropic |= blocks.iter().any(|b| {
                matches!(
                    b.get("type").and_then(Value::as_str),
                    Some("tool_use" | "tool_result")
                )
            });
        }
    }
    match (openai, anthropic, responses) {
        (true, false, false) => Ok(Format::OpenAi),
        (false, true, false) => Ok(Format::Anthropic),
        (false, false, true) => Ok(Format::Responses),
        (false, false, false) => Err(Skip::NoToolResults),
        _ => Err(Skip::Ambiguous),
    }
}

/// Reads every tool result of `list` as `format`, oldest first.
pub(crate) fn scan(format: Format, list: &[Value]) -> Result<Vec<Slot>, Skip> {
    match format {
        Format::OpenAi => scan_openai(list),
        Format::Anthropic => scan_anthropic(list),
        Format::Responses => scan_responses(list),
    }
}

/// Whether `m` is something the model produced (an assistant message; for Responses
/// also a tool call or a reasoning item): a run of such entries is one API call's
/// answer, so the request of that call is every entry before the run.
pub(crate) fn is_model_output(format: Format, m: &Value) -> bool {
    let role = m.get("role").and_then(Value::as_str);
    match format {
        Format::OpenAi | Format::Anthropic => role == Some("assistant"),
        Format::Responses => match m.get("type").and_then(Value::as_str) {
            None | Some("message") => role == Some("assistant"),
            Some(t) => matches!(
                t,
                "function_call"
                    | "custom_tool_call"
                    | "reasoning"
                    | "local_shell_call"
                    | "web_search_call"
                    | "file_search_call"
                    | "computer_call"
                    | "image_generation_call"
                    | "code_interpreter_call"
                    | "mcp_call"
            ),
        },
    }
}

fn malformed(i: usize, why: &str) -> Skip {
    Skip::Malformed(format!("message {i}: {why}"))
}

fn role_of(i: usize, m: &Value) -> Result<(&Map<String, Value>, &str), Skip> {
    let obj = m.as_object().ok_or_else(|| malformed(i, "not an object"))?;
    let role = obj
        .get("role")
        .and_then(Value::as_str)
        .ok_or_else(|| malformed(i, "no string role"))?;
    Ok((obj, role))
}

fn scan_openai(list: &[Value]) -> Result<Vec<Slot>, Skip> {
    // Tool call id → (name, arguments), from assistant `tool_calls`.
    let mut calls: HashMap<&str, (Option<&str>, Option<Value>)> = HashMap::new();
    let mut slots = Vec::new();
    for (i, m) in list.iter().enumerate() {
        let (obj, role) = role_of(i, m)?;
        if let Some(tc) = obj.get("tool_calls").filter(|v| !v.is_null()) {
            let tc = tc
                .as_array()
                .ok_or_else(|| malformed(i, "tool_calls is not an array"))?;
            for call in tc {
                let call = call
                    .as_object()
                    .ok_or_else(|| malformed(i, "a tool call is not an object"))?;
                let Some(id) = call.get("id").and_then(Value::as_str) else {
                    continue;
                };
                let f = call.get("function");
                let name = f.and_then(|f| f.get("name")).and_then(Value::as_str);
                let args = f.and_then(|f| f.get("arguments")).map(|a| match a {
                    Value::String(s) => {
                        serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
                    }
                    other => other.clone(),
                });
                calls.insert(id, (name, args));
            }
        }
        if role != "tool" {
            continue;
        }
        let id = obj
            .get("tool_call_id")
            .and_then(Value::as_str)
            .ok_or_else(|| malformed(i, "tool message without a string tool_call_id"))?;
        slots.push(call_result_slot(i, &calls, id, obj.get("content"), "text"));
    }
    Ok(slots)
}

fn scan_anthropic(list: &[Value]) -> Result<Vec<Slot>, Skip> {
    let mut calls: HashMap<&str, (Option<&str>, Option<&Value>)> = HashMap::new();
    let mut slots = Vec::new();
    for (i, m) in list.iter().enumerate() {
        let (obj, _role) = role_of(i, m)?;
        let blocks = match obj.get("content") {
            Some(Value::String(_)) => continue,
            Some(Value::Array(blocks)) => blocks,
            _ => return Err(malformed(i, "content is neither a string nor a list")),
        };
        for (j, b) in blocks.iter().enumerate() {
            let b = b
                .as_object()
                .ok_or_else(|| malformed(i, "a content block is not an object"))?;
            let ty = b
                .get("type")
                .and_then(Value::as_str)
                .ok_or_else(|| malformed(i, "a content block has no string type"))?;
            match ty {
                "tool_use" => {
                    if let Some(id) = b.get("id").and_then(Value::as_str) {
                        let name = b.get("name").and_then(Value::as_str);
                        calls.insert(id, (name, b.get("input")));
                    }
                }
                "tool_result" => {
                    let id = b
                        .get("tool_use_id")
                        .and_then(Value::as_str)
                        .ok_or_else(|| malformed(i, "tool_result without a string tool_use_id"))?;
                    let (name, input) = calls.get(id).copied().unwrap_or((None, None));
                    let (text, list, cache_control) = match b.get("content") {
                        None => (None, false, None),
                        c => content_text(c, "text"),
                    };
                    slots.push(Slot {
                        msg: i,
                        block: Some(j),
                        text,
                        list,
                        cache_control,
                        tool: tool_label(name, input),
                        // The API's default is `false`: a host flags failures.
                        is_error: Some(b.get("is_error").and_then(Value::as_bool).unwrap_or(false)),
                        call: crate::digest::Call::new(name, input),
                    });
                }
                _ => {}
            }
        }
    }
    Ok(slots)
}

/// Reads a Responses request's `input` items: `function_call` and `custom_tool_call`
/// items give the tool's name and arguments by `call_id`; each `function_call_output`
/// is a slot (its `output`: a string, or a list of `input_text` parts). Other items
/// (messages, reasoning, `custom_tool_call_output`, …) are never slots and are left
/// as they are.
fn scan_responses(list: &[Value]) -> Result<Vec<Slot>, Skip> {
    let mut calls: HashMap<&str, (Option<&str>, Option<Value>)> = HashMap::new();
    let mut slots = Vec::new();
    for (i, m) in list.iter().enumerate() {
        let obj = m.as_object().ok_or_else(|| malformed(i, "not an object"))?;
        let ty = match obj.get("type") {
            None => continue,
            Some(Value::String(t)) => t.as_str(),
            Some(_) => return Err(malformed(i, "type is not a string")),
        };
        match ty {
            "function_call" | "custom_tool_call" => {
                let Some(id) = obj.get("call_id").and_then(Value::as_str) else {
                    continue;
                };
                let name = obj.get("name").and_then(Value::as_str);
                let args = match (obj.get("arguments"), obj.get("input")) {
                    (Some(Value::String(a)), _) => {
                        Some(serde_json::from_str(a).unwrap_or_else(|_| Value::String(a.clone())))
                    }
                    (Some(a), _) => Some(a.clone()),
                    // A custom tool's input is free text (Codex's `apply_patch`: the patch).
                    (None, Some(Value::String(input))) => {
                        Some(serde_json::json!({ "input": input }))
                    }
                    _ => None,
                };
                calls.insert(id, (name, args));
            }
            "function_call_output" => {
                let id = obj
                    .get("call_id")
                    .and_then(Value::as_str)
                    .ok_or_else(|| malformed(i, "function_call_output without a string call_id"))?;
                slots.push(call_result_slot(
                    i,
                    &calls,
                    id,
                    obj.get("output"),
                    "input_text",
                ));
            }
            _ => {}
        }
    }
    Ok(slots)
}

/// The text of a content value: a string, or a non-empty list of `text_type` blocks
/// joined with `\n` (then also the last block's `cache_control`). `None` for anything
/// else, and for a list with more than one `cache_control` (folding it into one block
/// would drop a breakpoint the host set).
/// The slot of message `i`, the result of the call `id` whose name and arguments
/// `calls` recorded (Chat Completions `tool` messages, Responses
/// `function_call_output` items: neither carries an error flag).
fn call_result_slot(
    i: usize,
    calls: &HashMap<&str, (Option<&str>, Option<Value>)>,
    id: &str,
    content: Option<&Value>,
    text_type: &str,
) -> Slot {
    let (name, args) = calls
        .get(id)
        .map(|(n, a)| (*n, a.as_ref()))
        .unwrap_or((None, None));
    let (text, list, cache_control) = content_text(content, text_type);
    Slot {
        msg: i,
        block: None,
        text,
        list,
        cache_control,
        tool: tool_label(name, args),
        is_error: None,
        call: crate::digest::Call::new(name, args),
    }
}

fn content_text(content: Option<&Value>, text_type: &str) -> (Option<String>, bool, Option<Value>) {
    match content {
        Some(Value::String(s)) => (Some(s.clone()), false, None),
        Some(Value::Array(parts)) if !parts.is_empty() => {
            let mut texts = Vec::with_capacity(parts.len());
            let mut cache_control = None;
            for p in parts {
                let is_text = p.get("type").and_then(Value::as_str) == Some(text_type);
                match p.get("text").and_then(Value::as_str) {
                    Some(t) if is_text => texts.push(t),
                    _ => return (None, true, None),
                }
                if let Some(cc) = p.get("cache_control") {
                    if cache_control.is_some() {
                        return (None, true, None);
                    }
                    cache_control = Some(cc.clone());
                }
            }
            (Some(texts.join("\n")), true, cache_control)
        }
        _ => (None, false, None),
    }
}

/// Replaces the content of `slot` in `list` by `summary`, keeping its type: a string
/// stays a string, a list becomes `[{"type": "text", "text": summary}]` (with the
/// `cache_control` the list had; Responses: `input_text`).
pub(crate) fn replace(format: Format, list: &mut [Value], slot: &Slot, summary: String) {
    let new = if slot.list {
        let text_type = match format {
            Format::Responses => "input_text",
            Format::OpenAi | Format::Anthropic => "text",
        };
        let mut block = Map::new();
        block.insert("type".into(), Value::String(text_type.into()));
        block.insert("text".into(), Value::String(summary));
        if let Some(cc) = &slot.cache_control {
            block.insert("cache_control".into(), cc.clone());
        }
        Value::Array(vec![Value::Object(block)])
    } else {
        Value::String(summary)
    };
    let target = match (format, slot.block) {
        (Format::OpenAi, _) => list[slot.msg].get_mut("content"),
        (Format::Responses, _) => list[slot.msg].get_mut("output"),
        (Format::Anthropic, Some(j)) => list[slot.msg]
            .get_mut("content")
            .and_then(|c| c.get_mut(j))
            .and_then(|b| b.get_mut("content")),
        (Format::Anthropic, None) => None,
    };
    if let Some(t) = target {
        *t = new;
    }
}
