//! `snip context` as a process: requests built from the real captures in
//! `fixtures/corpus/`, a real store in a temp directory.

use serde_json::{json, Value};
use snip_context::summary;
use snip_store::{RestoreRequest, RestoreStatus, Store, StoreOptions};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/corpus/");

/// `(command, text, exit_code)` of the captures of at most 60 KB, in manifest order.
fn captures() -> Vec<(String, String, i64)> {
    let manifest = std::fs::read_to_string(format!("{CORPUS}MANIFEST.tsv")).unwrap();
    let mut lines = manifest.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (file, command, exit) = (col("file"), col("command"), col("exit_code"));
    let mut out = Vec::new();
    for line in lines {
        let f: Vec<&str> = line.split('\t').collect();
        let bytes = std::fs::read(format!("{CORPUS}{}", f[file])).unwrap();
        if bytes.len() <= 60_000 {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            out.push((f[command].to_string(), text, f[exit].parse().unwrap()));
        }
    }
    out
}

/// An OpenAI chat request with `n` terminal calls; every third result is a JSON
/// envelope with the exit code.
fn openai(n: usize) -> Value {
    let caps = captures();
    let mut messages = vec![
        json!({"role": "system", "content": "You are a coding agent."}),
        json!({"role": "user", "content": "Fix the build."}),
    ];
    for k in 0..n {
        let (cmd, text, code) = &caps[k % caps.len()];
        let id = format!("call_{k}");
        messages.push(json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": id, "type": "function",
             "function": {"name": "terminal", "arguments": json!({"command": cmd}).to_string()}}
        ]}));
        let content = if k % 3 == 0 {
            json!({"output": text, "exit_code": code, "error": null}).to_string()
        } else {
            text.clone()
        };
        messages.push(json!({"role": "tool", "tool_call_id": id, "content": content}));
    }
    json!({"model": "m", "messages": messages})
}

/// An Anthropic request with `n` Bash tool uses; odd results are block lists.
fn anthropic(n: usize) -> Value {
    let caps = captures();
    let mut messages = vec![json!({"role": "user", "content": "Fix the build."})];
    for k in 0..n {
        let (cmd, text, code) = &caps[k % caps.len()];
        let id = format!("toolu_{k}");
        messages.push(json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": id, "name": "Bash", "input": {"command": cmd}}
        ]}));
        let content = if k % 2 == 0 {
            json!(text)
        } else {
            json!([{"type": "text", "text": text}])
        };
        messages.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": content, "is_error": *code != 0}
        ]}));
    }
    json!({"model": "m", "system": "Be brief.", "max_tokens": 100, "messages": messages})
}

