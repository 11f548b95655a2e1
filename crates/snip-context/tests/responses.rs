//! The conversation pass on OpenAI Responses requests shaped like Codex CLI's: an
//! `input` array of `message`, `reasoning`, `function_call` / `function_call_output`
//! and `custom_tool_call` / `custom_tool_call_output` items, with `instructions`,
//! `tools` and the other keys beside it. Tool outputs are the real captures in
//! `fixtures/corpus/`.

use serde_json::{json, Value};
use snip_context::{
    compress_request, compress_request_json, ContextSettings, Format, FormatChoice,
};
use std::collections::HashMap;

/// The captures of at most 40,000 bytes with their command and exit status.
fn captures() -> Vec<(String, String, i64)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/corpus/");
    let manifest = std::fs::read_to_string(format!("{dir}MANIFEST.tsv")).unwrap();
    let mut lines = manifest.lines();
    let head: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let col =
        |cols: &[&str], name: &str| cols[head.iter().position(|c| *c == name).unwrap()].to_string();
    let mut out = Vec::new();
    for line in lines {
        let cols: Vec<&str> = line.split('\t').collect();
        let bytes = std::fs::read(format!("{dir}{}", col(&cols, "file"))).unwrap();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if text.len() <= 40_000 && text.len() >= 2_000 {
            out.push((
                col(&cols, "command"),
                text,
                col(&cols, "exit_code").parse().unwrap(),
            ));
        }
    }
    assert!(out.len() >= 6);
    out
}

/// An in-memory store with deterministic ids (`sn_` + 24 hex).
#[derive(Default)]
struct MemStore {
    originals: HashMap<String, Vec<u8>>,
}

impl MemStore {
    fn put(&mut self, bytes: &[u8]) -> Option<String> {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut g: u64 = 0x8422_2325_cbf2_9ce4;
        for c in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            h = (h ^ u64::from_le_bytes(w)).wrapping_mul(0x0000_0100_0000_01b3);
            g = (g ^ u64::from_le_bytes(w)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        let id = format!("sn_{:016x}{:08x}", h ^ bytes.len() as u64, g as u32);
        self.originals.insert(id.clone(), bytes.to_vec());
        Some(id)
    }
}

/// A Codex-shaped session of `n` tool calls: the environment context and the task as
/// user messages, then per call a reasoning item, an assistant message, the call
/// (`shell` with an argv command, or the free-form `apply_patch` custom tool every
/// fifth call) and its output. Shell outputs alternate between the JSON envelope
/// (`output` + `metadata.exit_code`) and the plain-text form (`Exit code: N` first).
fn codex(n: usize) -> Value {
    let caps = captures();
    let mut input = vec![
        json!({"type": "message", "role": "user", "content": [{"type": "input_text",
            "text": "<environment_context>\n  <cwd>/repo</cwd>\n  <sandbox_mode>workspace-write</sandbox_mode>\n</environment_context>"}]}),
        json!({"type": "message", "role": "user", "content": [{"type": "input_text",
            "text": "The ledger tests fail on CI. Find out why and fix it."}]}),
    ];
    for k in 0..n {
        input.push(
            json!({"type": "reasoning", "summary": [{"type": "summary_text",
            "text": format!("**Checking step {k}**")}], "content": null,
            "encrypted_content": format!("gAAAAB{k:04}opaque")}),
        );
        input.push(json!({"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": format!("Step {k}: running the next command.")}]}));
        let id = format!("call_{k:03}x");
        if k % 5 == 4 {
            input.push(json!({"type": "custom_tool_call", "status": "completed", "call_id": id,
                "name": "apply_patch",
                "input": "*** Begin Patch\n*** Update File: src/lib.rs\n@@\n-old\n+new\n*** End Patch\n"}));
            input.push(json!({"type": "custom_tool_call_output", "call_id": id,
                "output": format!("Exit code: 0\nWall time: 0.1 seconds\nOutput:\nSuccess. Updated the following files:\nM src/lib.rs\n{}", "x".repeat(400))}));
            continue;
        }
        let (command, text, code) = &caps[k % caps.len()];
        input.push(
            json!({"type": "function_call", "name": "shell", "call_id": id,
            "arguments": json!({"command": ["bash", "-lc", command], "workdir": "/repo",
                "timeout_ms": 120000}).to_string()}),
        );
        let output = if k % 2 == 0 {
            json!({"output": text, "metadata": {"exit_code": code, "duration_seconds": 0.4}})
                .to_string()
        } else {
            format!("Exit code: {code}\nWall time: 0.4 seconds\nOutput:\n{text}")
        };
        input.push(json!({"type": "function_call_output", "call_id": id, "output": output}));
    }
    json!({
        "model": "gpt-5-codex",
        "instructions": "You are Codex, a coding agent.",
        "input": input,
        "tools": [
            {"type": "function", "name": "shell", "description": "Runs a shell command.",
             "strict": false, "parameters": {"type": "object", "properties": {
                "command": {"type": "array", "items": {"type": "string"}},
                "workdir": {"type": "string"}, "timeout_ms": {"type": "number"}},
                "required": ["command"]}},
            {"type": "custom", "name": "apply_patch", "description": "Edits files.",
             "format": {"type": "grammar", "syntax": "lark", "definition": "start: patch"}}
        ],
        "tool_choice": "auto",
        "parallel_tool_calls": false,
        "reasoning": {"effort": "medium", "summary": "auto"},
        "store": false,
        "stream": true,
        "include": ["reasoning.encrypted_content"],
        "prompt_cache_key": "0199a1b2-c3d4"
    })
}

