//! The conversation pass on OpenAI and Anthropic requests built from the real captures
//! in `fixtures/corpus/`.

use serde_json::{json, Value};
use snip_context::{
    compress_messages, compress_messages_cached, compress_request, summary, ContextOutcome,
    ContextSettings, Format, FormatChoice, PassCache,
};
use std::collections::HashMap;

/// Captures used as tool results, with the command that produced them and its exit
/// status (from `MANIFEST.tsv`).
fn captures() -> Vec<(String, String, i64)> {
    captures_up_to(60_000)
}

/// The captures of at most `max` bytes.
fn captures_up_to(max: usize) -> Vec<(String, String, i64)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/corpus/");
    let manifest = std::fs::read_to_string(format!("{dir}MANIFEST.tsv")).unwrap();
    let mut header = None;
    let mut out = Vec::new();
    for line in manifest.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        let Some(h) = &header else {
            header = Some(cols.iter().map(|c| c.to_string()).collect::<Vec<_>>());
            continue;
        };
        let col = |name: &str| cols[h.iter().position(|c| c == name).unwrap()];
        let bytes = std::fs::read(format!("{dir}{}", col("file"))).unwrap();
        // Tool results travel as JSON strings: text, invalid UTF-8 replaced.
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if text.len() <= max {
            out.push((
                col("command").to_string(),
                text,
                col("exit_code").parse().unwrap(),
            ));
        }
    }
    assert!(out.len() >= 8, "the corpus has small captures");
    out
}

/// An in-memory store: id = `sn_` + 24 hex of a deterministic hash of the bytes.
#[derive(Default)]
struct MemStore {
    originals: HashMap<String, Vec<u8>>,
    puts: usize,
}

impl MemStore {
    fn put(&mut self, bytes: &[u8]) -> Option<String> {
        self.puts += 1;
        // FNV-1a over 8-byte words, twice with different seeds (fast in debug builds).
        let hash = |seed: u64| {
            let mut h = seed;
            for c in bytes.chunks(8) {
                let mut w = [0u8; 8];
                w[..c.len()].copy_from_slice(c);
                h ^= u64::from_le_bytes(w);
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
            h ^ bytes.len() as u64
        };
        let id = format!(
            "sn_{:016x}{:08x}",
            hash(0xcbf2_9ce4_8422_2325),
            hash(0x8422_2325_cbf2_9ce4) as u32
        );
        self.originals.insert(id.clone(), bytes.to_vec());
        Some(id)
    }
}

fn run(req: &Value, settings: &ContextSettings, store: &mut MemStore) -> ContextOutcome {
    compress_request(req, FormatChoice::Auto, settings, &mut |b: &[u8]| {
        store.put(b)
    })
}

/// An OpenAI chat request with `n` tool calls of the `terminal` tool. Every third
/// result is a Hermes-style JSON envelope carrying the exit code.
fn openai(n: usize) -> Value {
    openai_from(n, &captures())
}

fn openai_from(n: usize, caps: &[(String, String, i64)]) -> Value {
    let mut messages = vec![
        json!({"role": "system", "content": "You are a coding agent. Use the terminal."}),
        json!({"role": "user", "content": "Fix the failing build, please."}),
    ];
    for k in 0..n {
        let (cmd, text, code) = &caps[k % caps.len()];
        let id = format!("call_{k:03}");
        messages.push(json!({
            "role": "assistant",
            "content": if k % 2 == 0 { Value::Null } else { json!(format!("Step {k}: running it.")) },
            "tool_calls": [{"id": id, "type": "function", "function": {
                "name": "terminal",
                "arguments": json!({"command": cmd}).to_string()
            }}]
        }));
        let content = if k % 3 == 0 {
            json!({"output": text, "exit_code": code, "error": null}).to_string()
        } else {
            text.clone()
        };
        messages.push(json!({"role": "tool", "tool_call_id": id, "content": content}));
        if k % 4 == 3 {
            messages.push(json!({"role": "user", "content": format!("ok, and now step {k}?")}));
        }
    }
    json!({"model": "gpt-x", "temperature": 0, "messages": messages, "tools": []})
}

/// An Anthropic messages request with `n` tool uses. Results alternate between string
/// content and a list of text blocks; every fifth is `is_error: true`, and one list
/// block carries `cache_control`.
fn anthropic(n: usize) -> Value {
    let caps = captures();
    let mut messages = vec![json!({"role": "user", "content": "Fix the failing build, please."})];
    for k in 0..n {
        let (cmd, text, _) = &caps[k % caps.len()];
        let id = format!("toolu_{k:03}");
        messages.push(json!({"role": "assistant", "content": [
            {"type": "text", "text": format!("Step {k}.")},
            {"type": "tool_use", "id": id, "name": "Bash", "input": {"command": cmd, "timeout": 60}}
        ]}));
        let mut result = json!({"type": "tool_result", "tool_use_id": id});
        if k % 2 == 0 {
            result["content"] = json!(text);
        } else {
            let half = text.len() / 2;
            let half = (0..=half)
                .rev()
                .find(|i| text.is_char_boundary(*i))
                .unwrap();
            let mut second = json!({"type": "text", "text": &text[half..]});
            if k == 3 {
                second["cache_control"] = json!({"type": "ephemeral"});
            }
            result["content"] = json!([{"type": "text", "text": &text[..half]}, second]);
        }
        if k % 5 == 0 {
            result["is_error"] = json!(true);
        }
        messages.push(json!({"role": "user", "content": [
            result,
            {"type": "text", "text": format!("user note {k}")}
        ]}));
    }
    json!({"model": "claude-x", "system": "Be brief.", "max_tokens": 1024, "messages": messages})
}

/// The fixed-batch rule (keep 20, batch 10) most tests here pin: its windows are easy
/// to count. The cache-aware default is tested on its own below.
fn settings() -> ContextSettings {
    ContextSettings {
        keep_last: 20,
        batch: Some(10),
        ..ContextSettings::default()
    }
}

/// The text a tool result's content holds (string, or text blocks joined by `\n`).
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .map(|p| p["text"].as_str().unwrap())
            .collect::<Vec<_>>()
            .join("\n"),
        other => panic!("unexpected content {other}"),
    }
}