/// Runs `snip context ARGS` with `input` on stdin, the store in `store`, and only
/// the given extra variables set.
fn snip_context(store: &Path, args: &[&str], env: &[(&str, &str)], input: &[u8]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_snip"));
    cmd.arg("context")
        .args(args)
        .env_clear()
        .env("HOME", store)
        .env("SNIP_STORE_DIR", store)
        // The windows these tests count are the fixed-batch rule's (keep 20, batch 10);
        // the cache-aware default is tested in snip-context.
        .env("SNIP_CONTEXT_KEEP_LAST", "20")
        .env("SNIP_CONTEXT_BATCH", "10")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    // A child that exits before reading everything (e.g. on a bad flag) closes the
    // pipe: a broken pipe here is not a test failure.
    if let Err(e) = writer.join().unwrap() {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    out
}

/// The texts of the tool results of either format, oldest first.
fn result_texts(req: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for m in req["messages"].as_array().unwrap() {
        if m["role"] == "tool" {
            out.push(m["content"].as_str().unwrap().to_string());
        }
        if let Value::Array(blocks) = &m["content"] {
            for b in blocks.iter().filter(|b| b["type"] == "tool_result") {
                out.push(match &b["content"] {
                    Value::String(s) => s.clone(),
                    Value::Array(parts) => parts[0]["text"].as_str().unwrap().to_string(),
                    other => panic!("bad content {other}"),
                });
            }
        }
    }
    out
}

/// Reads an original back from the store by pages of `bytes` (the default restore
/// mode), and checks the pages join to exactly `expected`.
fn assert_restores(store_dir: &Path, id: &str, expected: &[u8]) {
    let store = Store::open(&StoreOptions::in_dir(store_dir)).unwrap();
    let mut got = Vec::new();
    let mut start = 0;
    loop {
        let r = store.restore(&RestoreRequest::bytes(id, start, None));
        assert_eq!(r.status, RestoreStatus::Ok, "{}", r.note);
        got.extend(r.content_bytes().unwrap());
        match r.next {
            Some(n) => start = n,
            None => break,
        }
    }
    assert_eq!(got, expected, "restore of {id}");
}

fn check_request(store: &Path, input: &Value, output: &[u8], expect_format: &str) {
    let out: Value = serde_json::from_slice(output).unwrap();
    let before = result_texts(input);
    let after = result_texts(&out);
    assert_eq!(before.len(), after.len());
    let old = before.len() - 20;
    let mut summarised = 0;
    for (n, (b, a)) in before.iter().zip(&after).enumerate() {
        if n >= old / 10 * 10 {
            assert_eq!(a, b, "result {n} is in the protected window");
            continue;
        }
        if let Some(s) = summary::parse(a) {
            summarised += 1;
            assert_restores(store, &s.id, b.as_bytes());
        } else {
            assert_eq!(a, b);
        }
    }
    assert!(summarised >= 10, "{expect_format}: {summarised} summarised");
    // Everything but the tool results' content is as it came.
    assert_eq!(out["model"], input["model"]);
    assert_eq!(out["system"], input["system"]);
    assert_eq!(
        out["messages"].as_array().unwrap().len(),
        input["messages"].as_array().unwrap().len()
    );
}

#[test]
fn openai_request_is_summarised_stable_across_processes_and_restorable() {
    let dir = tempfile::tempdir().unwrap();
    let req = openai(45);
    let input = serde_json::to_vec_pretty(&req).unwrap();
    let a = snip_context(dir.path(), &["--report"], &[], &input);
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let report: Value = serde_json::from_slice(&a.stderr).unwrap();
    assert_eq!(report["format"], "openai");
    assert_eq!(report["left_window"], 20);
    check_request(dir.path(), &req, &a.stdout, "openai");
    // A second process with the same store prints the same bytes.
    let b = snip_context(dir.path(), &[], &[], &input);
    assert_eq!(a.stdout, b.stdout);
    // Its own output comes back byte-identical (idempotent: nothing left to do).
    let c = snip_context(dir.path(), &[], &[], &a.stdout);
    assert_eq!(c.stdout, a.stdout);
}

/// Runs `snip restore ARGS` on the store in `store`; returns stdout.
fn snip_restore(store: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_snip"))
        .arg("restore")
        .args(args)
        .env_clear()
        .env("HOME", store)
        .env("SNIP_STORE_DIR", store)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "snip restore {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The restore call a summary quotes, run verbatim with `snip restore`, then paged
/// with `--bytes`, gives back the original; so does `--full` (under the hard cap).
#[test]
fn snip_restore_returns_a_summarised_original() {
    let dir = tempfile::tempdir().unwrap();
    let req = openai(45);
    let out = snip_context(dir.path(), &[], &[], &serde_json::to_vec(&req).unwrap());
    let out: Value = serde_json::from_slice(&out.stdout).unwrap();
    let before = result_texts(&req);
    let mut checked = 0;
    for (n, text) in result_texts(&out).iter().enumerate() {
        let Some(s) = summary::parse(text) else {
            continue;
        };
        let call = text[text.find("snip_restore(").unwrap()..text.len() - 1].to_string();
        let mut got = Vec::new();
        let mut args = vec![call];
        loop {
            let args_ref: Vec<&str> = args.iter().map(String::as_str).collect();
            let page: Value = serde_json::from_slice(&snip_restore(dir.path(), &args_ref)).unwrap();
            assert_eq!(page["status"], "ok");
            got.extend_from_slice(page["content"].as_str().unwrap().as_bytes());
            match page["next"].as_u64() {
                Some(next) => args = vec![s.id.clone(), "--bytes".into(), format!("{next}:")],
                None => break,
            }
        }
        assert_eq!(got, before[n].as_bytes(), "paged restore of result {n}");
        if before[n].len() <= 65_536 {
            let full = snip_restore(
                dir.path(),
                &[&s.id, "--full", "--max-bytes", "65536", "--raw"],
            );
            assert_eq!(full, before[n].as_bytes(), "full restore of result {n}");
        }
        checked += 1;
    }
    assert!(checked >= 10);
}

#[test]
fn anthropic_request_is_summarised_and_restorable() {
    let dir = tempfile::tempdir().unwrap();
    let req = anthropic(42);
    let input = serde_json::to_vec(&req).unwrap();
    let a = snip_context(dir.path(), &["--format", "anthropic"], &[], &input);
    assert!(a.status.success());
    check_request(dir.path(), &req, &a.stdout, "anthropic");
    let b = snip_context(dir.path(), &["--format", "auto"], &[], &input);
    assert_eq!(a.stdout, b.stdout);
    // `is_error` and block lists are kept.
    let out: Value = serde_json::from_slice(&a.stdout).unwrap();
    let first_result = &out["messages"][4]["content"][0];
    assert_eq!(first_result["type"], "tool_result");
    assert!(first_result["content"].is_array());
    assert_eq!(first_result["content"][0]["type"], "text");
    assert_eq!(
        first_result["is_error"],
        req["messages"][4]["content"][0]["is_error"]
    );
}

#[test]
fn settings_come_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let req = openai(30);
    let input = serde_json::to_vec(&req).unwrap();
    let env = [("SNIP_CONTEXT_KEEP_LAST", "5"), ("SNIP_CONTEXT_BATCH", "1")];
    let a = snip_context(dir.path(), &["--report"], &env, &input);
    let report: Value = serde_json::from_slice(&a.stderr).unwrap();
    assert_eq!(report["left_window"], 25);
    let out: Value = serde_json::from_slice(&a.stdout).unwrap();
    let after = result_texts(&out);
    assert_eq!(&after[25..], &result_texts(&req)[25..]);
    // min_messages above the conversation's length: untouched.
    let env = [("SNIP_CONTEXT_MIN_MESSAGES", "1000")];
    assert_eq!(snip_context(dir.path(), &[], &env, &input).stdout, input);
}

/// Extra environment variables of one case.
type Env = Vec<(&'static str, &'static str)>;

#[test]
fn passes_through_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let big = serde_json::to_vec_pretty(&openai(45)).unwrap();
    let truncated = big[..big.len() / 2].to_vec();
    let mut anthropic_typeless = anthropic(45);
    anthropic_typeless["messages"][2]["content"]
        .as_array_mut()
        .unwrap()
        .push(json!({"no_type": true}));
    let cases: Vec<(Vec<u8>, Env)> = vec![
        (b"not json at all\n".to_vec(), vec![]),
        (truncated, vec![]),
        (b"{\"model\": \"m\"}\n".to_vec(), vec![]),
        (b"  [1, 2, 3]  ".to_vec(), vec![]),
        (
            serde_json::to_vec_pretty(&anthropic_typeless).unwrap(),
            vec![],
        ),
        (serde_json::to_vec_pretty(&openai(3)).unwrap(), vec![]),
        (big.clone(), vec![("SNIP_CONTEXT_ENABLED", "0")]),
        (big.clone(), vec![("SNIP_STORE", "0")]),
        (big.clone(), vec![("SNIP_CONTEXT_BATCH", "0")]),
        (big.clone(), vec![("SNIP_CONTEXT_MIN_CHARS", "10000000")]),
    ];
    for (input, env) in cases {
        let out = snip_context(dir.path(), &[], &env, &input);
        assert!(out.status.success());
        assert!(
            out.stdout == input,
            "changed: {env:?} {:.80}",
            String::from_utf8_lossy(&input)
        );
    }
    // Bad settings say so on stderr.
    let out = snip_context(dir.path(), &[], &[("SNIP_CONTEXT_BATCH", "0")], &big);
    assert!(String::from_utf8_lossy(&out.stderr).contains("SNIP_CONTEXT_BATCH"));
}

#[test]
fn rejects_an_unknown_format_flag() {
    let dir = tempfile::tempdir().unwrap();
    let out = snip_context(dir.path(), &["--format", "gemini"], &[], b"{}");
    // A usage error: status 2 and one line naming the value, nothing on stdout (a
    // crash would exit otherwise and say something else).
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("snip: invalid value 'gemini' for '--format"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}
