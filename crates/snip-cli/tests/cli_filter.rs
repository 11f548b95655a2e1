//! The `snip` binary's own surfaces: filter (text and receipt), run (exit statuses),
//! config (errors name the variable), demo, and streaming of long inputs.

mod common;

use common::{capture, pipe};
use std::io::Write;
use std::process::{Command, Stdio};

fn snip(store: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_snip"));
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("SNIP_STORE_DIR", store);
    c
}

#[test]
fn filter_compresses_and_the_marker_restores() {
    let dir = tempfile::tempdir().unwrap();
    let input = capture("cargo-test-fail-notty.txt");
    let out = pipe(snip(dir.path()), &input);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.len() < input.len() / 2);
    assert!(text.contains("checksum mismatch for record 213"));
    let m = text
        .lines()
        .find_map(snip_core::marker::parse)
        .expect("a marker");
    let (a, b) = m.lines.unwrap();
    let id = m.id.expect("retained");
    let r = snip(dir.path())
        .args([
            "restore",
            &id,
            "--lines",
            &format!("{a}:{b}"),
            "--raw",
            "--max-bytes",
            "65536",
        ])
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let (s, e) = m.bytes.unwrap();
    let want = &input[s as usize..e as usize];
    assert!(want.starts_with(&r.stdout[..r.stdout.len().min(want.len())]));
}

#[test]
fn receipt_has_the_documented_fields() {
    let dir = tempfile::tempdir().unwrap();
    let input = capture("git-clone-progress-tty.txt");
    let mut cmd = snip(dir.path());
    cmd.args(["--format", "json"]);
    let out = pipe(cmd, &input);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["changed"], true);
    assert_eq!(v["original_bytes"], input.len());
    assert_eq!(
        v["output_bytes"].as_u64().unwrap() as usize,
        v["output"].as_str().unwrap().len()
    );
    assert_eq!(v["rules"][0]["id"], "terminal-render");
    assert!(v["rules"][0]["frames_removed"].as_u64().unwrap() > 300);
    assert!(v["id"].as_str().unwrap().starts_with("sn_"));
    // The one receipt every surface returns: the store's answer is in it too.
    assert_eq!(v["retention"], "retained");
    assert_eq!(v["retention_error"], serde_json::Value::Null);
    assert_eq!(v["output_encoding"], "utf-8");
    assert!(v.get("output_base64").is_none());
}

