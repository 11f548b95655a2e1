//! The shared store (`SNIP_STORE_URL`) against a real Redis: the real `snip` binary
//! on two "machines" (separate HOMEs, no shared directory), many writers killed at
//! random under eviction pressure, a server restarted mid-run, a cluster node down,
//! and bad settings. `scripts/test-redis.sh` starts the servers and sets:
//!
//! - `SNIP_TEST_REDIS_URL`: a single server (AOF on, small maxmemory, volatile-lru)
//! - `SNIP_TEST_REDIS_RESTART`: a shell command that restarts it (same data directory)
//! - `SNIP_TEST_REDIS_CLUSTER_URL`: a three-node cluster
//! - `SNIP_TEST_REDIS_CLUSTER_KILL` / `SNIP_TEST_REDIS_CLUSTER_REVIVE`: stop and
//!   restart one of its nodes
//! - `SNIP_TEST_REDIS_AUTH_PORT`: a server that requires a password
//! - `SNIP_TEST_REDIS_STOP` / `SNIP_TEST_REDIS_START`: stop the single server, and
//!   start it again
//! - `SNIP_TEST_REDIS_SENTINEL_URL`: `redis+sentinel://` naming one sentinel and the
//!   service `snip`; `SNIP_TEST_REDIS_SENTINEL_PRIMARY`: that service's primary
//!
//! Without them every test here says it is skipped and passes.

use serde_json::{json, Value};
use snip_store::{RestoreRequest, RestoreStatus, Store, StoreHandle, StoreOptions, StoreUrl};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn need(name: &str) -> Option<String> {
    let v = env(name);
    if v.is_none() {
        eprintln!("skipped: {name} is not set (scripts/test-redis.sh starts Redis and sets it)");
    }
    v
}

/// `snip` with a HOME of its own (one "machine") and the shared store at `url`.
fn snip(home: &Path, url: &str, host: &str, args: &[&str]) -> Command {
    let mut c = Command::new(common::SNIP);
    c.args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("SNIP_STORE_URL", url)
        .env("SNIP_HOST", host)
        .env("SNIP_STORE_TIMEOUT_MS", "2000")
        .env("SNIP_STORE_CONNECT_TIMEOUT_MS", "1000");
    c
}

fn opts(url: &str) -> StoreOptions {
    let mut o = StoreOptions::in_dir("/nonexistent-snip-store");
    o.url = Some(StoreUrl::parse(url, None).unwrap());
    o.timeout = Duration::from_secs(2);
    o.connect_timeout = Duration::from_secs(1);
    o
}

fn log(seed: u64, lines: usize) -> String {
    (0..lines)
        .map(|i| format!("run {seed} step {i}: compiling crate_{} ok\n", i * 7 % 13))
        .collect()
}

fn marker_id(text: &str) -> String {
    let at = text.find("id=\"sn_").expect("a marker with an id") + 4;
    text[at..at + 27].to_string()
}

/// Every byte of `id` through `snip restore --raw`, page by page.
fn restore_all(home: &Path, url: &str, id: &str) -> Vec<u8> {
    let mut all = Vec::new();
    loop {
        let range = format!("{}:{}", all.len(), all.len() + 65536);
        let out = snip(
            home,
            url,
            "b",
            &[
                "restore",
                id,
                "--raw",
                "--max-bytes",
                "65536",
                "--bytes",
                &range,
            ],
        )
        .output()
        .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        if out.stdout.is_empty() {
            return all;
        }
        all.extend_from_slice(&out.stdout);
    }
}