/// `(message index, content)` of every OpenAI tool result, oldest first.
fn openai_results(req: &Value) -> Vec<(usize, Value)> {
    req["messages"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, m)| m["role"] == "tool")
        .map(|(i, m)| (i, m["content"].clone()))
        .collect()
}

/// `(message index, block index, block)` of every Anthropic tool result, oldest first.
fn anthropic_results(req: &Value) -> Vec<(usize, usize, Value)> {
    let mut out = Vec::new();
    for (i, m) in req["messages"].as_array().unwrap().iter().enumerate() {
        if let Value::Array(blocks) = &m["content"] {
            for (j, b) in blocks.iter().enumerate() {
                if b["type"] == "tool_result" {
                    out.push((i, j, b.clone()));
                }
            }
        }
    }
    out
}

#[test]
fn openai_old_results_become_summaries_and_pairing_holds() {
    let req = openai(45);
    let mut store = MemStore::default();
    let out = run(&req, &settings(), &mut store);
    assert!(out.changed, "{:?}", out.report);
    assert_eq!(out.report.format, Some(Format::OpenAi));
    assert_eq!(out.report.tool_results, 45);
    // 45 - 20 = 25 left the window, floored to the batch of 10.
    assert_eq!(out.report.left_window, 20);
    assert!(out.report.summarised > 10, "{:?}", out.report);

    let before = req["messages"].as_array().unwrap();
    let after = out.request["messages"].as_array().unwrap();
    assert_eq!(before.len(), after.len());
    // Every key but `messages` untouched.
    for k in ["model", "temperature", "tools"] {
        assert_eq!(req[k], out.request[k]);
    }
    let results = openai_results(&out.request);
    let call_ids: Vec<&str> = after
        .iter()
        .filter_map(|m| m["tool_calls"].as_array())
        .flatten()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    for (n, (i, content)) in results.iter().enumerate() {
        // Pairing: same tool_call_id, answering a call that precedes it.
        assert_eq!(after[*i]["tool_call_id"], before[*i]["tool_call_id"]);
        assert!(call_ids.contains(&after[*i]["tool_call_id"].as_str().unwrap()));
        assert!(content.is_string(), "content stays a string");
        let original = before[*i]["content"].as_str().unwrap();
        if n >= 20 {
            assert_eq!(
                content.as_str().unwrap(),
                original,
                "result {n} is not old enough"
            );
            continue;
        }
        let text = content.as_str().unwrap();
        if text == original {
            assert!(
                original.chars().count() < 300,
                "result {n} should be summarised"
            );
            continue;
        }
        let s = summary::parse(text).unwrap_or_else(|| panic!("not a summary: {text}"));
        assert!(!text.contains('\n'));
        assert!(s.tool.starts_with("terminal `"), "{}", s.tool);
        assert_eq!(s.bytes, original.len());
        assert_eq!(
            store.originals[&s.id],
            original.as_bytes(),
            "the store holds the original"
        );
    }
}

