//! The proxy between a client and a loopback upstream: what it rewrites, what it
//! leaves byte for byte, how it streams, and where it fails open.

mod common;

use common::*;
use serde_json::{json, Value};

const ANTHROPIC: [(&str, &str); 4] = [
    ("content-type", "application/json"),
    ("x-api-key", "sk-ant-test-secret"),
    ("anthropic-version", "2023-06-01"),
    ("anthropic-beta", "interleaved-thinking-2025-05-14"),
];

/// An Anthropic request shaped as Claude Code sends it: `cache_control` on the system
/// prompt and on the newest block, a thinking block with its signature, a tool result
/// as a string and one as a list of text blocks, `context_management`, and an unknown
/// key.
fn anthropic_request(log_a: &str, log_b: &str) -> Value {
    json!({
        "model": "claude-test",
        "max_tokens": 1024,
        "zz_unknown_first": {"kept": [1, 2.5, "x"]},
        "system": [{"type": "text", "text": "You are a test.", "cache_control": {"type": "ephemeral"}}],
        "tools": [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}}],
        "context_management": {"edits": [{"type": "clear_thinking_20251015"}]},
        "messages": [
            {"role": "user", "content": "build it"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "I should build.", "signature": "c2lnbmF0dXJlLWJ5dGVz"},
                {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "cargo build"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": log_a}
            ]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {"command": "cargo test"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": [
                    {"type": "text", "text": log_b, "cache_control": {"type": "ephemeral"}}
                ]}
            ]}
        ],
        "stream": true
    })
}

fn count_key(v: &Value, key: &str) -> usize {
    match v {
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| usize::from(k == key) + count_key(v, key))
            .sum(),
        Value::Array(a) => a.iter().map(|v| count_key(v, key)).sum(),
        _ => 0,
    }
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

#[tokio::test]
async fn anthropic_tool_results_are_compressed_and_nothing_else_changes() {
    let s = setup().await;
    let (a, b) = (long_log("a"), long_log("b"));
    let req = anthropic_request(&a, &b);
    let sent = serde_json::to_vec(&req).unwrap();
    let resp = send(
        &s,
        "POST",
        "/v1/messages?beta=true",
        &ANTHROPIC,
        sent.clone(),
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["x-upstream"], "yes");
    let got = last(&s);
    assert_eq!(got.target, "/v1/messages?beta=true");
    for (k, v) in ANTHROPIC {
        assert_eq!(got.headers[k], v, "header {k} passes through");
    }
    assert_eq!(got.headers["host"], s.upstream_authority());
    assert!(
        got.body.len() < sent.len() / 2,
        "{} -> {}",
        sent.len(),
        got.body.len()
    );
    let out: Value = serde_json::from_slice(&got.body).unwrap();
    let string_result = out["messages"][2]["content"][0]["content"]
        .as_str()
        .unwrap();
    let list_result = out["messages"][4]["content"][0]["content"][0]["text"]
        .as_str()
        .unwrap();
    for r in [string_result, list_result] {
        assert!(r.len() < 24_576 + 2048, "{}", r.len());
        assert!(r.contains("sn_"), "a marker quoting the store id: {r:.300}");
        assert!(r.contains("error[E0308]"), "the error line survives");
    }
    // Everything but the two results' text is as it was, in the same key order.
    let mut expect = req.clone();
    expect["messages"][2]["content"][0]["content"] = json!(string_result);
    expect["messages"][4]["content"][0]["content"][0]["text"] = json!(list_result);
    assert_eq!(out, expect);
    assert_eq!(keys(&out), keys(&req));
    assert_eq!(
        count_key(&out, "cache_control"),
        count_key(&req, "cache_control")
    );
    assert_eq!(
        out["messages"][1], req["messages"][1],
        "thinking block and signature intact"
    );
}