#[test]
fn two_machines_share_originals() {
    let Some(url) = need("SNIP_TEST_REDIS_URL") else {
        return;
    };
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let stdout = log(1, 3000);
    let payload = json!({
        "session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
        "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {},
        "tool_response": {"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false},
    });
    let hook = |home: &Path, host: &str| -> String {
        let out = common::pipe(
            snip(home, &url, host, &["hook", "claude-code"]),
            payload.to_string().as_bytes(),
        );
        assert!(out.status.success());
        let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON reply");
        let s = v["hookSpecificOutput"]["updatedToolOutput"]["stdout"]
            .as_str()
            .expect("the output was shortened")
            .to_string();
        assert!(s.len() < stdout.len() && !s.contains("not retained"), "{s}");
        marker_id(&s)
    };
    let id = hook(a.path(), "machine-a");
    // Machine B never saw the original: it restores it, exactly.
    assert_eq!(restore_all(b.path(), &url, &id), stdout.as_bytes());
    // Through the MCP server on machine B too.
    let msgs = [
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"snip_restore","arguments":{"id": id, "mode":"lines","start":2,"end":3}}}),
    ];
    let input: String = msgs.iter().map(|m| m.to_string() + "\n").collect();
    let out = common::pipe(
        snip(b.path(), &url, "machine-b", &["mcp"]),
        input.as_bytes(),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let want: String = stdout
        .lines()
        .skip(1)
        .take(2)
        .map(|l| format!("{l}\\n"))
        .collect();
    assert!(text.contains(&want), "{text}");
    // The same original on machine B gets the same id.
    assert_eq!(hook(b.path(), "machine-b"), id);
    // Both machines' rows are in one ledger.
    let stats = snip(b.path(), &url, "machine-b", &["stats", "--json"])
        .output()
        .unwrap();
    assert!(
        stats.status.success(),
        "{}",
        String::from_utf8_lossy(&stats.stderr)
    );
    let s: Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert!(s["rewrites"].as_u64().unwrap() >= 2, "{s}");
    // `snip config` shows the URL; `snip gc` counts the shared originals.
    let cfg = snip(b.path(), &url, "b", &["config"]).output().unwrap();
    assert!(String::from_utf8_lossy(&cfg.stdout).contains("SNIP_STORE_URL"));
    let gc = snip(b.path(), &url, "b", &["gc", "--json"])
        .output()
        .unwrap();
    assert!(
        gc.status.success(),
        "{}",
        String::from_utf8_lossy(&gc.stderr)
    );
    let g: Value = serde_json::from_slice(&gc.stdout).unwrap();
    assert!(g["entries"].as_u64().unwrap() >= 1, "{g}");
}

/// Child mode: `SNIP_TEST_WORKER=<url> <n> <seed> <out file>` writes `n` originals and
/// appends `id sha256` for each one kept.
#[test]
fn worker() {
    let Some(spec) = env("SNIP_TEST_WORKER") else {
        return;
    };
    let parts: Vec<&str> = spec.split(' ').collect();
    let (url, n, seed, out) = (
        parts[0],
        parts[1].parse::<u64>().unwrap(),
        parts[2].parse::<u64>().unwrap(),
        parts[3],
    );
    let mut o = opts(url);
    o.timeout = Duration::from_millis(500);
    o.connect_timeout = Duration::from_millis(200);
    let store = StoreHandle::open(&o);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(out)
        .unwrap();
    for i in 0..n {
        // 8 KiB to 200 KiB, different for every worker and step.
        let body = log(
            seed * 100_000 + i,
            200 + ((seed * 31 + i * 17) % 4800) as usize,
        );
        let t = Instant::now();
        if let Some(s) = store.store() {
            if let Ok(id) = s.put(body.as_bytes()) {
                use std::io::Write as _;
                // One write per line; a line cut short by a kill is skipped by the reader.
                let line = format!(
                    "{id} {}\n",
                    snip_store::restore::sha256_hex(body.as_bytes())
                );
                f.write_all(line.as_bytes()).unwrap();
            }
        }
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "a put took {:?}",
            t.elapsed()
        );
    }
}

