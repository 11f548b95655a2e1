//! `snip mcp` on raw stdio: what a line that is not a JSON-RPC message gets (see
//! docs/mcp.md, "Malformed input"). The full client tests are `tests/mcp/` (Python).

use serde_json::Value;
use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

#[test]
fn unparsable_lines_are_ignored_and_the_session_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_snip"))
        .arg("mcp")
        .env("SNIP_STORE_DIR", dir.path().join("store"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    let mut send = |line: &str| writeln!(stdin, "{line}").unwrap();
    let next = || -> Value {
        let line = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("a reply from snip mcp");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    };
    // Not JSON, before the handshake: no reply (else it would come before this one).
    send("this is not JSON");
    send(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    );
    assert_eq!(next()["id"], 1);
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    // Not JSON in session: no reply; the session goes on.
    send("{oops");
    send(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#);
    let v = next();
    assert_eq!((v["id"].as_i64(), v.get("error")), (Some(2), None), "{v}");
    // JSON that is not a JSON-RPC message: Invalid Request (-32600), without an id.
    send(r#"{"foo":1}"#);
    let v = next();
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert!(v.get("id").is_none_or(Value::is_null), "{v}");
    send(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#);
    assert_eq!(next()["id"], 3);
    // `arguments` not an object: rmcp cannot decode the request and answers -32601
    // with the method as its message (docs/mcp.md, "Errors"); the session goes on.
    send(
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"snip_restore","arguments":"notanobject"}}"#,
    );
    let v = next();
    assert_eq!(
        (
            v["id"].as_i64(),
            &v["error"]["code"],
            &v["error"]["message"]
        ),
        (Some(4), &Value::from(-32601), &Value::from("tools/call")),
        "{v}"
    );
    send(r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#);
    assert_eq!(next()["id"], 5);
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// The `structuredContent` of each `snip_restore` call with `args`, over one `snip mcp`
/// session on `store`, with the call's `isError`.
fn mcp_restores(store: &std::path::Path, args: &[Value]) -> Vec<(Value, bool)> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_snip"))
        .arg("mcp")
        .env("SNIP_STORE_DIR", store)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut next = || -> Value {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    };
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    )
    .unwrap();
    next();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let call = serde_json::json!({"jsonrpc":"2.0","id":i + 1,"method":"tools/call",
            "params":{"name":"snip_restore","arguments":a}});
        writeln!(stdin, "{call}").unwrap();
        let v = next();
        let r = &v["result"];
        out.push((r["structuredContent"].clone(), r["isError"] == true));
    }
    drop(stdin);
    child.wait().unwrap();
    out
}

/// `snip restore CALL`'s JSON answer and exit code.
fn cli_restore(store: &std::path::Path, call: &str) -> (Value, i32) {
    let o = Command::new(env!("CARGO_BIN_EXE_snip"))
        .args(["restore", call])
        .env("SNIP_STORE_DIR", store)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)));
    (v, o.status.code().unwrap())
}

/// An unknown field and a malformed range for an absent (evicted) id get the same
/// `invalid` answer from the MCP tool and `snip restore` (docs/restore.md, "Which
/// status wins").
#[test]
fn mcp_and_cli_answer_malformed_requests_alike() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    std::fs::create_dir_all(&store).unwrap();
    let id = "sn_0123456789abcdef01234567";
    let mcp = mcp_restores(
        &store,
        &[
            serde_json::json!({"id": id, "bogus": 1}),
            serde_json::json!({"id": id, "mode": "lines", "start": 9, "end": 2}),
        ],
    );
    let cli = [
        cli_restore(&store, &format!(r#"snip_restore(id="{id}", bogus=1)"#)),
        cli_restore(
            &store,
            &format!(r#"snip_restore(id="{id}", mode="lines", start=9, end=2)"#),
        ),
    ];
    for ((m, is_error), (c, code)) in mcp.iter().zip(&cli) {
        assert_eq!(m["status"], "invalid", "{m}");
        assert!(is_error, "{m}");
        assert_eq!((&c["status"], *code), (&Value::from("invalid"), 2), "{c}");
        assert_eq!((&m["id"], &m["mode"]), (&c["id"], &c["mode"]), "{m} vs {c}");
    }
}