#[tokio::test]
async fn a_compressed_result_is_byte_identical_on_every_later_request() {
    let s = setup().await;
    let (a, b) = (long_log("a"), long_log("b"));
    let first = serde_json::to_vec(&anthropic_request(&a, &b)).unwrap();
    send(&s, "POST", "/v1/messages", &ANTHROPIC, first.clone()).await;
    let one = last(&s).body;
    send(&s, "POST", "/v1/messages", &ANTHROPIC, first).await;
    assert_eq!(
        last(&s).body,
        one,
        "the same request is rewritten to the same bytes"
    );
    // The next turn: the conversation grows; the earlier results read the same.
    let mut grown = anthropic_request(&a, &b);
    let msgs = grown["messages"].as_array_mut().unwrap();
    msgs.push(json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_3", "name": "Bash", "input": {"command": "ls"}}]}));
    msgs.push(json!({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_3", "content": long_log("c")}]}));
    send(
        &s,
        "POST",
        "/v1/messages",
        &ANTHROPIC,
        serde_json::to_vec(&grown).unwrap(),
    )
    .await;
    let two = last(&s).body;
    let (v1, v2): (Value, Value) = (
        serde_json::from_slice(&one).unwrap(),
        serde_json::from_slice(&two).unwrap(),
    );
    for i in 0..5 {
        assert_eq!(v1["messages"][i], v2["messages"][i], "message {i}");
    }
    // As bytes: the first request's messages are a prefix of the second's.
    let m1 = serde_json::to_string(&v1["messages"]).unwrap();
    let m2 = serde_json::to_string(&v2["messages"]).unwrap();
    assert!(m2.starts_with(&m1[..m1.len() - 1]));
}

#[tokio::test]
async fn openai_chat_tool_messages_are_compressed() {
    let s = setup().await;
    let req = json!({
        "model": "gpt-test",
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "shell", "arguments": "{\"cmd\":\"make\"}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": long_log("m")}
        ],
        "stream": true
    });
    send(
        &s,
        "POST",
        "/v1/chat/completions",
        &[("authorization", "Bearer sk-test")],
        serde_json::to_vec(&req).unwrap(),
    )
    .await;
    let got = last(&s);
    assert_eq!(got.headers["authorization"], "Bearer sk-test");
    let out: Value = serde_json::from_slice(&got.body).unwrap();
    let r = out["messages"][3]["content"].as_str().unwrap();
    assert!(r.len() < long_log("m").len() / 2 && r.contains("sn_"));
    let mut expect = req.clone();
    expect["messages"][3]["content"] = json!(r);
    assert_eq!(out, expect);
}

#[tokio::test]
async fn responses_function_call_outputs_are_compressed() {
    let s = setup().await;
    let req = json!({
        "model": "gpt-test",
        "instructions": "be brief",
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]},
            {"type": "reasoning", "id": "rs_1", "encrypted_content": "opaque=="},
            {"type": "function_call", "call_id": "call_1", "name": "exec_command", "arguments": "{\"cmd\":\"./loop.sh\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": long_log("r")}
        ],
        "stream": true
    });
    send(
        &s,
        "POST",
        "/v1/responses",
        &[("authorization", "Bearer sk-test")],
        serde_json::to_vec(&req).unwrap(),
    )
    .await;
    let out: Value = serde_json::from_slice(&last(&s).body).unwrap();
    let r = out["input"][3]["output"].as_str().unwrap();
    assert!(r.len() < long_log("r").len() / 2 && r.contains("sn_"));
    let mut expect = req.clone();
    expect["input"][3]["output"] = json!(r);
    assert_eq!(out, expect);
}

#[tokio::test]
async fn snip_restore_results_are_never_compressed() {
    let s = setup().await;
    let req = json!({"model": "m", "messages": [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "mcp__snip__snip_restore", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": long_log("x")}]}
    ]});
    let sent = serde_json::to_vec(&req).unwrap();
    send(&s, "POST", "/v1/messages", &ANTHROPIC, sent.clone()).await;
    assert_eq!(last(&s).body, sent);
}

