//! Hook payloads as the hosts send them, answered by snip-hosts with a real store:
//! Claude Code's `PostToolUse`/`PreToolUse` JSON (`claude_code::respond`, what `snip
//! hook claude-code` runs) and OpenCode's cut-output notice (`opencode::saved_output`,
//! what `snip hook opencode --saved` runs).
//!
//! Input: a JSON payload as it is; anything else is one selector byte (the tool or
//! host) and two texts split at the first NUL, built into a payload of that shape.
//! Invariants: no panic; a reply (else the host keeps its original) is a JSON object
//! of the host's shape that mirrors `tool_response`: the same keys (the persisted-file
//! keys may go), every non-string value identical, and every string it changed
//! accounts for the original exactly, every marker's restore call answered by the
//! store (`snip_testkit::check_accounting`); a command that runs `snip restore` is
//! never rewritten; OpenCode's saved file comes back byte for byte.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use snip_hosts::{claude_code, opencode};
use std::sync::OnceLock;

struct Env {
    dir: tempfile::TempDir,
    store: snip_store::StoreHandle,
}

/// The engine's store (`SNIP_STORE_DIR`, set before its first call) and a handle on
/// it for the checker; the smallest budget a user can set, so small inputs compress.
fn env() -> &'static Env {
    static E: OnceLock<Env> = OnceLock::new();
    E.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        std::env::set_var("SNIP_STORE_DIR", dir.path().join("store"));
        std::env::set_var(
            "SNIP_MAX_BYTES",
            snip_core::config::MIN_MAX_BYTES.to_string(),
        );
        std::env::set_var("SNIP_STORE_MAX_BYTES", (1u64 << 40).to_string());
        std::env::set_var("SNIP_STORE_MAX_ENTRIES", (1u64 << 20).to_string());
        for k in [
            "SNIP_STORE",
            "SNIP_ENABLED",
            "SNIP_STORE_URL",
            "SNIP_RESTORE_TOOL",
        ] {
            std::env::remove_var(k);
        }
        let store = snip_store::open_from_env();
        assert!(store.store().is_some(), "store: {store:?}");
        Env { dir, store }
    })
}

const TOOLS: &[&str] = &[
    "Bash",
    "PowerShell",
    "Read",
    "Grep",
    "Glob",
    "WebFetch",
    "mcp__srv__tool",
    "mcp__snip__snip_restore",
    "Write",
];

/// A payload of one of the shapes snip handles, from two texts.
fn built(sel: u8, a: &str, b: &str) -> Value {
    let tool = TOOLS[sel as usize % TOOLS.len()];
    let lines: Vec<&str> = a.split('\n').collect();
    let response = match tool {
        "Bash" | "PowerShell" => {
            json!({"stdout": a, "stderr": b, "interrupted": sel & 0x80 != 0, "isImage": false})
        }
        "Read" => json!({"type": "text", "file": {"filePath": b, "content": a, "numLines": 3}}),
        "Grep" => json!({"mode": "content", "numFiles": 1, "filenames": lines, "content": b}),
        "Glob" => json!({"filenames": lines, "durationMs": 3, "numFiles": lines.len()}),
        "WebFetch" => json!({"result": a, "code": 200, "url": b}),
        _ if sel & 0x40 != 0 => json!([{"type": "text", "text": a}, {"type": "image", "data": b}]),
        _ => json!({"content": [{"type": "text", "text": a}], "isError": false}),
    };
    let event = if sel & 0x20 != 0 && tool == "Bash" {
        "PreToolUse"
    } else {
        "PostToolUse"
    };
    json!({
        "session_id": "fuzz",
        "hook_event_name": event,
        "tool_name": tool,
        "tool_input": {"command": b, "description": "fuzz"},
        "tool_response": response,
    })
}

