//! `snip hook claude-code` as Claude Code runs it: the real binary, a payload on stdin,
//! a temporary store. Payload shapes follow Claude Code's tool output schemas (see
//! docs/claude-code.md); captures come from fixtures/corpus.

use serde_json::{json, Value};
use std::ffi::OsStr;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod common;

fn corpus(name: &str) -> String {
    String::from_utf8(common::capture(name)).unwrap()
}

struct Run {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    code: Option<i32>,
}

fn hook(store: &Path, stdin: &[u8]) -> Run {
    hook_with(store, stdin, &[])
}

/// `snip hook claude-code` with the store at `store` and the variables in `env` set.
fn hook_with(store: &Path, stdin: &[u8], env: &[(&str, &OsStr)]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_snip"))
        .args(["hook", "claude-code"])
        .env("SNIP_STORE_DIR", store)
        .env_remove("SNIP_STORE")
        .env_remove("SNIP_ENABLED")
        .env_remove("SNIP_MAX_BYTES")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut sin = child.stdin.take().unwrap();
    let input = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = sin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    Run {
        stdout: out.stdout,
        stderr: out.stderr,
        code: out.status.code(),
    }
}

fn post(tool: &str, response: Value) -> Value {
    json!({
        "session_id": "s1",
        "transcript_path": "/tmp/t.jsonl",
        "cwd": "/tmp",
        "hook_event_name": "PostToolUse",
        "tool_name": tool,
        "tool_input": {},
        "tool_response": response,
    })
}

/// Runs the hook and returns its JSON reply (asserting exit 0 and one JSON document).
fn reply(store: &Path, payload: &Value) -> Value {
    let r = hook(store, payload.to_string().as_bytes());
    assert_eq!(r.code, Some(0));
    serde_json::from_slice(&r.stdout).expect("the hook prints one JSON document")
}

fn updated(reply: &Value) -> &Value {
    assert_eq!(reply["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    &reply["hookSpecificOutput"]["updatedToolOutput"]
}

fn marker_ids(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.find("[snip: ").map(|i| &l[i..]))
        .filter_map(|l| l.split("id=\"").nth(1))
        .filter_map(|r| r.split('"').next())
        .map(str::to_string)
        .collect()
}

fn store_dir() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("store");
    (d, p)
}

#[test]
fn bash_keeps_its_shape_and_other_keys_and_the_original_is_stored() {
    let (_d, store) = store_dir();
    let log = corpus("cargo-test-fail-notty.txt");
    let r = reply(
        &store,
        &post(
            "Bash",
            json!({"stdout": log, "stderr": "warning: x\n", "interrupted": false,
                   "isImage": false, "noOutputExpected": false,
                   "returnCodeInterpretation": "exit 101"}),
        ),
    );
    let out = updated(&r);
    let keys: Vec<&str> = out
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "stdout",
            "stderr",
            "interrupted",
            "isImage",
            "noOutputExpected",
            "returnCodeInterpretation"
        ]
    );
    assert_eq!(out["interrupted"], false);
    assert_eq!(out["returnCodeInterpretation"], "exit 101");
    assert_eq!(out["stderr"], "warning: x\n");
    let stdout = out["stdout"].as_str().unwrap();
    assert!(
        stdout.len() < log.len(),
        "{} !< {}",
        stdout.len(),
        log.len()
    );
    // The failing test's panic line is still visible.
    let failing: Vec<&str> = log.lines().filter(|l| l.contains("panicked at")).collect();
    assert!(!failing.is_empty());
    for l in failing {
        assert!(stdout.contains(l), "lost: {l}");
    }
    // Every marker's id names an original that is in the store.
    let ids = marker_ids(stdout);
    assert!(!ids.is_empty());
    for id in ids {
        assert!(store.join("objects").exists());
        let found = walk(&store)
            .iter()
            .any(|p| p.to_string_lossy().contains(&id[3..]));
        assert!(found, "id {id} not in the store");
    }
    assert!(std::fs::read_to_string(store.join("ledger.jsonl"))
        .unwrap()
        .contains("claude-code:Bash"));
}