/// 8 writer processes × `n` writes, some killed at random; `mid` runs once meanwhile.
/// Then every id still present restores to bytes with the right SHA-256.
fn writers_then_check(url: &str, n: u64, mid: impl FnOnce()) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ids");
    let exe = std::env::current_exe().unwrap();
    let mut kids: Vec<_> = (0..8u64)
        .map(|w| {
            Command::new(&exe)
                .args(["--exact", "worker", "--nocapture"])
                .env(
                    "SNIP_TEST_WORKER",
                    format!("{url} {n} {w} {}", out.display()),
                )
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    std::thread::sleep(Duration::from_millis(700));
    // Kill some writers mid-write (pseudo-random, from the clock).
    let t = Instant::now().elapsed().as_nanos() as usize + std::process::id() as usize;
    for k in [t % 8, (t / 8) % 8] {
        let _ = kids[k].kill();
    }
    mid();
    let started = Instant::now();
    for k in &mut kids {
        let _ = k.wait();
    }
    assert!(started.elapsed() < Duration::from_secs(120), "writers hung");
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    let store = Store::open(&opts(url)).expect("the store is back");
    let (mut present, mut total) = (0, 0);
    for line in text.lines() {
        let Some((id, sha)) = line.split_once(' ') else {
            continue;
        };
        // A line cut short by a kill (the next writer appended to it) is not an id.
        if !snip_store::id::is_valid_id(id) || sha.len() != 64 {
            continue;
        }
        total += 1;
        let r = store.restore(&RestoreRequest::full(id));
        match r.status {
            RestoreStatus::NotFound => {}
            RestoreStatus::Ok | RestoreStatus::TooLarge => {
                present += 1;
                assert_eq!(r.sha256.as_deref(), Some(sha), "{id}");
                // Read it whole, in pages, and hash it.
                let mut all = Vec::new();
                loop {
                    let mut q = RestoreRequest::bytes(id, all.len() as u64, None);
                    q.max_bytes = Some(65536);
                    let p = store.restore(&q);
                    assert_eq!(p.status, RestoreStatus::Ok, "{}", p.note);
                    let b = p.content_bytes().unwrap();
                    if b.is_empty() {
                        break;
                    }
                    all.extend_from_slice(&b);
                }
                assert_eq!(snip_store::restore::sha256_hex(&all), sha, "{id}");
            }
            s => panic!("{id}: {s:?} {}", r.note),
        }
    }
    eprintln!("{present} of {total} kept originals still present");
    assert!(total > 100, "only {total} writes succeeded");
    assert!(present > 0);
}

#[test]
fn many_writers_killed_under_eviction_pressure() {
    let Some(url) = need("SNIP_TEST_REDIS_URL") else {
        return;
    };
    writers_then_check(&url, 200, || {});
}

#[test]
fn server_restarted_mid_run() {
    let (Some(url), Some(restart)) = (need("SNIP_TEST_REDIS_URL"), need("SNIP_TEST_REDIS_RESTART"))
    else {
        return;
    };
    writers_then_check(&url, 120, || {
        let ok = Command::new("sh").args(["-c", &restart]).status().unwrap();
        assert!(ok.success());
    });
}

#[test]
fn cluster_node_down_fails_open_then_recovers() {
    let (Some(url), Some(kill), Some(revive)) = (
        need("SNIP_TEST_REDIS_CLUSTER_URL"),
        need("SNIP_TEST_REDIS_CLUSTER_KILL"),
        need("SNIP_TEST_REDIS_CLUSTER_REVIVE"),
    ) else {
        return;
    };
    // Before: kept and restorable.
    let store = Store::open(&opts(&url)).expect("cluster store");
    let ids: Vec<String> = (0..30)
        .map(|i| store.put(log(i, 400).as_bytes()).unwrap())
        .collect();
    assert!(Command::new("sh")
        .args(["-c", &kill])
        .status()
        .unwrap()
        .success());
    // A node down: every call answers (kept, or failed open), none hangs.
    let mut o = opts(&url);
    o.timeout = Duration::from_millis(100);
    o.connect_timeout = Duration::from_millis(100);
    let mut failed = 0;
    for i in 0..30 {
        let t = Instant::now();
        let h = StoreHandle::open(&o);
        let out = snip_store::compress_recorded(
            log(1000 + i, 3000).as_bytes(),
            &snip_core::Config::default(),
            &h,
            "test",
        );
        assert!(
            t.elapsed() < Duration::from_secs(3),
            "call {i} took {:?}",
            t.elapsed()
        );
        if out.id().is_none() {
            failed += 1;
            assert!(!out.lossy, "elided without keeping the original");
        }
    }
    assert!(failed > 0, "no call saw the node down");
    assert!(Command::new("sh")
        .args(["-c", &revive])
        .status()
        .unwrap()
        .success());
    // After recovery: every original kept before restores.
    let deadline = Instant::now() + Duration::from_secs(20);
    let store = loop {
        match Store::open(&opts(&url)) {
            Ok(s) if ids.iter().all(|id| s.contains(id)) => break s,
            _ if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(200)),
            Ok(_) => panic!("originals lost after the node came back"),
            Err(e) => panic!("cluster did not recover: {e}"),
        }
    };
    for (i, id) in ids.iter().enumerate() {
        let mut q = RestoreRequest::bytes(id, 0, None);
        q.max_bytes = Some(65536);
        let r = store.restore(&q);
        assert_eq!(r.content_bytes().unwrap(), log(i as u64, 400).as_bytes());
    }
}