#[test]
fn openai_summary_names_command_exit_code_and_lines() {
    let req = openai(45);
    let mut store = MemStore::default();
    let out = run(&req, &settings(), &mut store);
    let after = out.request["messages"].as_array().unwrap();
    let before = req["messages"].as_array().unwrap();
    let mut seen_exit = false;
    for (i, content) in openai_results(&out.request) {
        let Some(s) = summary::parse(content.as_str().unwrap()) else {
            continue;
        };
        let mut original = before[i]["content"].as_str().unwrap().to_string();
        if let Ok(env) = serde_json::from_str::<Value>(&original) {
            if let Some(code) = env.get("exit_code").and_then(Value::as_i64) {
                assert_eq!(s.outcome, format!("exit {code}"));
                seen_exit = true;
            }
            original = env["output"].as_str().unwrap().to_string();
        }
        // The quoted lines are lines of the original (after ANSI/CR rendering, cut).
        for quoted in [&s.first, &s.last].into_iter().flatten() {
            let probe: String = quoted.trim_end_matches('…').chars().take(20).collect();
            let plain = snip_context::digest::plain_text(&original);
            assert!(
                plain.contains(&probe) || original.contains(&probe.replace('"', "\\\"")),
                "{probe:?} not in the original"
            );
        }
        let call = after
            .iter()
            .filter_map(|m| m["tool_calls"].as_array())
            .flatten()
            .find(|c| c["id"] == after[i]["tool_call_id"])
            .unwrap();
        let args: Value =
            serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
        let cmd = args["command"].as_str().unwrap();
        let shown = s
            .tool
            .trim_start_matches("terminal `")
            .trim_end_matches('`');
        let head: String = shown.chars().take_while(|c| *c != '…').collect();
        assert!(cmd.starts_with(&head), "{shown:?} does not name {cmd:?}");
    }
    assert!(
        seen_exit,
        "some summary took its exit code from the JSON envelope"
    );
}

#[test]
fn anthropic_blocks_stay_valid_and_flags_are_kept() {
    let req = anthropic(40);
    let mut store = MemStore::default();
    let out = run(&req, &settings(), &mut store);
    assert!(out.changed, "{:?}", out.report);
    assert_eq!(out.report.format, Some(Format::Anthropic));
    assert_eq!(out.report.tool_results, 40);
    assert_eq!(out.report.left_window, 20);
    assert_eq!(req["system"], out.request["system"]);
    let before = anthropic_results(&req);
    let after = anthropic_results(&out.request);
    assert_eq!(before.len(), after.len());
    let mut summarised = 0;
    for (n, ((i, j, b), (i2, j2, a))) in before.iter().zip(&after).enumerate() {
        assert_eq!((i, j), (i2, j2));
        // Every key of the block but `content` is untouched.
        let mut a_rest = a.clone();
        let mut b_rest = b.clone();
        a_rest.as_object_mut().unwrap().remove("content");
        b_rest.as_object_mut().unwrap().remove("content");
        assert_eq!(a_rest, b_rest);
        // Content type kept: string stays string, list stays a list of text blocks.
        match (&b["content"], &a["content"]) {
            (Value::String(_), Value::String(_)) => {}
            (Value::Array(_), Value::Array(parts)) => {
                assert!(parts
                    .iter()
                    .all(|p| p["type"] == "text" && p["text"].is_string()));
            }
            (x, y) => panic!("content type changed: {x} -> {y}"),
        }
        if n >= 20 {
            assert_eq!(a, b, "protected result {n} changed");
            continue;
        }
        let text = text_of(&a["content"]);
        if let Some(s) = summary::parse(&text) {
            summarised += 1;
            let original = text_of(&b["content"]);
            assert_eq!(store.originals[&s.id], original.as_bytes());
            assert!(s.tool.starts_with("Bash `"), "{}", s.tool);
            if b["is_error"] == true && !s.outcome.starts_with("exit ") {
                assert_eq!(s.outcome, "error");
            }
            if b["content"][1].get("cache_control").is_some() {
                assert_eq!(
                    a["content"][0]["cache_control"],
                    json!({"type": "ephemeral"})
                );
            }
        }
    }
    assert_eq!(summarised, out.report.summarised);
    assert!(summarised >= 10);
}