#[test]
fn bash_stdout_and_stderr_share_one_budget() {
    let (_d, store) = store_dir();
    let budget = 24_576; // SNIP_MAX_BYTES, the default
    let lines = |tag: &str, n: usize| -> String {
        (0..n)
            .map(|i| format!("{tag} request {i} served in 3 ms\n"))
            .collect()
    };
    for (out_lines, err_lines) in [(4000, 4000), (4000, 700), (300, 4000), (4000, 10)] {
        let (stdout, stderr) = (lines("out", out_lines), lines("err", err_lines));
        let r = reply(
            &store,
            &post(
                "Bash",
                json!({"stdout": stdout, "stderr": stderr, "interrupted": false}),
            ),
        );
        let out = updated(&r);
        let (o, e) = (
            out["stdout"].as_str().unwrap(),
            out["stderr"].as_str().unwrap(),
        );
        assert!(
            o.len() + e.len() <= budget,
            "{out_lines}+{err_lines} lines: {} + {} bytes over one budget",
            o.len(),
            e.len()
        );
        assert_eq!(out["interrupted"], false);
        // Each stream keeps its head and its tail (and a fitting one stays whole).
        for (shown, full) in [(o, &stdout), (e, &stderr)] {
            let first = full.lines().next().unwrap();
            let last = full.lines().last().unwrap();
            assert!(
                shown.contains(first) && shown.contains(last),
                "{first} / {last}"
            );
            if full.len() <= budget / 2 {
                assert_eq!(shown, full);
            }
        }
    }
}