#[test]
fn receipt_says_when_output_is_not_exact_text_and_carries_the_bytes() {
    let dir = tempfile::tempdir().unwrap();
    // Small: returned as is, and `é` in Latin-1 is not UTF-8.
    let mut cmd = snip(dir.path());
    cmd.args(["--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&pipe(cmd, b"caf\xe9\n").stdout).unwrap();
    assert_eq!(v["output"], "caf\u{fffd}\n");
    assert_eq!(v["output_encoding"], "utf-8-lossy");
    assert_eq!(v["output_base64"], "Y2Fm6Qo=");
    assert_eq!(v["output_bytes"], 5);
    // Long and compressed: the base64 is exactly what text output prints.
    let input: Vec<u8> = (0..20_000)
        .flat_map(|i| format!("r_sum_ {i} sent\n").into_bytes())
        .map(|b| if b == b'_' { 0xe9 } else { b })
        .collect();
    let text = pipe(snip(dir.path()), &input).stdout;
    assert!(text.len() < input.len() && std::str::from_utf8(&text).is_err());
    let mut cmd = snip(dir.path());
    cmd.args(["--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&pipe(cmd, &input).stdout).unwrap();
    assert_eq!(v["output_encoding"], "utf-8-lossy");
    assert_eq!(v["output_bytes"], text.len());
    assert_eq!(
        v["output_base64"].as_str(),
        snip_store::JsonText::of(&text).base64.as_deref()
    );
}

/// `snip run` interrupted: the signal reaches the command, the output collected so
/// far is printed compressed, and snip exits 128+N.
#[test]
fn run_passes_signals_on_and_prints_what_it_collected() {
    let dir = tempfile::tempdir().unwrap();
    for (name, n) in [("INT", 2), ("TERM", 15), ("HUP", 1)] {
        let ready = dir.path().join(format!("ready-{name}"));
        // `exec` keeps the pid, so the pid written is the process that must end.
        // The output's first and last lines are unlike the lines between, so every
        // elision keeps them: they show what was collected before the signal.
        let script = format!(
            "echo collected-first; seq 1 30000; echo collected-last; echo $$ > {}.tmp; mv {0}.tmp {0}; exec sleep 60",
            ready.display()
        );
        let started = std::time::Instant::now();
        let child = snip(dir.path())
            .args(["run", "--", "sh", "-c", &script])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        while !ready.exists() {
            assert!(started.elapsed().as_secs() < 30, "{name}: never ready");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let sleeper = std::fs::read_to_string(&ready).unwrap().trim().to_string();
        let sent = Command::new("kill")
            .args([format!("-{name}"), child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let o = child.wait_with_output().unwrap();
        assert!(
            started.elapsed().as_secs() < 30,
            "{name}: waited for the command"
        );
        assert_eq!(o.status.code(), Some(128 + n), "{name}");
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.starts_with("collected-first\n"), "{name}: {text}");
        assert!(text.ends_with("collected-last\n"), "{name}: {text}");
        assert!(text.contains("[snip: "), "{name}: not compressed: {text}");
        // The command did not outlive snip.
        let alive = Command::new("kill")
            .args(["-0", &sleeper])
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(!alive.success(), "{name}: pid {sleeper} still running");
    }
}

#[test]
fn run_keeps_exit_status_signals_and_reports_missing_commands() {
    let dir = tempfile::tempdir().unwrap();
    let st = |args: &[&str]| snip(dir.path()).args(args).output().unwrap();
    let o = st(&["run", "--", "sh", "-c", "echo out; echo err >&2; exit 3"]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "out\nerr\n");
    let o = st(&["run", "--", "sh", "-c", "kill -9 $$"]);
    assert_eq!(o.status.code(), Some(137));
    // snip's own output cannot be written (a full disk): still the command's
    // status, and one line that says what failed.
    if std::path::Path::new("/dev/full").exists() {
        let o = snip(dir.path())
            .args(["run", "--", "sh", "-c", "echo hi; exit 3"])
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(3));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("No space left") && err.contains("status 3"),
            "{err}"
        );
    }
    // A bad setting still runs the command (output passed through, one warning).
    let o = snip(dir.path())
        .env("SNIP_MAX_BYTES", "lots")
        .args(["run", "--", "sh", "-c", "echo ran; exit 5"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(5));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "ran\n");
    assert!(String::from_utf8_lossy(&o.stderr).contains("SNIP_MAX_BYTES"));
    let o = st(&["run", "--", "definitely-not-a-command-snip"]);
    assert_eq!(o.status.code(), Some(127));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    // Found but not executable (a file without the x bit, a directory): 126, as in
    // a shell.
    let script = dir.path().join("not-executable.sh");
    std::fs::write(&script, "#!/bin/sh\necho ran\n").unwrap();
    for path in [&script, &dir.path().to_path_buf()] {
        let o = st(&["run", "--", path.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(126), "{path:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("cannot be executed"), "{err}");
    }
    // A command that draws progress: compressed, and its status kept.
    let o = st(&[
        "run",
        "--",
        "sh",
        "-c",
        "for i in $(seq 1 300); do printf '\\rstep %s/300' $i; done; echo; echo done; exit 1",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.starts_with("step 300/300\ndone\n[snip: removed 299 redrawn progress frames"),
        "{text}"
    );
}

#[test]
fn bad_settings_are_one_line_naming_the_variable() {
    let dir = tempfile::tempdir().unwrap();
    for (var, val) in [
        ("SNIP_MAX_BYTES", "lots"),
        ("SNIP_ENABLED", "maybe"),
        ("SNIP_STORE_TTL_HOURS", "-1"),
    ] {
        let o = snip(dir.path())
            .env(var, val)
            .arg("config")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{var}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(var), "{err}");
    }
}

/// `snip config --rules` prints the core's rule table in execution order, as text and
/// as JSON, and works even when a setting does not parse (it reads no settings).
#[test]
fn config_rules_lists_the_rule_table() {
    let dir = tempfile::tempdir().unwrap();
    let want: Vec<&str> = snip_core::RuleId::ALL.iter().map(|r| r.as_str()).collect();
    let o = snip(dir.path())
        .env("SNIP_MAX_BYTES", "lots")
        .args(["config", "--rules"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(
        rows.iter().map(|r| r[0]).collect::<Vec<_>>(),
        want,
        "{text}"
    );
    for r in &rows {
        assert_eq!(r.len(), 3, "{r:?}");
        assert!(["gate", "lossless", "lossy"].contains(&r[1]), "{r:?}");
        assert!(!r[2].is_empty());
    }
    assert_eq!(rows[0][1], "gate");
    assert_eq!(rows.last().unwrap()[1], "lossy");
    let o = snip(dir.path())
        .args(["config", "--rules", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let list = v.as_array().unwrap();
    let ids: Vec<&str> = list.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, want);
    for (r, row) in list.iter().zip(&rows) {
        assert_eq!(r["stage"], row[1]);
        assert_eq!(r["summary"], row[2]);
        assert_eq!(r["lossy"], row[1] == "lossy" || row[0] == "json-fields");
    }
}

#[test]
fn demo_runs_on_bundled_captures() {
    let dir = tempfile::tempdir().unwrap();
    let o = snip(dir.path()).arg("demo").output().unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("git-clone-progress-tty") && text.contains("total:"),
        "{text}"
    );
    assert!(text.contains("git-diff-requests-notty") && text.contains("rules: diff-protect"));
    assert!(
        text.contains("restore round trip") && text.contains("identical to the original's: yes"),
        "{text}"
    );
}

#[test]
fn demo_without_a_store_dir_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let o = snip(dir.path())
        .arg("demo")
        .env_remove("SNIP_STORE_DIR")
        .env("HOME", &home)
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("identical to the original's: yes"), "{text}");
    assert!(text.contains("temporary store"), "{text}");
    assert_eq!(std::fs::read_dir(&home).unwrap().count(), 0);
}

#[test]
fn long_input_streams_with_the_error_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mut input = Vec::new();
    let mut i = 0u64;
    while input.len() < 20 << 20 {
        i += 1;
        if i == 300_000 {
            input.extend_from_slice(b"FATAL: out of disk space on /var\n");
        }
        input.extend_from_slice(format!("worker {} processed item {i}\n", i % 7).as_bytes());
    }
    // Past the store's entry cap (here the least it can be: 16 MiB) it streams.
    let mut cmd = snip(dir.path());
    cmd.env("SNIP_STORE_MAX_ENTRY_BYTES", (16u64 << 20).to_string());
    let out = pipe(cmd, &input);
    assert!(out.status.success());
    assert!(out.stdout.len() < 30_000, "{}", out.stdout.len());
    let shown = out.stdout.len();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("FATAL: out of disk space on /var"));
    assert!(text.contains("original not retained"));
    // The ledger has its row: sizes counted on the way, nothing retained.
    let ledger = std::fs::read_to_string(dir.path().join("ledger.jsonl")).expect("a ledger");
    let row: serde_json::Value = serde_json::from_str(ledger.lines().last().unwrap()).unwrap();
    assert_eq!(row["before"], input.len() as u64, "{row}");
    assert_eq!(row["after"], shown as u64, "{row}");
    assert_eq!(row["retained"], false);
    assert_eq!(row["lossy"], true);
    assert_eq!(row["rules"], serde_json::json!(["head-tail-elide"]));
}

/// Issue 16 item 11 and issue 19: `snip < FILE` and `cat FILE | snip` give the same
/// output for an input past 16 MiB; the store keeps its original (entry cap 32 MiB),
/// so it is compressed in memory and retained, not streamed with nothing kept.
#[test]
fn a_file_and_a_pipe_give_the_same_output() {
    let dir = tempfile::tempdir().unwrap();
    let mut input = Vec::new();
    let mut i = 0u64;
    while input.len() < 20 << 20 {
        i += 1;
        if i.is_multiple_of(150_000) {
            input.extend_from_slice(format!("\x1b[31merror: item {i} failed\x1b[0m\n").as_bytes());
        }
        input.extend_from_slice(format!("worker {} processed item {i}\r\n", i % 7).as_bytes());
    }
    let file = dir.path().join("input.log");
    std::fs::write(&file, &input).unwrap();
    let from_file = snip(&dir.path().join("store"))
        .stdin(std::fs::File::open(&file).unwrap())
        .output()
        .unwrap();
    assert!(from_file.status.success());
    let from_pipe = pipe(snip(&dir.path().join("store")), &input);
    assert!(from_pipe.status.success());
    let ids = |o: &[u8]| {
        let t = String::from_utf8_lossy(o).into_owned();
        assert!(!t.contains("original not retained"), "{t}");
        assert!(t.contains("error: item 150000 failed"), "{t}");
        t
    };
    // The same original gives the same id, so the outputs are byte for byte equal.
    assert_eq!(ids(&from_file.stdout), ids(&from_pipe.stdout));
    assert!(from_file.stdout.len() < 30_000);

    // With the store off the in-memory cap is 16 MiB: both stream (the file from its
    // first byte, the pipe after the cap's worth read into memory), alike.
    let off = |mut c: Command| {
        c.env("SNIP_STORE", "0");
        c
    };
    let from_file = off(snip(&dir.path().join("store")))
        .stdin(std::fs::File::open(&file).unwrap())
        .output()
        .unwrap();
    let from_pipe = pipe(off(snip(&dir.path().join("store"))), &input);
    assert!(from_file.status.success() && from_pipe.status.success());
    let text = String::from_utf8_lossy(&from_file.stdout);
    assert!(text.contains("original not retained"), "{text}");
    assert!(from_file.stdout == from_pipe.stdout, "{text}");
}

#[test]
fn a_closed_stdout_ends_quietly_with_status_0() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let home = dir.path().join("home");
    // Something to print: a retained original (its receipt is far over a pipe buffer).
    let input: Vec<u8> = (0..20_000)
        .flat_map(|i| format!("request {i} served\n").into_bytes())
        .collect();
    let o = pipe(snip(&store), &input);
    assert!(o.status.success());
    let commands: &[&[&str]] = &[
        &["stats"],
        &["stats", "--json"],
        &["gc"],
        &["gc", "--json"],
        &["config"],
        &["config", "--json"],
        &["uninstall", "claude-code"],
        &["demo"],
        &["--format", "json"],
    ];
    for args in commands {
        // The read end is closed before the command starts: its first write fails.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let mut cmd = snip(&store);
        cmd.args(*args)
            .env("HOME", &home)
            .env("XDG_STATE_HOME", &home)
            .stdout(writer)
            .stderr(Stdio::piped())
            .stdin(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        drop(cmd);
        let mut stdin = child.stdin.take().unwrap();
        let data = input.clone();
        let w = std::thread::spawn(move || {
            let _ = stdin.write_all(&data);
        });
        let o = child.wait_with_output().unwrap();
        w.join().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        assert!(err.is_empty(), "{args:?}: {err}");
    }
}

#[test]
fn format_is_the_filters_flag_and_run_rejects_it() {
    let dir = tempfile::tempdir().unwrap();
    // Before `run` it would be ignored (text printed): refused, the command not run.
    let o = snip(dir.path())
        .args(["--format", "json", "run", "--", "sh", "-c", "echo ran"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        o.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("--format") && err.contains("snip run"),
        "{err}"
    );
    let o = snip(dir.path())
        .args(["--format", "json", "stats"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    // Before `filter` it is the filter's.
    let mut cmd = snip(dir.path());
    cmd.args(["--format", "json", "filter"]);
    let o = pipe(cmd, b"hello\n");
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["output"], "hello\n");
}

/// A bad core setting loses nothing: the input passes through, one line says why.
#[test]
fn filter_with_a_bad_setting_passes_the_input_through() {
    let dir = tempfile::tempdir().unwrap();
    let input = capture("rsync-progress-tty.txt");
    let mut cmd = snip(dir.path());
    cmd.env("SNIP_MAX_BYTES", "lots");
    let o = pipe(cmd, &input);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(o.stdout, input);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("SNIP_MAX_BYTES") && err.contains("unchanged"),
        "{err}"
    );
}

/// Over the budget with an original the store cannot keep: lossless rules only, and
/// one line on stderr says why the output is over the budget.
#[test]
fn an_original_the_store_cannot_keep_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let input = capture("ls-laR-site-packages-notty.txt");
    let mut cmd = snip(dir.path());
    cmd.env("SNIP_STORE_MAX_ENTRY_BYTES", "1000");
    let o = pipe(cmd, &input);
    assert_eq!(o.status.code(), Some(0));
    assert!(o.stdout.len() > 24_576, "lossless only: {}", o.stdout.len());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("could not be stored"), "{err}");
    assert!(err.contains("SNIP_STORE=0"), "{err}");
}

/// A JSON document past the in-memory cap is still read whole and elided inside, so
/// the output stays valid JSON (a stream could only pass it through).
#[test]
fn a_large_json_document_stays_json() {
    let dir = tempfile::tempdir().unwrap();
    let mut json = b"{\n  \"packages\": [\n".to_vec();
    let mut i = 0;
    while json.len() < 17 * 1024 * 1024 {
        json.extend_from_slice(
            format!("    {{\"name\": \"pkg-{i}\", \"version\": \"1.0.{i}\", \"ok\": true}},\n")
                .as_bytes(),
        );
        i += 1;
    }
    json.extend_from_slice(b"    {\"name\": \"last\", \"ok\": true}\n  ]\n}\n");
    let o = pipe(snip(dir.path()), &json);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.stdout.len() < 64 * 1024, "{}", o.stdout.len());
    serde_json::from_slice::<serde_json::Value>(&o.stdout).expect("valid JSON");
}

/// A command-line error is one line on stderr with the usage line, status 2 (clap's
/// own message ran to four to six lines); `--help` still prints the whole help.
#[test]
fn a_bad_flag_is_one_line_with_the_usage() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--bogus"], "unexpected argument '--bogus'"),
        (
            &["restore"],
            "required arguments were not provided: <ID|CALL>",
        ),
        (&["restore", "x", "--lines", "-1:3"], "use '-- -1'"),
        (
            &["restore", "x", "--bytes", "1:2", "--lines", "1:2"],
            "cannot be used with",
        ),
        (
            &["restore", "x", "--bytes", "0:5", "--context", "2"],
            "--context applies to a search only",
        ),
    ];
    for (args, want) in cases {
        let o = snip(dir.path()).args(*args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("snip") && err.contains(want),
            "{args:?}: {err}"
        );
    }
    let o = snip(dir.path())
        .args(["restore", "--bogus"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("usage: snip restore"), "{err}");
    // A bad value (clap renders it without a usage line) gets one too: message,
    // usage, try --help, on one line.
    for (args, usage) in [
        (&["--format", "xml"][..], "usage: snip [OPTIONS]"),
        (&["filter", "--format", "xml"][..], "usage: snip filter"),
        (
            &["restore", "x", "--align", "word"][..],
            "usage: snip restore",
        ),
    ] {
        let o = snip(dir.path()).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains(usage) && err.contains("try '--help'"),
            "{args:?}: {err}"
        );
    }
    let o = snip(dir.path()).arg("--help").output().unwrap();
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).lines().count() > 10);
}