/// Every message that is not a tool result is byte-identical after the pass, in both
/// formats (system, user and assistant text, tool calls).
#[test]
fn non_tool_messages_are_untouched() {
    let mut store = MemStore::default();
    let req = openai(50);
    let out = run(&req, &settings(), &mut store);
    assert!(out.changed);
    for (a, b) in req["messages"]
        .as_array()
        .unwrap()
        .iter()
        .zip(out.request["messages"].as_array().unwrap())
    {
        if a["role"] != "tool" {
            assert_eq!(a.to_string(), b.to_string());
        }
    }
    let req = anthropic(50);
    let out = run(&req, &settings(), &mut store);
    assert!(out.changed);
    for (a, b) in req["messages"]
        .as_array()
        .unwrap()
        .iter()
        .zip(out.request["messages"].as_array().unwrap())
    {
        match (&a["content"], &b["content"]) {
            (Value::Array(x), Value::Array(y)) => {
                assert_eq!(x.len(), y.len());
                for (bx, by) in x.iter().zip(y) {
                    if bx["type"] != "tool_result" {
                        assert_eq!(bx.to_string(), by.to_string());
                    }
                }
            }
            (x, y) => assert_eq!(x, y),
        }
        assert_eq!(a["role"], b["role"]);
    }
}

#[test]
fn protected_tail_is_untouched_for_any_keep_last() {
    for keep_last in [0, 1, 7, 20] {
        let s = ContextSettings {
            keep_last,
            batch: Some(1),
            ..settings()
        };
        let req = openai(30);
        let out = run(&req, &s, &mut MemStore::default());
        let before = openai_results(&req);
        let after = openai_results(&out.request);
        let tail = before.len() - keep_last;
        assert_eq!(&before[tail..], &after[tail..], "keep_last={keep_last}");
        assert_eq!(out.report.left_window, tail);
    }
}

/// Results leave the window `batch` at a time: between boundaries the summarised set
/// and the request's compressed prefix do not change.
#[test]
fn batch_boundaries() {
    // Small captures keep this 140-request walk quick in debug builds.
    let full = openai_from(60, &captures_up_to(12_000));
    let messages = full["messages"].as_array().unwrap();
    let s = settings(); // keep_last 20, batch 10
    let mut store = MemStore::default();
    let mut prev: Option<(usize, String)> = None;
    for n_msgs in 16..=messages.len() {
        let req = json!({"messages": messages[..n_msgs].to_vec()});
        let out = run(&req, &s, &mut store);
        let results = openai_results(&req).len();
        let expect_left = results.saturating_sub(20) / 10 * 10;
        assert_eq!(out.report.left_window, expect_left, "{n_msgs} messages");
        let summaries: Vec<usize> = openai_results(&out.request)
            .iter()
            .enumerate()
            .filter(|(_, (_, c))| summary::is_summary(c.as_str().unwrap()))
            .map(|(n, _)| n)
            .collect();
        assert!(summaries.iter().all(|n| *n < expect_left));
        let body = out.request["messages"].to_string();
        if let Some((prev_left, prev_body)) = &prev {
            let common = common_prefix(body.as_bytes(), prev_body.as_bytes());
            if *prev_left == expect_left {
                // Inside a batch the previous request is a prefix of this one (up to
                // the closing bracket).
                assert_eq!(common, prev_body.len() - 1, "{n_msgs} messages");
            } else {
                // At a boundary the prefix breaks at the first newly summarised result.
                assert!(common < prev_body.len() - 1);
            }
        }
        prev = Some((expect_left, body));
    }
}