/// A Grep result's `content` and `filenames` list are read together, so they share
/// one budget as Bash's two streams do (not a full budget each).
#[test]
fn grep_content_and_filenames_share_one_budget() {
    let (_d, store) = store_dir();
    let budget = 24_576; // SNIP_MAX_BYTES, the default
    let names: Vec<String> = (0..3000)
        .map(|i| format!("/repo/src/module_{i:04}/handler.rs"))
        .collect();
    let content: String = (0..3000)
        .map(|i| format!("/repo/src/module_{i:04}/handler.rs:{i}: fn handle_{i}() {{\n"))
        .collect();
    let r = reply(
        &store,
        &post(
            "Grep",
            json!({"mode": "content", "numFiles": names.len(), "filenames": names,
                   "content": content, "numLines": 3000}),
        ),
    );
    let g = updated(&r);
    let shown_content = g["content"].as_str().unwrap();
    let shown_names = g["filenames"].as_array().unwrap();
    let names_bytes: usize = shown_names
        .iter()
        .map(|n| n.as_str().unwrap().len() + 1)
        .sum();
    assert!(
        shown_content.len() + names_bytes <= budget,
        "{} + {} bytes over one budget",
        shown_content.len(),
        names_bytes
    );
    assert!(shown_content.contains("fn handle_0()") && shown_content.contains("fn handle_2999()"));
    assert_eq!(shown_names[0], names[0]);
    assert_eq!(shown_names.last().unwrap(), names.last().unwrap());
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn progress_bars_render_to_the_final_frame_even_when_small() {
    let (_d, store) = store_dir();
    let tqdm = corpus("tqdm-single-tty.txt");
    let r = reply(
        &store,
        &post(
            "Bash",
            json!({"stdout": tqdm, "stderr": "", "interrupted": false}),
        ),
    );
    let stdout = updated(&r)["stdout"].as_str().unwrap().to_string();
    assert!(stdout.len() < tqdm.len());
    assert!(stdout.matches('\r').count() < tqdm.matches('\r').count());
}

#[test]
fn read_replaces_file_content_only() {
    let (_d, store) = store_dir();
    let text = corpus("http-server-access-log-notty.txt");
    let r = reply(
        &store,
        &post(
            "Read",
            json!({"type": "text", "file": {"filePath": "/srv/access.log", "content": text,
                   "numLines": 2000, "startLine": 1, "totalLines": 2000}}),
        ),
    );
    let out = updated(&r);
    assert_eq!(out["type"], "text");
    assert_eq!(out["file"]["filePath"], "/srv/access.log");
    assert_eq!(out["file"]["numLines"], 2000);
    assert_eq!(out["file"]["startLine"], 1);
    assert!(out["file"]["content"].as_str().unwrap().len() < text.len());
}

#[test]
fn grep_glob_and_webfetch_keep_their_shapes() {
    let (_d, store) = store_dir();
    let listing = corpus("ls-laR-site-packages-notty.txt");
    let names: Vec<String> = listing
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(3000)
        .map(|l| {
            format!(
                "/site-packages/{}",
                l.split_whitespace().last().unwrap_or("x")
            )
        })
        .collect();

    let grep = reply(
        &store,
        &post(
            "Grep",
            json!({"mode": "content", "numFiles": 3, "filenames": [], "content": listing,
                   "numLines": 9000}),
        ),
    );
    let g = updated(&grep);
    assert_eq!(g["mode"], "content");
    assert_eq!(g["numFiles"], 3);
    assert_eq!(g["numLines"], 9000);
    assert!(g["content"].as_str().unwrap().len() < listing.len());

    let glob = reply(
        &store,
        &post(
            "Glob",
            json!({"durationMs": 12, "numFiles": names.len(), "filenames": names,
                   "truncated": false}),
        ),
    );
    let gl = updated(&glob);
    assert_eq!(gl["durationMs"], 12);
    assert_eq!(gl["truncated"], false);
    let kept = gl["filenames"].as_array().unwrap();
    assert!(kept.len() < names.len());
    assert!(kept.iter().all(Value::is_string));
    assert_eq!(kept[0], names[0]);
    assert_eq!(kept.last().unwrap(), names.last().unwrap());
    assert!(kept
        .iter()
        .any(|k| k.as_str().unwrap().starts_with("[snip: ")));

    let page = corpus("pip-inspect-json-notty.txt");
    let fetch = reply(
        &store,
        &post(
            "WebFetch",
            json!({"bytes": page.len(), "code": 200, "codeText": "OK", "result": page,
                   "durationMs": 80, "url": "https://example.invalid/x"}),
        ),
    );
    let f = updated(&fetch);
    assert_eq!(f["code"], 200);
    assert_eq!(f["url"], "https://example.invalid/x");
    assert!(f["result"].as_str().unwrap().len() < page.len());
}

#[test]
fn mcp_tools_get_a_content_block_list_in_both_fields() {
    let (_d, store) = store_dir();
    let text = corpus("rustc-error-flood-tty.txt");
    let blocks = json!([
        {"type": "text", "text": text},
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    ]);
    let r = reply(&store, &post("mcp__github__get_logs", blocks.clone()));
    let h = &r["hookSpecificOutput"];
    assert_eq!(h["updatedToolOutput"], h["updatedMCPToolOutput"]);
    let out = h["updatedToolOutput"].as_array().unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(out[0]["type"], "text");
    assert!(out[0]["text"].as_str().unwrap().len() < text.len());
    assert_eq!(out[1], blocks[1]);
}

#[test]
fn its_own_mcp_tools_are_never_rewritten() {
    let (_d, store) = store_dir();
    let text = corpus("rustc-error-flood-tty.txt");
    let r = reply(
        &store,
        &post(
            "mcp__snip__snip_restore",
            json!([{"type": "text", "text": text}]),
        ),
    );
    assert_eq!(r, json!({}));
}

#[test]
fn unknown_tools_small_outputs_and_malformed_input_fail_open() {
    let (_d, store) = store_dir();
    let big = corpus("rustc-error-flood-tty.txt");
    for payload in [
        post("Write", json!({"filePath": "/x", "content": big})),
        post("TodoWrite", json!({"oldTodos": [], "newTodos": []})),
        post(
            "Bash",
            json!({"stdout": "ok\n", "stderr": "", "interrupted": false}),
        ),
        post("Bash", json!("not an object")),
        post("Read", json!({"type": "image", "file": {"base64": "AAAA"}})),
        json!({"hook_event_name": "Stop"}),
        json!([1, 2, 3]),
    ] {
        assert_eq!(reply(&store, &payload), json!({}), "{payload}");
    }
    for raw in [&b"{not json"[..], b"", b"\xff\xfe\x00", b"null"] {
        let r = hook(&store, raw);
        assert_eq!(r.code, Some(0));
        assert_eq!(r.stdout, b"{}\n");
    }
}

/// A payload without `hook_event_name` (or not a payload at all) is not guessed at: no
/// change, exit 0, and one line on stderr saying why. An event snip has nothing to do
/// for is silent.
#[test]
fn a_payload_snip_cannot_read_says_why_on_stderr() {
    let (_d, store) = store_dir();
    let big = "x\n".repeat(40_000);
    let mut nameless = post(
        "Bash",
        json!({"stdout": big, "stderr": "", "interrupted": false}),
    );
    nameless.as_object_mut().unwrap().remove("hook_event_name");
    let cases: [(Vec<u8>, &str); 4] = [
        (nameless.to_string().into_bytes(), "no hook_event_name"),
        (br#"{"hook_event_name": 7}"#.to_vec(), "not a string"),
        (b"[1, 2]".to_vec(), "not a JSON object"),
        (b"{not json".to_vec(), "not JSON"),
    ];
    for (raw, why) in cases {
        let r = hook(&store, &raw);
        assert_eq!((r.code, r.stdout.as_slice()), (Some(0), &b"{}\n"[..]));
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("snip hook claude-code: ") && err.contains(why),
            "{err}"
        );
    }
    let r = hook(&store, br#"{"hook_event_name": "Stop", "session_id": "s"}"#);
    assert_eq!(
        (r.stdout.as_slice(), r.stderr.as_slice()),
        (&b"{}\n"[..], &b""[..])
    );
}

/// A lone surrogate escape (`"\ud800"`, as JavaScript's JSON.stringify writes an
/// unpaired surrogate) is valid JSON but no reply can carry it back exactly: the
/// output passes through (`{}`) with one line saying so, not "not JSON".
#[test]
fn a_lone_surrogate_passes_through_with_one_line() {
    let (_d, store) = store_dir();
    let big = "row ok\n".repeat(20_000);
    for esc in [r"\ud800", r"\uDC00x", r"\ud83d\ud83d"] {
        let payload = post(
            "Bash",
            json!({"stdout": format!("{big}ESC"), "stderr": "", "interrupted": false}),
        )
        .to_string()
        .replace("ESC", esc);
        let r = hook(&store, payload.as_bytes());
        assert_eq!(
            (r.code, r.stdout.as_slice()),
            (Some(0), &b"{}\n"[..]),
            "{esc}"
        );
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("lone UTF-16 surrogate") && !err.contains("not JSON"),
            "{err}"
        );
    }
    // A pair is one character: compressed as usual.
    let payload = post(
        "Bash",
        json!({"stdout": format!("{big}ESC"), "stderr": "", "interrupted": false}),
    )
    .to_string()
    .replace("ESC", r"\ud83d\ude00");
    let r = hook(&store, payload.as_bytes());
    let v: Value = serde_json::from_slice(&r.stdout).unwrap();
    assert!(updated(&v)["stdout"]
        .as_str()
        .unwrap()
        .ends_with("\u{1f600}"));
    // Still malformed once the surrogates are set aside: the parser's message.
    let r = hook(&store, br#"{"a": "\ud800" "#);
    assert!(String::from_utf8_lossy(&r.stderr).contains("not JSON"));
}

#[test]
fn ten_megabyte_payload() {
    let (_d, store) = store_dir();
    let line = "2026-11-30T00:00:00Z INFO worker=7 processed batch id=123456 ok\n";
    let mut text = line.repeat(10 * 1024 * 1024 / line.len());
    text.push_str("ERROR worker=3 failed: connection reset by peer\n");
    let r = reply(
        &store,
        &post(
            "Bash",
            json!({"stdout": text, "stderr": "", "interrupted": false}),
        ),
    );
    let stdout = updated(&r)["stdout"].as_str().unwrap();
    assert!(stdout.len() < 100_000, "{}", stdout.len());
    assert!(stdout.contains("ERROR worker=3 failed: connection reset by peer"));
}

#[test]
fn persisted_output_is_read_back_and_the_persisted_keys_dropped() {
    let (d, store) = store_dir();
    let log = corpus("pytest-2000-one-fail-tty.txt");
    let file = d.path().join("tool-results").join("b5.txt");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, &log).unwrap();
    let preview: String = log.chars().take(2000).collect();
    let r = reply(
        &store,
        &post(
            "Bash",
            json!({"stdout": preview, "stderr": "", "interrupted": false,
                   "persistedOutputPath": file, "persistedOutputSize": log.len()}),
        ),
    );
    let out = updated(&r);
    assert!(out.get("persistedOutputPath").is_none());
    assert!(out.get("persistedOutputSize").is_none());
    let stdout = out["stdout"].as_str().unwrap();
    // The tail of the run (far past the 2 KB preview) is visible: the failing test
    // and the summary counts.
    assert!(log.contains("2000 passed") && !preview.contains("2000 passed"));
    assert!(stdout.contains("2000 passed"));
    assert!(stdout.contains("test_slugify[case1337]"));
    assert!(stdout.len() < log.len());

    // A relative path is the session's: read from the payload's `cwd`, not from the
    // directory the hook runs in.
    let mut payload = post(
        "Bash",
        json!({"stdout": preview, "stderr": "", "interrupted": false,
               "persistedOutputPath": "tool-results/b5.txt",
               "persistedOutputSize": log.len()}),
    );
    payload["cwd"] = json!(d.path());
    let r = reply(&store, &payload);
    assert!(updated(&r)["stdout"]
        .as_str()
        .unwrap()
        .contains("2000 passed"));

    // A persisted path that cannot be read: no change, Claude Code keeps its preview.
    let r = reply(
        &store,
        &post(
            "Bash",
            json!({"stdout": preview, "stderr": "", "interrupted": false,
                   "persistedOutputPath": d.path().join("missing.txt"),
                   "persistedOutputSize": 1}),
        ),
    );
    assert_eq!(r, json!({}));
}

/// Only a regular file within the cap is read back: a FIFO (which would block the
/// hook), a device (`/dev/zero` never ends), a directory and a file over 32 MiB are
/// "no persisted output": `{}` at once, and no ledger row.
#[test]
fn persisted_paths_that_are_not_small_regular_files_are_left_alone() {
    let (d, store) = store_dir();
    let fifo = d.path().join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let big = d.path().join("big.txt");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(32 * 1024 * 1024 + 1).unwrap();
    for path in [
        fifo,
        PathBuf::from("/dev/zero"),
        d.path().to_path_buf(),
        big,
    ] {
        let payload = post(
            "Bash",
            json!({"stdout": "preview", "stderr": "", "interrupted": false,
                   "persistedOutputPath": path, "persistedOutputSize": 100_000}),
        );
        let mut child = Command::new(env!("CARGO_BIN_EXE_snip"))
            .args(["hook", "claude-code"])
            .env("SNIP_STORE_DIR", &store)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.to_string().as_bytes())
            .unwrap();
        let started = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if started.elapsed().as_secs() >= 20 {
                child.kill().unwrap();
                panic!("the hook blocked on {}", path.display());
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", path.display());
        assert_eq!(out.stdout, b"{}\n", "{}", path.display());
    }
    assert!(
        !store.join("ledger.jsonl").exists(),
        "a ledger row was written"
    );
}

#[test]
fn diffs_are_never_touched() {
    let (_d, store) = store_dir();
    let diff = corpus("git-diff-requests-notty.txt");
    let r = reply(
        &store,
        &post(
            "Bash",
            json!({"stdout": diff, "stderr": "", "interrupted": false}),
        ),
    );
    assert_eq!(r, json!({}));
}

#[test]
fn pre_tool_use_wraps_bash_without_approving_it() {
    let (_d, store) = store_dir();
    let r = reply(
        &store,
        &json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                "tool_input": {"command": "cargo test 2>&1", "description": "tests"}}),
    );
    let h = &r["hookSpecificOutput"];
    assert_eq!(h["hookEventName"], "PreToolUse");
    assert!(h.get("permissionDecision").is_none());
    let cmd = h["updatedInput"]["command"].as_str().unwrap();
    assert!(
        cmd.contains(" run --restore-tool mcp__snip__snip_restore -- bash -c 'cargo test 2>&1'"),
        "{cmd}"
    );
    // `&&` and redirections are not background jobs.
    let r = reply(
        &store,
        &json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                "tool_input": {"command": "make &> build.log && echo built"}}),
    );
    assert!(r["hookSpecificOutput"]["updatedInput"]["command"].is_string());
    assert_eq!(h["updatedInput"]["description"], "tests");
    for skipped in [
        json!({"command": "cd src"}),
        json!({"command": "sleep 100", "run_in_background": true}),
        // A background job would keep `snip run`'s pipe open: snip run would wait.
        json!({"command": "sleep 100 &"}),
        json!({"command": "npm run dev > dev.log 2>&1 & sleep 1; curl -s localhost:3000"}),
    ] {
        let p = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                       "tool_input": skipped});
        assert_eq!(reply(&store, &p), json!({}));
    }
    let read = json!({"hook_event_name": "PreToolUse", "tool_name": "Read",
                      "tool_input": {"file_path": "/x"}});
    assert_eq!(reply(&store, &read), json!({}));
}

