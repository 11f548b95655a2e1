//! `snip wrap` and `snip proxy` as processes: the real `snip` binary, a real store in a
//! temporary directory, a loopback upstream (Python's `http.server`) that saves each
//! request body, and a stand-in host program that talks to the base URL it was given.

mod common;

use serde_json::{json, Value};
use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

const UPSTREAM: &str = r#"
import http.server, json, os, sys
out = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("content-length", "0"))
        body = self.rfile.read(n)
        k = len(os.listdir(out))
        with open(os.path.join(out, f"req-{k}.json"), "wb") as f:
            f.write(body)
        with open(os.path.join(out, f"req-{k}.meta"), "w") as f:
            f.write(self.path + "\n" + self.headers.get("x-api-key", "") + "\n")
        data = b'{"ok":true}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"#;

/// A host stand-in: posts the request in argv[1] to `$ANTHROPIC_BASE_URL/v1/messages`
/// and exits 3 when the answer came back (so the test sees the status passed on).
const HOST: &str = r#"
import os, sys, urllib.request
body = open(sys.argv[1], "rb").read()
req = urllib.request.Request(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages?beta=true", data=body,
    headers={"content-type": "application/json", "x-api-key": "sk-secret", "anthropic-version": "2023-06-01"})
answer = urllib.request.urlopen(req).read()
sys.exit(3 if answer == b'{"ok":true}' else 1)
"#;

struct Upstream {
    child: Child,
    port: u16,
}

impl Drop for Upstream {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn upstream(dir: &Path) -> Upstream {
    let script = dir.join("upstream.py");
    std::fs::write(&script, UPSTREAM).unwrap();
    let out = dir.join("received");
    std::fs::create_dir_all(&out).unwrap();
    let mut child = Command::new("python3")
        .arg(&script)
        .arg(&out)
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line.trim().parse().unwrap();
    Upstream { child, port }
}

fn snip(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_snip"));
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("SNIP_STORE_DIR", dir.join("store"));
    c
}

fn long_log() -> String {
    (0..1500)
        .map(|i| format!("compiling module_{i} ... ok (elapsed {}ms)\n", i % 97))
        .collect()
}

#[test]
fn wrap_claude_points_the_host_at_the_proxy_and_passes_its_status_on() {
    let dir = tempfile::tempdir().unwrap();
    let up = upstream(dir.path());
    let log = long_log();
    let request = json!({"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": log}]}
    ]});
    std::fs::write(dir.path().join("req.json"), request.to_string()).unwrap();
    std::fs::write(dir.path().join("host.py"), HOST).unwrap();
    let status = snip(dir.path())
        .args(["wrap", "claude", "--program", "python3", "--upstream"])
        .arg(format!("http://127.0.0.1:{}", up.port))
        .arg("--")
        .arg(dir.path().join("host.py"))
        .arg(dir.path().join("req.json"))
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(3), "the host's exit status is snip's");
    let got: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("received/req-0.json")).unwrap())
            .unwrap();
    let meta = std::fs::read_to_string(dir.path().join("received/req-0.meta")).unwrap();
    assert_eq!(meta, "/v1/messages?beta=true\nsk-secret\n");
    let result = got["messages"][2]["content"][0]["content"]
        .as_str()
        .unwrap();
    assert!(result.len() < log.len() / 2, "{}", result.len());
    assert!(result.contains("sn_"));
    // One ledger row, and `snip stats` names the proxy.
    let stats = snip(dir.path()).args(["stats"]).output().unwrap();
    let text = String::from_utf8_lossy(&stats.stdout);
    assert!(text.contains("proxy:anthropic"), "{text}");
}

/// A host stand-in that writes its arguments and `OPENCODE_CONFIG_CONTENT` to files.
fn recorder(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("record.sh");
    common::place_executable(
        b"#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$REC/args\"\nprintf '%s' \"$OPENCODE_CONFIG_CONTENT\" > \"$REC/env\"\nexit 0\n",
        &path,
    );
    path
}

#[test]
fn wrap_codex_and_opencode_get_the_proxy_as_their_base_url() {
    let dir = tempfile::tempdir().unwrap();
    let rec = recorder(dir.path());
    let status = snip(dir.path())
        .env("REC", dir.path())
        .args(["wrap", "codex", "--program"])
        .arg(&rec)
        .args(["--", "exec", "hello"])
        .status()
        .unwrap();
    assert!(status.success());
    let args = std::fs::read_to_string(dir.path().join("args")).unwrap();
    let lines: Vec<&str> = args.lines().collect();
    assert!(
        lines[0].starts_with("-c=model_providers.snip-proxy={"),
        "{args}"
    );
    assert!(lines[0].contains("wire_api = \"responses\""));
    assert!(lines[0].contains("base_url = \"http://127.0.0.1:"));
    assert_eq!(lines[1], "-c=model_provider=\"snip-proxy\"");
    assert_eq!(&lines[2..], ["exec", "hello"]);

    let status = snip(dir.path())
        .env("REC", dir.path())
        .env("OPENCODE_CONFIG_CONTENT", r#"{"model":"anthropic/x"}"#)
        .args(["wrap", "opencode", "--program"])
        .arg(&rec)
        .args(["--", "run", "hi"])
        .status()
        .unwrap();
    assert!(status.success());
    let cfg: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("env")).unwrap()).unwrap();
    assert_eq!(cfg["model"], "anthropic/x");
    let base = cfg["provider"]["anthropic"]["options"]["baseURL"]
        .as_str()
        .unwrap();
    assert!(
        base.starts_with("http://127.0.0.1:") && base.ends_with("/v1"),
        "{base}"
    );
}

#[test]
fn proxy_refuses_a_non_loopback_address_without_allow_remote() {
    let dir = tempfile::tempdir().unwrap();
    let out = snip(dir.path())
        .args(["proxy", "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a loopback address"));
}