/// Length of the longest common prefix of `a` and `b`, in bytes (compared in chunks:
/// byte-by-byte iteration is slow in debug builds).
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 4096 <= n && a[i..i + 4096] == b[i..i + 4096] {
        i += 4096;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

#[test]
fn deterministic_and_idempotent() {
    for req in [openai(45), anthropic(45)] {
        let mut store = MemStore::default();
        let a = run(&req, &settings(), &mut store);
        let b = run(&req, &settings(), &mut store);
        assert!(a.changed);
        assert_eq!(a.request.to_string(), b.request.to_string());
        assert_eq!(a.report, b.report);
        // A fresh store with the same id function gives the same bytes.
        let c = run(&req, &settings(), &mut MemStore::default());
        assert_eq!(a.request.to_string(), c.request.to_string());
        // Running the pass on its own output changes nothing.
        let again = run(&a.request, &settings(), &mut store);
        assert!(!again.changed, "{:?}", again.report);
        assert_eq!(again.request, a.request);
        assert_eq!(again.report.already_summarised, a.report.summarised);
    }
}

#[test]
fn short_conversations_small_results_and_disabled_pass_through() {
    let mut store = MemStore::default();
    // 7 tool calls make 2 + 7*2 + 1 = 17 messages; min_messages 18 → untouched.
    let req = openai(7);
    let s = ContextSettings {
        keep_last: 0,
        batch: Some(1),
        min_messages: req["messages"].as_array().unwrap().len() + 1,
        ..settings()
    };
    let out = run(&req, &s, &mut store);
    assert!(!out.changed);
    assert_eq!(out.request, req);
    assert!(out.report.skipped.is_some());
    // One message fewer than the conversation: it is compressed.
    let s2 = ContextSettings {
        min_messages: s.min_messages - 1,
        ..s.clone()
    };
    assert!(run(&req, &s2, &mut store).changed);
    // min_chars above every result: nothing summarised.
    let s3 = ContextSettings {
        min_chars: 10_000_000,
        ..s2.clone()
    };
    let out = run(&req, &s3, &mut store);
    assert!(!out.changed);
    assert_eq!(out.report.kept_small, 7);
    let off = ContextSettings {
        enabled: false,
        ..s2
    };
    assert!(!run(&req, &off, &mut store).changed);
}

#[test]
fn store_failure_keeps_results_whole() {
    let req = openai(45);
    let out = compress_request(&req, FormatChoice::Auto, &settings(), &mut |_: &[u8]| None);
    assert!(!out.changed);
    assert_eq!(out.request, req);
    assert!(out.report.store_failed > 0);
    // An id that is not `sn_` + hex is refused the same way.
    let out = compress_request(&req, FormatChoice::Auto, &settings(), &mut |_: &[u8]| {
        Some("sn_\"); evil".to_string())
    });
    assert!(!out.changed);
}

#[test]
fn a_panicking_store_fails_open() {
    let req = anthropic(45);
    let out = compress_request(&req, FormatChoice::Auto, &settings(), &mut |_: &[u8]| {
        panic!("disk on fire")
    });
    assert!(!out.changed);
    assert_eq!(out.request, req);
    assert!(out.report.skipped.unwrap().contains("disk on fire"));
}

#[test]
fn malformed_and_unknown_shapes_pass_through() {
    let mut store = MemStore::default();
    let mut cases = vec![
        json!(null),
        json!("text"),
        json!({"model": "x"}),
        json!({"messages": {"role": "user"}}),
        json!({"input": [{"type": "function_call_output", "call_id": "c", "output": "x".repeat(5000)}]}),
    ];
    // A non-object message among valid ones.
    let mut m = openai(45);
    m["messages"].as_array_mut().unwrap().push(json!(42));
    cases.push(m);
    // A tool message without its tool_call_id.
    let mut m = openai(45);
    m["messages"][3]
        .as_object_mut()
        .unwrap()
        .remove("tool_call_id");
    cases.push(m);
    // Both formats' tool shapes in one request (auto-detection refuses).
    let mut m = openai(45);
    let blocks = anthropic(1)["messages"][1].clone();
    m["messages"].as_array_mut().unwrap().push(blocks);
    cases.push(m);
    // An Anthropic block without a type.
    let mut m = anthropic(45);
    m["messages"][2]["content"]
        .as_array_mut()
        .unwrap()
        .push(json!({"text": "no type"}));
    cases.push(m);
    // No tool results at all.
    cases.push(json!({"messages": (0..40).map(|i| json!({"role": if i % 2 == 0 {"user"} else {"assistant"}, "content": "x".repeat(1000)})).collect::<Vec<_>>()}));
    for req in cases {
        let out = run(&req, &settings(), &mut store);
        assert!(!out.changed, "{req:.200}");
        assert_eq!(out.request.to_string(), req.to_string());
        assert!(out.report.skipped.is_some());
    }
    assert_eq!(
        store.puts, 0,
        "nothing was stored for requests passed through"
    );
}

#[test]
fn non_text_content_is_left_whole() {
    let mut req = anthropic(45);
    // An image block inside an old tool result: that result is not summarised.
    req["messages"][2]["content"][0]["content"] = json!([
        {"type": "text", "text": "x".repeat(2000)},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    ]);
    let out = run(&req, &settings(), &mut MemStore::default());
    assert!(out.changed);
    assert_eq!(out.request["messages"][2], req["messages"][2]);
    assert_eq!(out.report.kept_unsupported, 1);
}

#[test]
fn explicit_format_and_bare_message_arrays() {
    let req = openai(45);
    let messages = req["messages"].clone();
    let mut store = MemStore::default();
    let auto = run(&req, &settings(), &mut store);
    let fixed = compress_messages(
        &messages,
        FormatChoice::Fixed(Format::OpenAi),
        &settings(),
        &mut |b: &[u8]| store.put(b),
    );
    assert_eq!(fixed.request, auto.request["messages"]);
    // Read as the other format, an OpenAI request has no tool results to shrink.
    let other = compress_request(
        &req,
        FormatChoice::Fixed(Format::Anthropic),
        &settings(),
        &mut |b: &[u8]| store.put(b),
    );
    assert!(!other.changed);
    assert_eq!(other.request, req);
}

/// Every `cache_control` key in a request.
fn cache_controls(v: &Value) -> usize {
    match v {
        Value::Object(m) => {
            usize::from(m.contains_key("cache_control"))
                + m.values().map(cache_controls).sum::<usize>()
        }
        Value::Array(a) => a.iter().map(cache_controls).sum(),
        _ => 0,
    }
}

/// The request of a growing session after `k` tool results, with the default
/// (cache-aware) settings: a release changes bytes only from the first released
/// result on, and between releases each request extends the previous one.
#[test]
fn the_release_rule_changes_nothing_before_the_first_released_result() {
    let full = openai(60);
    let messages = full["messages"].as_array().unwrap();
    let settings = ContextSettings::default();
    let mut store = MemStore::default();
    let mut prev: Option<(Vec<u8>, usize)> = None;
    let mut releases = 0;
    for end in 3..=messages.len() {
        if messages[end - 1]["role"] != "tool" {
            continue;
        }
        let req = json!({"model": "gpt-x", "messages": messages[..end]});
        let out = run(&req, &settings, &mut store);
        let bytes = serde_json::to_vec(&out.request["messages"]).unwrap();
        let released = out.report.left_window;
        if let Some((p, was)) = &prev {
            assert!(released >= *was, "the released count never falls");
            let shared = common_prefix(p, &bytes);
            if released == *was {
                assert_eq!(shared, p.len() - 1, "no release: the request only grows");
            } else {
                releases += 1;
                // Nothing before the first newly released result changed.
                let results = openai_results(&out.request);
                let first_new = results[*was..released]
                    .iter()
                    .find(|(_, c)| c.as_str().is_some_and(|t| t.starts_with("[snip: ")))
                    .map(|(i, _)| *i);
                if let Some(i) = first_new {
                    let sent = out.request["messages"].as_array().unwrap();
                    let before = serde_json::to_vec(&Value::Array(sent[..i].to_vec())).unwrap();
                    // `[` + the messages before it + `,` are shared.
                    assert!(shared >= before.len(), "{shared} < {}", before.len());
                }
            }
        }
        prev = Some((bytes, released));
    }
    assert!(releases >= 1, "the session crosses a release");
    assert!(releases < 20, "{releases} releases in 60 results");
}

#[test]
fn cache_control_blocks_are_never_added_moved_or_dropped() {
    let mut req = anthropic(40);
    // A second breakpoint inside one result's block list: that result stays whole.
    req["messages"][10]["content"][0]["content"] = json!([
        {"type": "text", "text": "a".repeat(2000), "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "b".repeat(2000), "cache_control": {"type": "ephemeral"}}
    ]);
    // The host's breakpoints on the system prompt and the newest message.
    req["system"] =
        json!([{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]);
    let before = cache_controls(&req);
    assert_eq!(before, 4);
    for s in [
        // The release rule, at prices where this 40-result session already pays for a
        // release (at the default prices it waits longer).
        ContextSettings {
            cache_write_pct: 100,
            cache_read_pct: 50,
            ..ContextSettings::default()
        },
        ContextSettings {
            keep_last: 2,
            batch: Some(1),
            ..ContextSettings::default()
        },
    ] {
        let out = run(&req, &s, &mut MemStore::default());
        assert!(out.changed, "{:?}", out.report);
        assert_eq!(cache_controls(&out.request), before);
        assert_eq!(out.request["system"], req["system"]);
        assert_eq!(
            out.request["messages"][10]["content"][0]["content"],
            req["messages"][10]["content"][0]["content"]
        );
        // Each breakpoint stays on the block it was on.
        let b3 = anthropic_results(&out.request)[3].2.clone();
        assert!(b3["content"][0]["cache_control"].is_object(), "{b3}");
    }
}

/// The messages of the request after each tool result of `full` (a growing session:
/// each request extends the previous one).
fn growing(full: &Value) -> Vec<Value> {
    let messages = full["messages"].as_array().unwrap();
    (1..=messages.len())
        .filter(|&end| {
            messages[end - 1]["role"] == "tool" || {
                let c = &messages[end - 1]["content"];
                c.as_array()
                    .is_some_and(|b| b.iter().any(|b| b["type"] == "tool_result"))
            }
        })
        .map(|end| Value::Array(messages[..end].to_vec()))
        .collect()
}

/// A session run with one [`PassCache`] gives, request by request, the same bytes and
/// report as the pass without it: with the cache-aware rule and a fixed batch, for
/// both formats, with a cache large enough to keep everything and with one so small
/// it forgets everything many times over. The cache is used: originals it remembers
/// as stored are not handed to the store again.
#[test]
fn the_cache_gives_the_same_bytes_as_no_cache_over_a_session() {
    for (name, full) in [("openai", openai(60)), ("anthropic", anthropic(60))] {
        for settings in [ContextSettings::default(), settings()] {
            for limit in [snip_context::cache::DEFAULT_CACHE_BYTES, 40_000] {
                let cache = PassCache::new(limit);
                let (mut plain, mut cached) = (MemStore::default(), MemStore::default());
                let mut summarised = 0;
                for messages in growing(&full) {
                    let a = compress_messages(&messages, FormatChoice::Auto, &settings, &mut |b| {
                        plain.put(b)
                    });
                    let b = compress_messages_cached(
                        &messages,
                        FormatChoice::Auto,
                        &settings,
                        &mut |b| cached.put(b),
                        &cache,
                    );
                    assert_eq!(
                        serde_json::to_vec(&a.request).unwrap(),
                        serde_json::to_vec(&b.request).unwrap(),
                        "{name} {limit}: request of {} messages",
                        messages.as_array().unwrap().len()
                    );
                    assert_eq!(a.report, b.report);
                    assert_eq!(a.changed, b.changed);
                    summarised += a.report.summarised;
                    assert!(cache.bytes() <= limit, "{} > {limit}", cache.bytes());
                }
                assert!(summarised > 0, "{name}: the session releases results");
                // Every original the cached run needed is in its store, under the
                // same id.
                assert!(cached
                    .originals
                    .iter()
                    .all(|(id, b)| plain.originals[id] == *b));
                assert_eq!(cached.originals.len(), plain.originals.len());
                if limit == snip_context::cache::DEFAULT_CACHE_BYTES {
                    assert!(
                        cached.puts * 4 < plain.puts,
                        "{name}: {} puts with the cache, {} without",
                        cached.puts,
                        plain.puts
                    );
                    assert!(!cache.is_empty());
                }
            }
        }
    }
}

/// The cache's key is the whole of what a summary depends on: the same text answering
/// another call, or flagged as an error, or under another `min_chars`, is worked out
/// again, never taken from the cache.
#[test]
fn the_cache_tells_apart_results_with_the_same_text() {
    // A command that succeeded: flagged as an error, its outcome reads `error`.
    let text = captures().into_iter().find(|c| c.2 == 0).unwrap().1;
    let call = |k: usize, cmd: &str, error: bool| {
        let id = format!("toolu_{k}");
        [
            json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": id, "name": "Bash", "input": {"command": cmd}}]}),
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "content": text, "is_error": error}]}),
        ]
    };
    let mut messages = vec![json!({"role": "user", "content": "go"})];
    for (k, (cmd, error)) in [("make", false), ("make", true), ("make test", false)]
        .into_iter()
        .enumerate()
    {
        messages.extend(call(k, cmd, error));
    }
    for k in 3..8 {
        messages.extend(call(k, &format!("ls {k}"), false));
    }
    let messages = Value::Array(messages);
    let cache = PassCache::default();
    let mut store = MemStore::default();
    for min_chars in [10, text.chars().count() + 1, 10] {
        let s = ContextSettings {
            keep_last: 2,
            batch: Some(1),
            min_messages: 0,
            min_chars,
            ..ContextSettings::default()
        };
        let a = compress_messages(&messages, FormatChoice::Auto, &s, &mut |b| store.put(b));
        let b = compress_messages_cached(
            &messages,
            FormatChoice::Auto,
            &s,
            &mut |b| store.put(b),
            &cache,
        );
        assert_eq!(a.request, b.request);
        assert_eq!(a.report, b.report);
        let lines: Vec<String> = anthropic_results(&json!({"messages": b.request}))
            .iter()
            .take(3)
            .map(|(_, _, r)| text_of(&r["content"]))
            .collect();
        if min_chars == 10 {
            assert!(lines[0].starts_with("[snip: Bash `make` →"), "{}", lines[0]);
            // The error flag and the call are read: three different summaries.
            assert_ne!(lines[0], lines[1]);
            assert!(
                lines[2].starts_with("[snip: Bash `make test` →"),
                "{}",
                lines[2]
            );
        } else {
            assert!(
                lines.iter().all(|l| *l == text),
                "under min_chars: kept whole"
            );
        }
    }
}