/// Runs `snip` on a shortenable input with `url`: the output must be shortened
/// losslessly only (not retained), exit 0, and stderr must carry one line naming the
/// cause and never the password.
fn fails_open(url: &str, extra: &[(&str, &str)], cause: &str) {
    let home = tempfile::tempdir().unwrap();
    let mut c = snip(home.path(), url, "x", &["filter", "--format", "json"]);
    for (k, v) in extra {
        c.env(k, v);
    }
    c.env("SNIP_STORE_TIMEOUT_MS", "50")
        .env("SNIP_STORE_CONNECT_TIMEOUT_MS", "50");
    let t = Instant::now();
    let input = log(5, 3000);
    let out = common::pipe(c, input.as_bytes());
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "took {:?}",
        t.elapsed()
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("s3cret"), "{stderr}");
    let receipt: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let all = format!("{stderr}{receipt}");
    assert!(all.contains(cause), "wanted {cause:?} in {all}");
    assert!(!all.contains("s3cret"));
    // Nothing lost: nothing elided that is not kept.
    assert_eq!(receipt["retained"], false, "{receipt}");
    assert_eq!(receipt["lossy"], false, "{receipt}");
}

#[test]
fn bad_settings_fail_open_with_one_line() {
    let Some(url) = need("SNIP_TEST_REDIS_URL") else {
        return;
    };
    // A bad scheme.
    fails_open("http://127.0.0.1:1/0", &[], "SNIP_STORE_URL");
    // Nothing listening.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = free.local_addr().unwrap().port();
    drop(free);
    fails_open(&format!("redis://127.0.0.1:{port}/0"), &[], "refused");
    // `snip stats` says the store is not there, rather than report an empty ledger.
    let home = tempfile::tempdir().unwrap();
    let st = snip(
        home.path(),
        &format!("redis://127.0.0.1:{port}/0"),
        "x",
        &["stats"],
    )
    .output()
    .unwrap();
    let err = String::from_utf8_lossy(&st.stderr);
    assert!(!st.status.success() && err.contains("refused"), "{err}");
    // A server that is not Redis.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            use std::io::Write as _;
            let mut s = s;
            let _ = s.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
        }
    });
    fails_open(&format!("redis://127.0.0.1:{port}/0"), &[], "shared store");
    // A wrong password, in the URL or in SNIP_STORE_PASSWORD.
    if let Some(p) = need("SNIP_TEST_REDIS_AUTH_PORT") {
        fails_open(
            &format!("redis://:s3cret@127.0.0.1:{p}/0"),
            &[],
            "credentials",
        );
        fails_open(
            &format!("redis://127.0.0.1:{p}/0"),
            &[("SNIP_STORE_PASSWORD", "s3cret")],
            "credentials",
        );
    }
    // A value of the wrong type at snip's key (in a database of its own).
    let db15 = url
        .rsplit_once('/')
        .map_or(url.clone(), |(a, _)| format!("{a}/15"));
    let client = redis_cli(&db15, &["DEL", "snip:key"]);
    assert!(client);
    assert!(redis_cli(&db15, &["LPUSH", "snip:key", "x"]));
    fails_open(&db15, &[], "WRONGTYPE");
    assert!(redis_cli(&db15, &["DEL", "snip:key"]));
    // `snip config` masks the password.
    let home = tempfile::tempdir().unwrap();
    let cfg = snip(
        home.path(),
        "redis://u:s3cret@127.0.0.1:1/0",
        "x",
        &["config"],
    )
    .output()
    .unwrap();
    let text = String::from_utf8_lossy(&cfg.stdout);
    assert!(
        text.contains("redis://u:***@127.0.0.1:1/0") && !text.contains("s3cret"),
        "{text}"
    );
}