/// `new` mirrors `orig` (see the crate docs); `key` is the field `new` sits in.
fn mirrors(orig: &Value, new: &Value, key: &str, store: &snip_store::StoreHandle) {
    match (orig, new) {
        (Value::String(a), Value::String(b)) => {
            if a != b {
                assert!(
                    b.len() <= a.len(),
                    "{key}: grew from {} to {} bytes",
                    a.len(),
                    b.len()
                );
                if let Err(e) = snip_testkit::check_accounting(a.as_bytes(), b.as_bytes(), store) {
                    panic!("{key}: accounting: {e}");
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if key == "filenames" && a != b => {
            let join = |v: &[Value]| {
                v.iter()
                    .map(|s| s.as_str().expect("a file name").to_string())
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            mirrors(
                &join(a).into(),
                &join(b).into(),
                "filenames (as lines)",
                store,
            );
        }
        (Value::Array(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len(), "{key}: items added or lost");
            for (x, y) in a.iter().zip(b) {
                mirrors(x, y, key, store);
            }
        }
        (Value::Object(a), Value::Object(b)) => {
            for k in b.keys() {
                assert!(a.contains_key(k), "{key}: key {k} added");
            }
            let persisted = a.contains_key("persistedOutputPath");
            for (k, v) in a {
                match b.get(k) {
                    // The preview in `stdout` is replaced by the persisted file's whole.
                    Some(_) if persisted && k == "stdout" => {}
                    Some(w) => mirrors(v, w, k, store),
                    None => assert!(
                        persisted && k.starts_with("persistedOutput"),
                        "{key}: key {k} lost"
                    ),
                }
            }
        }
        (a, b) => assert_eq!(a, b, "{key}: a value that is not text changed"),
    }
}

fn claude(payload: &Value) {
    let e = env();
    let reply = claude_code::respond(payload);
    let Some(reply) = reply else { return };
    serde_json::to_string(&reply).expect("a reply serializes");
    let out = reply
        .get("hookSpecificOutput")
        .and_then(Value::as_object)
        .expect("hookSpecificOutput");
    let event = payload["hook_event_name"].as_str().expect("an event");
    assert_eq!(
        out.get("hookEventName").and_then(Value::as_str),
        Some(event)
    );
    // Only a shell tool runs its `command`: another tool's input may hold any text.
    let shell = matches!(payload["tool_name"].as_str(), Some("Bash" | "PowerShell"));
    let command = payload
        .pointer("/tool_input/command")
        .and_then(Value::as_str)
        .unwrap_or("");
    assert!(
        !(shell && claude_code::runs_snip_restore(command)),
        "rewrote the output of a snip restore: {command:?}"
    );
    match event {
        "PostToolUse" => {
            let updated = out.get("updatedToolOutput").expect("updatedToolOutput");
            mirrors(
                &payload["tool_response"],
                updated,
                "tool_response",
                &e.store,
            );
            if let Some(mcp) = out.get("updatedMCPToolOutput") {
                assert_eq!(mcp, updated);
            }
        }
        "PreToolUse" => {
            let updated = out
                .get("updatedInput")
                .and_then(Value::as_object)
                .expect("updatedInput");
            let input = payload["tool_input"].as_object().expect("tool_input");
            for (k, v) in input {
                if k != "command" {
                    assert_eq!(updated.get(k), Some(v), "tool_input.{k} changed");
                }
            }
            let wrapped = updated["command"].as_str().expect("a command");
            let quoted = claude_code::shell_quote(command);
            assert!(
                wrapped.ends_with(&format!(" -- bash -c {quoted}")),
                "the command is not kept whole: {wrapped:?}"
            );
        }
        other => panic!("a reply to {other}"),
    }
}

/// OpenCode's notice naming a saved file that holds `a`, followed by `b`.
fn opencode(a: &str, b: &str) {
    let e = env();
    let path = e.dir.path().join("saved.txt");
    std::fs::write(&path, a).expect("write the saved file");
    let path = path.to_str().expect("a UTF-8 path");
    let shown = format!("{}{path}\n\n{b}", opencode::SAVED_NOTICE);
    let Some((full, suffix)) = opencode::saved_output(&shown, path) else {
        panic!("the saved output was not read back");
    };
    assert_eq!(full, a, "the saved file came back changed");
    assert!(
        shown.ends_with(&suffix),
        "the kept suffix is not the shown text's end"
    );
    // Another file named, or no notice: nothing read.
    assert!(opencode::saved_output(b, path).is_none() || b.starts_with(opencode::SAVED_NOTICE));
    let o = snip_hosts::engine::compress(full.as_bytes(), "opencode:bash");
    if let Err(err) = snip_testkit::check_accounting(full.as_bytes(), &o.output, &e.store) {
        panic!("opencode accounting: {err}");
    }
}

fuzz_target!(|data: &[u8]| {
    env();
    if let Ok(payload) = serde_json::from_slice::<Value>(data) {
        // Whether snip can read it or not, no panic; only a payload gets a reply.
        let _ = claude_code::not_a_payload(&payload);
        claude(&payload);
        return;
    }
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let rest = String::from_utf8_lossy(rest);
    let (a, b) = rest.split_once('\0').unwrap_or((&rest, ""));
    // The command parsers take any text.
    let _ = (
        claude_code::runs_snip_restore(a),
        claude_code::changes_shell_state(a),
        claude_code::starts_background_job(a),
    );
    if sel == 0xff {
        opencode(a, b);
    } else {
        claude(&built(sel, a, b));
    }
});