/// Fail open under a memory limit: with `ulimit -v 40000` a 17 MB input cannot be
/// held, and it comes out unchanged with status 0 instead of nothing with status 2.
#[test]
fn an_input_too_large_for_the_memory_limit_passes_through() {
    let dir = tempfile::tempdir().unwrap();
    let mut input = Vec::new();
    let mut i = 0u64;
    while input.len() < 17 << 20 {
        i += 1;
        input.extend_from_slice(format!("worker {} processed item {i}\n", i % 7).as_bytes());
    }
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg("ulimit -v 40000; exec \"$0\"")
        .arg(env!("CARGO_BIN_EXE_snip"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("SNIP_STORE_DIR", dir.path());
    let out = pipe(cmd, &input);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {err}", out.status);
    assert!(
        out.stdout == input || (!out.stdout.is_empty() && out.stdout.len() < input.len()),
        "{} bytes out of {}: {err}",
        out.stdout.len(),
        input.len()
    );
}

/// A Ctrl-C passed on to a command that ignores it: the command's own status (0) is
/// reported, not 130.
#[test]
fn run_reports_the_status_of_a_command_that_ignored_the_signal() {
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ready");
    let script = format!(
        "trap '' INT; seq 1 3000; touch {}; sleep 1; exit 0",
        ready.display()
    );
    let started = std::time::Instant::now();
    let child = snip(dir.path())
        .args(["run", "--", "sh", "-c", &script])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    while !ready.exists() {
        assert!(started.elapsed().as_secs() < 30, "never ready");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).ends_with("3000\n"));
}