/// Every numeric `SNIP_CONTEXT_*` setting at its largest value, alone, and the prices
/// and expected calls together, is refused or runs: no arithmetic overflow in the pass
/// or its cost model, cached or not.
#[test]
fn settings_at_their_largest_values_never_overflow() {
    const NUMERIC: [&str; 7] = [
        "SNIP_CONTEXT_KEEP_LAST",
        "SNIP_CONTEXT_MIN_MESSAGES",
        "SNIP_CONTEXT_MIN_CHARS",
        "SNIP_CONTEXT_CACHE_WRITE_PCT",
        "SNIP_CONTEXT_CACHE_READ_PCT",
        "SNIP_CONTEXT_BATCH",
        "SNIP_CONTEXT_EXPECTED_CALLS",
    ];
    let max = usize::MAX.to_string();
    let requests = [openai(45), anthropic(45)];
    let mut ran = 0;
    for name in NUMERIC.into_iter().chain(["all"]) {
        // "all": the prices and the expected calls together; the thresholds and a fixed
        // batch at their largest would leave the cost model unused.
        let priced = |k: &str| k.contains("_PCT") || k.ends_with("EXPECTED_CALLS");
        let settings = match ContextSettings::from_lookup(|k| {
            (k == name || (name == "all" && priced(k))).then(|| max.clone())
        }) {
            Ok(s) => s,
            Err(e) => {
                assert!(e.to_string().contains("SNIP_CONTEXT_"), "{name}: {e}");
                continue;
            }
        };
        ran += 1;
        let cache = PassCache::new(64 << 20);
        for req in &requests {
            let mut store = MemStore::default();
            let plain = run(req, &settings, &mut store);
            let cached = compress_messages_cached(
                &req["messages"],
                FormatChoice::Auto,
                &settings,
                &mut |b: &[u8]| store.put(b),
                &cache,
            );
            for out in [&plain, &cached] {
                let skipped = out.report.skipped.as_deref().unwrap_or("");
                assert!(!skipped.starts_with("internal error"), "{name}: {skipped}");
            }
            assert_eq!(plain.request["messages"], cached.request, "{name}");
        }
    }
    assert!(ran >= 7, "{ran}");
}