/// When the store cannot keep an original, the output reaches the model whole; the
/// hook tells the user through Claude Code's `systemMessage`, once per session.
#[test]
fn a_store_that_cannot_keep_originals_is_told_once_per_session() {
    let tmp = tempfile::tempdir().unwrap();
    // A store directory others can write to is refused: the store is unavailable.
    let store = tmp.path().join("shared");
    std::fs::create_dir(&store).unwrap();
    std::fs::set_permissions(&store, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let told = tmp.path().join("tmp");
    std::fs::create_dir(&told).unwrap();
    let big: String = (0..5000).map(|i| format!("row {i:06} ok\n")).collect();
    let payload = |session: &str| {
        let mut p = post(
            "Bash",
            json!({"stdout": big, "stderr": "", "interrupted": false}),
        );
        p["session_id"] = session.into();
        p
    };
    let run = |p: &Value| -> Value {
        let out = hook_with(
            &store,
            p.to_string().as_bytes(),
            &[("TMPDIR", told.as_os_str())],
        );
        assert_eq!(out.code, Some(0));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let first = run(&payload("a"));
    let msg = first["systemMessage"].as_str().expect("a systemMessage");
    assert!(
        msg.contains("could not keep") && msg.contains("other users can write"),
        "{msg}"
    );
    assert!(
        run(&payload("a")).get("systemMessage").is_none(),
        "told twice"
    );
    assert!(
        run(&payload("b"))["systemMessage"].is_string(),
        "a new session is told"
    );
}

/// A setting that is not valid makes the hook pass outputs unchanged; the user is told
/// which one through `systemMessage`, once per session.
#[test]
fn a_bad_setting_is_told_once_per_session() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let told = tmp.path().join("tmp");
    std::fs::create_dir(&told).unwrap();
    let big: String = (0..5000).map(|i| format!("row {i:06} ok\n")).collect();
    let mut payload = post(
        "Bash",
        json!({"stdout": big, "stderr": "", "interrupted": false}),
    );
    payload["session_id"] = "s".into();
    let run = || -> Value {
        let out = hook_with(
            &store,
            payload.to_string().as_bytes(),
            &[
                ("SNIP_TAIL_BYTES", OsStr::new("lots")),
                ("TMPDIR", told.as_os_str()),
            ],
        );
        assert_eq!(out.code, Some(0));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let first = run();
    let msg = first["systemMessage"].as_str().expect("a systemMessage");
    assert!(
        msg.contains("SNIP_TAIL_BYTES=\"lots\"") && !msg.contains('\n'),
        "{msg}"
    );
    assert!(first.get("hookSpecificOutput").is_none(), "{first}");
    assert!(run().get("systemMessage").is_none(), "told twice");
}

/// An output over the store's entry cap reaches the model whole; the user's
/// `systemMessage` names that cap and the variable that raises it, not a broken store.
#[test]
fn an_output_over_the_entry_cap_says_which_setting_raises_it() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let told = tmp.path().join("tmp");
    std::fs::create_dir(&told).unwrap();
    let big: String = (0..5000).map(|i| format!("row {i:06} ok\n")).collect();
    let payload = post(
        "Bash",
        json!({"stdout": big, "stderr": "", "interrupted": false}),
    );
    let out = hook_with(
        &store,
        payload.to_string().as_bytes(),
        &[
            ("SNIP_STORE_MAX_ENTRY_BYTES", OsStr::new("1000")),
            ("TMPDIR", told.as_os_str()),
        ],
    );
    assert_eq!(out.code, Some(0));
    let reply: Value = serde_json::from_slice(&out.stdout).unwrap();
    let msg = reply["systemMessage"].as_str().expect("a systemMessage");
    assert!(
        msg.contains("SNIP_STORE_MAX_ENTRY_BYTES=1000")
            && msg.contains("raise SNIP_STORE_MAX_ENTRY_BYTES")
            && !msg.contains("snip stats")
            && !msg.contains('\n'),
        "{msg}"
    );
}

/// The wrapped command, run as Claude Code runs it: `snip run`'s markers quote Claude
/// Code's name for the restore tool, and the output stays within the budget with it.
#[test]
fn wrapped_commands_quote_the_hosts_restore_tool_within_the_budget() {
    let (_d, store) = store_dir();
    let original =
        "for i in $(seq 1 6000); do echo \"row $i status=ok\"; done; echo 'ERROR: quota'; exit 4";
    let r = reply(
        &store,
        &json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                "tool_input": {"command": original}}),
    );
    let cmd = r["hookSpecificOutput"]["updatedInput"]["command"]
        .as_str()
        .unwrap()
        .to_string();
    for budget in [1024usize, 1500, 2048, 4096] {
        let out = Command::new("bash")
            .args(["-c", &cmd])
            .env("SNIP_STORE_DIR", &store)
            .env("SNIP_MAX_BYTES", budget.to_string())
            .env_remove("SNIP_RESTORE_TOOL")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(4));
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("ERROR: quota"), "{text}");
        assert!(
            text.contains("restore: mcp__snip__snip_restore(id=\"sn_"),
            "{text}"
        );
        assert!(!text.contains("restore: snip_restore("), "{text}");
        assert!(
            text.len() <= budget,
            "{} bytes, budget {budget}",
            text.len()
        );
    }
}