/// A fixed batch (keep 6, batch 5): the windows are easy to count.
fn batch() -> ContextSettings {
    ContextSettings {
        keep_last: 6,
        batch: Some(5),
        ..ContextSettings::default()
    }
}

fn run(req: &Value, s: &ContextSettings, store: &mut MemStore) -> snip_context::ContextOutcome {
    compress_request(req, FormatChoice::Auto, s, &mut |b: &[u8]| store.put(b))
}

fn is_summary(v: &Value) -> bool {
    v.as_str().is_some_and(|t| t.starts_with("[snip: "))
}

#[test]
fn only_function_call_outputs_change_and_calls_stay_paired() {
    let req = codex(30);
    let mut store = MemStore::default();
    let out = run(&req, &batch(), &mut store);
    assert!(out.changed, "{:?}", out.report);
    assert_eq!(out.report.format, Some(Format::Responses));
    // 24 shell outputs (every fifth call is apply_patch); the newest 6 stay whole, 15
    // leave the window (a multiple of 5), every one of them large enough.
    assert_eq!(out.report.tool_results, 24);
    assert_eq!(out.report.left_window, 15);
    assert_eq!(out.report.summarised, 15);
    // Every key beside `input` is the client's.
    for (k, v) in req.as_object().unwrap() {
        if k != "input" {
            assert_eq!(&out.request[k], v, "{k}");
        }
    }
    let (a, b) = (
        req["input"].as_array().unwrap(),
        out.request["input"].as_array().unwrap(),
    );
    assert_eq!(a.len(), b.len());
    let mut outputs = 0;
    for (x, y) in a.iter().zip(b) {
        if x["type"] != "function_call_output" {
            assert_eq!(x, y, "only function_call_output items change");
            continue;
        }
        // Same item, same call_id, same keys: only `output` may differ.
        let mut y2 = y.clone();
        y2["output"] = x["output"].clone();
        assert_eq!(x, &y2);
        if x["output"] != y["output"] {
            outputs += 1;
            assert!(is_summary(&y["output"]), "{}", y["output"]);
            // The original is in the store under the quoted id.
            let line = y["output"].as_str().unwrap();
            let id = &line[line.rfind("sn_").unwrap()..line.len() - 3];
            assert_eq!(
                store.originals[id],
                x["output"].as_str().unwrap().as_bytes()
            );
        }
    }
    assert_eq!(outputs, 15);
    // Every call still has its output, in order, with the same call_id.
    let ids = |v: &[Value], ty: &str| -> Vec<String> {
        v.iter()
            .filter(|i| i["type"] == ty)
            .map(|i| i["call_id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids(b, "function_call"), ids(b, "function_call_output"));
    assert_eq!(
        ids(b, "custom_tool_call"),
        ids(b, "custom_tool_call_output")
    );
}

#[test]
fn summaries_name_the_shell_command_and_its_real_outcome() {
    let req = codex(30);
    let out = run(&req, &batch(), &mut MemStore::default());
    let caps = captures();
    let items = out.request["input"].as_array().unwrap();
    let mut seen = 0;
    for (k, item) in items
        .iter()
        .filter(|i| i["type"] == "function_call_output")
        .enumerate()
    {
        let Some(line) = item["output"].as_str().filter(|t| t.starts_with("[snip: ")) else {
            continue;
        };
        seen += 1;
        // The k-th shell output is call k + k/4 (every fifth call is apply_patch).
        let call = k + k / 4;
        let (command, _, code) = &caps[call % caps.len()];
        assert!(line.starts_with("[snip: shell `bash -lc "), "{line}");
        let cmd_head: String = command.chars().take(10).collect();
        assert!(line.contains(&cmd_head), "{line} lacks {cmd_head}");
        if *code == 0 {
            assert!(line.contains(" ok") || line.contains("exit 0"), "{line}");
        } else {
            assert!(line.contains(&format!("exit {code}")), "{line}");
            assert!(!line.contains(" ok,"), "{line}");
        }
    }
    assert_eq!(seen, 15);
}

#[test]
fn later_calls_keep_every_earlier_byte_between_releases() {
    let full = codex(40);
    let items = full["input"].as_array().unwrap().clone();
    let mut store = MemStore::default();
    let mut prev: Option<(Vec<u8>, usize)> = None;
    let mut releases = 0;
    for s in [
        batch(),
        ContextSettings {
            min_messages: 0,
            ..ContextSettings::default()
        },
    ] {
        for end in 3..=items.len() {
            // A request is sent after each output (and the first after the task).
            if !matches!(
                items[end - 1]["type"].as_str(),
                Some("function_call_output" | "custom_tool_call_output")
            ) {
                continue;
            }
            let mut req = full.clone();
            req["input"] = Value::Array(items[..end].to_vec());
            let body = serde_json::to_vec(&req).unwrap();
            let (sent, report) = compress_request_json(
                &body,
                FormatChoice::Fixed(Format::Responses),
                &s,
                &mut |b: &[u8]| store.put(b),
            );
            let sent: Value = serde_json::from_slice(&sent).unwrap();
            let input = serde_json::to_vec(&sent["input"]).unwrap();
            // The same history gives the same bytes on a second call.
            let (again, _) = compress_request_json(
                &body,
                FormatChoice::Fixed(Format::Responses),
                &s,
                &mut |b: &[u8]| store.put(b),
            );
            assert_eq!(serde_json::from_slice::<Value>(&again).unwrap(), sent);
            // Idempotent: the pass's own output comes back unchanged.
            let out2 = run(&sent, &s, &mut store);
            assert!(!out2.changed);
            if let Some((p, was)) = &prev {
                assert!(report.left_window >= *was);
                if report.left_window == *was {
                    // `[…previous items` then `,` and the new items.
                    assert_eq!(&input[..p.len() - 1], &p[..p.len() - 1]);
                } else {
                    releases += 1;
                }
            }
            prev = Some((input, report.left_window));
        }
        prev = None;
    }
    assert!(releases >= 3, "{releases}");
}

#[test]
fn content_item_outputs_and_non_text_outputs() {
    let mut req = codex(20);
    let items = req["input"].as_array_mut().unwrap();
    let outs: Vec<usize> = (0..items.len())
        .filter(|&i| items[i]["type"] == "function_call_output")
        .collect();
    // The oldest output as a list of input_text parts; the second with an image.
    let text = items[outs[0]]["output"].as_str().unwrap().to_string();
    let (h, t) = text.split_at(text.len() / 2);
    let (h, t) = (h.to_string(), t.to_string());
    items[outs[0]]["output"] = json!([
        {"type": "input_text", "text": h}, {"type": "input_text", "text": t}
    ]);
    items[outs[1]]["output"] = json!([
        {"type": "input_text", "text": "x".repeat(5000)},
        {"type": "input_image", "image_url": "data:image/png;base64,AAAA"}
    ]);
    let s = ContextSettings {
        keep_last: 2,
        batch: Some(1),
        ..ContextSettings::default()
    };
    let out = run(&req, &s, &mut MemStore::default());
    assert!(out.changed);
    let got = &out.request["input"];
    let first = &got[outs[0]]["output"];
    assert_eq!(first.as_array().unwrap().len(), 1, "{first}");
    assert_eq!(first[0]["type"], "input_text");
    assert!(first[0]["text"].as_str().unwrap().starts_with("[snip: "));
    assert_eq!(got[outs[1]]["output"], req["input"][outs[1]]["output"]);
    assert_eq!(out.report.kept_unsupported, 1);
}

#[test]
fn malformed_and_other_requests_pass_through() {
    let s = batch();
    // A plain prompt.
    let r = json!({"model": "m", "input": "hello"});
    let out = run(&r, &s, &mut MemStore::default());
    assert!(!out.changed);
    assert_eq!(out.request, r);
    // An output without a call_id.
    let mut r = codex(30);
    r["input"][5]["call_id"] = Value::Null;
    assert_eq!(r["input"][5]["type"], "function_call_output");
    let out = run(&r, &s, &mut MemStore::default());
    assert!(!out.changed);
    assert!(out.report.skipped.unwrap().starts_with("malformed"));
    // A Responses request read as Chat has no messages.
    let r = codex(30);
    let out = compress_request(
        &r,
        FormatChoice::Fixed(Format::OpenAi),
        &s,
        &mut |_: &[u8]| unreachable!(),
    );
    assert!(!out.changed);
    // The JSON entry point: untouched bytes when nothing changes.
    let body = br#"{"model":"m","input":[{"type":"message","role":"user","content":"hi"}]}"#;
    let (sent, _) = compress_request_json(body, FormatChoice::Auto, &s, &mut |_: &[u8]| None);
    assert_eq!(&*sent, &body[..]);
    // A bare input array is read as Responses too.
    let items = codex(30)["input"].clone();
    let out = compress_request(&items, FormatChoice::Auto, &s, &mut |b: &[u8]| {
        MemStore::default().put(b)
    });
    assert!(out.changed);
    assert_eq!(out.report.format, Some(Format::Responses));
}