#[tokio::test]
async fn older_results_are_summarised_by_the_conversation_pass() {
    let s = setup_with(
        &[
            ("SNIP_CONTEXT_KEEP_LAST", "2"),
            ("SNIP_CONTEXT_MIN_MESSAGES", "4"),
            // Reads priced as writes: a release pays for itself at once, so this
            // 40-result session has one (at the default prices it would wait).
            ("SNIP_CONTEXT_CACHE_WRITE_PCT", "100"),
            ("SNIP_CONTEXT_CACHE_READ_PCT", "100"),
        ],
        snip_proxy::DEFAULT_MAX_REWRITE_BYTES,
    )
    .await;
    let mut messages = vec![json!({"role": "user", "content": "start"})];
    for i in 0..40 {
        let id = format!("toolu_{i}");
        messages.push(json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": id, "name": "Bash", "input": {"command": format!("cat f{i}")}}]}));
        let text: String = (0..30)
            .map(|l| format!("file {i} line {l}: some ordinary content\n"))
            .collect();
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": text}]}));
    }
    let req = json!({"model": "m", "messages": messages});
    send(
        &s,
        "POST",
        "/v1/messages",
        &ANTHROPIC,
        serde_json::to_vec(&req).unwrap(),
    )
    .await;
    let out: Value = serde_json::from_slice(&last(&s).body).unwrap();
    let result = |i: usize| {
        out["messages"][2 + 2 * i]["content"][0]["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(
        snip_context::summary::is_summary(&result(0)),
        "the oldest is summarised: {}",
        result(0)
    );
    assert_eq!(
        result(39),
        req["messages"][80]["content"][0]["content"]
            .as_str()
            .unwrap(),
        "the newest stays whole"
    );
    // One ledger row for this request.
    let ledger = std::fs::read_to_string(s.store_dir.path().join("store/ledger.jsonl")).unwrap();
    let rows: Vec<Value> = ledger
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 1, "{ledger}");
    assert_eq!(rows[0]["source"], "proxy:anthropic");
    assert!(rows[0]["after"].as_u64() < rows[0]["before"].as_u64());
}

#[tokio::test]
async fn fail_open_forwards_the_original_bytes() {
    let s = setup_with(&[("SNIP_CONTEXT_ENABLED", "0")], 64 * 1024).await;
    let log = long_log("f");
    let valid = serde_json::to_vec(&anthropic_request(&log, &log)).unwrap();
    let mut malformed = valid.clone();
    malformed.truncate(valid.len() - 3);
    let huge = serde_json::to_vec(&anthropic_request(&long_log("h").repeat(3), &log)).unwrap();
    assert!(huge.len() > 64 * 1024);
    let gzip_headers = [
        ("content-type", "application/json"),
        ("content-encoding", "gzip"),
        ("x-api-key", "k"),
    ];
    type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)], Vec<u8>);
    let cases: Vec<Case> = vec![
        ("POST", "/v1/messages", &ANTHROPIC, malformed),
        ("POST", "/v1/messages", &gzip_headers, valid.clone()),
        ("POST", "/v1/messages", &ANTHROPIC, huge),
        ("POST", "/v1/messages/batches", &ANTHROPIC, valid.clone()),
        (
            "POST",
            "/v1/embeddings",
            &[("authorization", "Bearer x")],
            valid.clone(),
        ),
        (
            "GET",
            "/v1/models?limit=5",
            &[("authorization", "Bearer x")],
            Vec::new(),
        ),
    ];
    for (method, path, headers, body) in cases {
        let resp = send(&s, method, path, headers, body.clone()).await;
        assert_eq!(resp.status(), 200, "{method} {path}");
        let got = last(&s);
        assert_eq!(got.method, method);
        assert_eq!(got.target, path);
        assert!(
            got.body == body,
            "{method} {path}: bytes forwarded as they came"
        );
        for (k, v) in headers {
            assert_eq!(got.headers[*k], *v);
        }
    }
}

#[tokio::test]
async fn a_huge_chunked_body_streams_through_untouched() {
    let s = setup_with(&[("SNIP_CONTEXT_ENABLED", "0")], 64 * 1024).await;
    let body = serde_json::to_vec(&anthropic_request(&long_log("h").repeat(3), "x")).unwrap();
    // Sent in pieces without a content-length, so the proxy learns the size only by
    // reading past its bound.
    let (tx, rx) =
        tokio::sync::mpsc::channel::<Result<http_body::Frame<bytes::Bytes>, std::io::Error>>(4);
    let pieces: Vec<Vec<u8>> = body.chunks(10_000).map(<[u8]>::to_vec).collect();
    tokio::spawn(async move {
        for p in pieces {
            tx.send(Ok(http_body::Frame::data(p.into()))).await.unwrap();
        }
    });
    let stream_body = http_body_util::StreamBody::new(ReceiverStream(rx));
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http();
    let req = hyper::Request::post(format!("http://{}/v1/messages", s.proxy))
        .header("x-api-key", "k")
        .body(stream_body)
        .unwrap();
    let resp = client.request(req).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert!(last(&s).body == body);
}

/// A `Stream` over a tokio channel (for a chunked request body).
struct ReceiverStream<T>(tokio::sync::mpsc::Receiver<T>);
impl<T> futures_core::Stream for ReceiverStream<T> {
    type Item = T;
    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<T>> {
        self.0.poll_recv(cx)
    }
}

#[tokio::test]
async fn count_tokens_is_rewritten_like_messages() {
    let s = setup().await;
    let (a, b) = (long_log("a"), long_log("b"));
    let body = serde_json::to_vec(&anthropic_request(&a, &b)).unwrap();
    send(&s, "POST", "/v1/messages", &ANTHROPIC, body.clone()).await;
    let messages = last(&s).body;
    send(&s, "POST", "/v1/messages/count_tokens", &ANTHROPIC, body).await;
    let counted = last(&s);
    assert_eq!(counted.target, "/v1/messages/count_tokens");
    assert_eq!(counted.body, messages, "counted as it will be sent");
}