fn redis_cli(url: &str, args: &[&str]) -> bool {
    Command::new("redis-cli")
        .arg("-u")
        .arg(url)
        .args(args)
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn sh(cmd: &str) {
    let st = Command::new("sh").arg("-c").arg(cmd).status().unwrap();
    assert!(st.success(), "{cmd}");
}

/// A Claude Code hook call on machine `home` with `stdout` as the Bash output: the
/// id its marker cites.
fn hook_id(home: &Path, url: &str, stdout: &str) -> String {
    let payload = json!({
        "session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp",
        "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {},
        "tool_response": {"stdout": stdout, "stderr": "", "interrupted": false, "isImage": false},
    });
    let out = common::pipe(
        snip(home, url, "w", &["hook", "claude-code"]),
        payload.to_string().as_bytes(),
    );
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON reply");
    let s = v["hookSpecificOutput"]["updatedToolOutput"]["stdout"]
        .as_str()
        .expect("the output was shortened");
    assert!(!s.contains("not retained"), "{s}");
    marker_id(s)
}

/// One `snip mcp` process, called in turn.
struct Mcp {
    child: std::process::Child,
    out: BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Mcp {
    fn start(home: &Path, url: &str) -> Mcp {
        let mut child = snip(home, url, "m", &["mcp"])
            .env("SNIP_STORE_TIMEOUT_MS", "200")
            .env("SNIP_STORE_CONNECT_TIMEOUT_MS", "200")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let mut m = Mcp {
            child,
            out,
            next: 1,
        };
        m.call("initialize", json!({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}));
        m.send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        m
    }

    fn send(&mut self, v: Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{v}").unwrap();
        stdin.flush().unwrap();
    }

    fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}));
        loop {
            let mut line = String::new();
            assert!(self.out.read_line(&mut line).unwrap() > 0, "snip mcp ended");
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == json!(id) {
                return v;
            }
        }
    }

    /// The text a `snip_restore` call answers.
    fn restore(&mut self, args: Value) -> String {
        let v = self.call(
            "tools/call",
            json!({"name":"snip_restore","arguments":args}),
        );
        v["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_long_lived_server_started_while_redis_was_down_recovers() {
    let (Some(url), Some(stop), Some(start)) = (
        need("SNIP_TEST_REDIS_URL"),
        need("SNIP_TEST_REDIS_STOP"),
        need("SNIP_TEST_REDIS_START"),
    ) else {
        return;
    };
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let stdout = log(77, 3000);
    let id = hook_id(a.path(), &url, &stdout);
    sh(&stop);
    // Opened while Redis is down: calls answer `unavailable`, promptly.
    let mut mcp = Mcp::start(b.path(), &url);
    let ask = json!({"id": id, "mode": "lines", "start": 2, "end": 3});
    for _ in 0..3 {
        let t = Instant::now();
        let text = mcp.restore(ask.clone());
        assert!(text.contains("unavailable"), "{text}");
        assert!(
            t.elapsed() < Duration::from_secs(2),
            "took {:?}",
            t.elapsed()
        );
    }
    sh(&start);
    // Back: the same process restores (after its backoff, at most 2 s).
    let want: String = stdout
        .lines()
        .skip(1)
        .take(2)
        .map(|l| format!("{l}\\n"))
        .collect();
    let t = Instant::now();
    loop {
        let text = mcp.restore(ask.clone());
        if text.contains(&want) {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "still failing: {text}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // And a restart under a live process: its pooled connection is stale, the next
    // call makes a new one.
    sh(&stop);
    sh(&start);
    let text = mcp.restore(ask);
    assert!(text.contains(&want), "{text}");
}

#[test]
fn sentinel_finds_the_primary() {
    let (Some(url), Some(primary)) = (
        need("SNIP_TEST_REDIS_SENTINEL_URL"),
        need("SNIP_TEST_REDIS_SENTINEL_PRIMARY"),
    ) else {
        return;
    };
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let stdout = log(91, 3000);
    let id = hook_id(a.path(), &url, &stdout);
    // Kept on the primary the sentinel names, restored by another machine.
    assert!(redis_cli_out(&primary, &["EXISTS", &format!("snip:{{{id}}}:o")]).trim() == "1");
    assert_eq!(restore_all(b.path(), &url, &id), stdout.as_bytes());
    // A service the sentinel does not know: fails open with one line.
    let unknown = url
        .rsplit_once('/')
        .map(|(a, _)| format!("{a}/nosuch"))
        .unwrap();
    fails_open(&unknown, &[], "no primary");
    // No service named at all: a one-line settings error.
    let bare = url.rsplit_once('/').map(|(a, _)| a.to_string()).unwrap();
    fails_open(&bare, &[], "Sentinel service");
}

fn redis_cli_out(url: &str, args: &[&str]) -> String {
    let out = Command::new("redis-cli")
        .arg("-u")
        .arg(url)
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Bytes Redis has sent to its clients so far (`INFO stats`).
fn net_out(url: &str) -> u64 {
    redis_cli_out(url, &["INFO", "stats"])
        .lines()
        .find_map(|l| l.strip_prefix("total_net_output_bytes:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("INFO stats")
}

#[test]
fn lines_pages_of_a_large_original_read_a_window_through_its_index() {
    let Some(url) = need("SNIP_TEST_REDIS_URL") else {
        return;
    };
    // 4 MiB of lines of varied lengths, empty ones, one longer than a page, and no
    // final newline.
    let mut text = String::new();
    let mut long_line = 0;
    let mut i = 0u64;
    while text.len() < 4 << 20 {
        if i.is_multiple_of(97) {
            text.push('\n');
        }
        let n = (i.wrapping_mul(2_654_435_761) % 300) as usize;
        text.push_str(&format!("{i} {}\n", "x".repeat(n)));
        if i == 20_000 {
            long_line = text.lines().count() + 1;
            text.push_str(&"y".repeat(20_000));
            text.push('\n');
        }
        i += 1;
    }
    text.push_str("the end, unterminated");
    let total = text.lines().count() as u64;
    let shared = Store::open(&opts(&url)).unwrap();
    let id = shared.put(text.as_bytes()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let lid = Store::open(&StoreOptions::in_dir(dir.path()))
        .unwrap()
        .put(text.as_bytes())
        .unwrap();
    // The shared store answers every page exactly as the directory store does when
    // it has kept no line index (opened afresh: it reads the whole original).
    let same = |start: u64, end: Option<u64>, cap: usize| -> snip_store::RestoreResponse {
        let mut q = RestoreRequest::lines(&id, start, end);
        q.max_bytes = Some(cap);
        let r = shared.restore(&q);
        q.id = lid.clone();
        let local = Store::open(&StoreOptions::in_dir(dir.path())).unwrap();
        let mut want = local.restore(&q);
        want.id = r.id.clone();
        assert_eq!(r, want, "lines {start}..{end:?} cap {cap}");
        r
    };
    let l = long_line as u64;
    for (start, end, cap) in [
        (1, None, 8192),
        (2, Some(3), 8192),
        (63, Some(70), 100),
        (64, None, 8192),
        (65, None, 8192),
        (129, Some(129), 4),
        (l - 1, None, 8192),
        (l, None, 8192),
        (l, Some(l), 65536),
        (l + 1, None, 8192),
        (total - 1, None, 8192),
        (total, None, 8192),
        (total + 1, None, 8192),
        (5, Some(4), 8192),
        (0, None, 8192),
    ] {
        same(start, end, cap);
    }
    // Paged from the first line to the last, following `next`.
    let (mut at, mut pages, mut back) = (Some(1), 0, Vec::new());
    let before = net_out(&url);
    while let Some(n) = at {
        let r = same(n, None, 65536);
        assert_eq!(r.status, RestoreStatus::Ok, "{}", r.note);
        back.extend_from_slice(&r.content_bytes().unwrap());
        at = r.next;
        pages += 1;
    }
    let sent = net_out(&url) - before;
    assert_eq!(back, text.as_bytes());
    // Each page read a window (up to the next block of 64 lines plus the cap, at most
    // the cap + 256 KiB, plus the index and header reads), never the 4 MiB original.
    assert!(
        sent / pages < 65536 + 32 * 1024,
        "{sent} bytes for {pages} pages"
    );
    eprintln!("{pages} pages, {} bytes sent per page", sent / pages);
    // Without its index (evicted): the same answers, from the whole original (a
    // process that has not kept the index, opened afresh).
    assert!(redis_cli(&url, &["DEL", &format!("snip:{{{id}}}:l")]));
    for start in [65, l] {
        let shared = Store::open(&opts(&url)).unwrap();
        let q = RestoreRequest::lines(&id, start, None);
        let before = net_out(&url);
        let r = shared.restore(&q);
        assert!(net_out(&url) - before > 4 << 20, "read whole");
        let mut want = Store::open(&StoreOptions::in_dir(dir.path()))
            .unwrap()
            .restore(&RestoreRequest::lines(&lid, start, None));
        want.id = r.id.clone();
        assert_eq!(r, want, "lines {start}.. without the index");
    }
}
