//! The real `snip` binary against a real store in a temp dir: `restore`, `stats`,
//! `gc`, and `filter` with a read-only or full store.

use snip_store::{RestoreRequest, Store, StoreOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const SNIP: &str = env!("CARGO_BIN_EXE_snip");

fn corpus(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/corpus")
            .join(name),
    )
    .unwrap()
}

/// A long log of distinct lines (nothing lossless shrinks it), far over the budget.
fn distinct_log() -> Vec<u8> {
    (1..=20_000)
        .map(|i| format!("2024-05-01 request {i} served in 3 ms\n"))
        .collect::<String>()
        .into_bytes()
}

struct Env {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("store");
        Env { _tmp: tmp, dir }
    }

    fn store(&self) -> Store {
        Store::open(&StoreOptions::in_dir(&self.dir)).unwrap()
    }

    fn cmd(&self, prefix: &[&str], args: &[&str]) -> Command {
        let mut c = match prefix.split_first() {
            Some((p, rest)) => {
                let mut c = Command::new(p);
                c.args(rest).arg(SNIP);
                c
            }
            None => Command::new(SNIP),
        };
        c.args(args)
            .env_remove("SNIP_STORE")
            .env("SNIP_STORE_DIR", &self.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    fn run_with(
        &self,
        prefix: &[&str],
        args: &[&str],
        envs: &[(&str, &str)],
        stdin: &[u8],
    ) -> Output {
        let mut c = self.cmd(prefix, args);
        for (k, v) in envs {
            c.env(k, v);
        }
        let mut child = c.spawn().unwrap();
        let mut i = child.stdin.take().unwrap();
        let data = stdin.to_vec();
        let w = std::thread::spawn(move || {
            let _ = i.write_all(&data);
        });
        let out = child.wait_with_output().unwrap();
        w.join().unwrap();
        out
    }

    fn run(&self, args: &[&str]) -> Output {
        self.run_with(&[], args, &[], b"")
    }
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

fn one_line_stderr(o: &Output) -> String {
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(
        e.trim_end().lines().count(),
        1,
        "stderr is not one line: {e:?}"
    );
    e
}

#[test]
fn restore_pages_a_capture_back_exactly_through_the_binary() {
    let env = Env::new();
    let original = corpus("cargo-metadata-json-notty.txt");
    let id = env.store().put(&original).unwrap();
    let mut got = Vec::new();
    let mut start = 0u64;
    loop {
        let o = env.run(&[
            "restore",
            &id,
            "--bytes",
            &format!("{start}:"),
            "--max-bytes",
            "65536",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v = json(&o);
        assert_eq!(v["status"], "ok");
        assert_eq!(v["total_bytes"], original.len());
        got.extend_from_slice(v["content"].as_str().unwrap().as_bytes());
        match v["next"].as_u64() {
            Some(n) => start = n,
            None => break,
        }
    }
    assert!(got == original, "pages differ from the original");
}

#[test]
fn restore_raw_prints_exact_bytes_even_for_invalid_utf8() {
    let env = Env::new();
    let mut original = b"caf\xe9\r\nline two\n".to_vec();
    original.extend_from_slice(&[0xff, 0xfe, b'\n']);
    let id = env.store().put(&original).unwrap();
    let o = env.run(&["restore", &id, "--raw"]);
    assert!(o.status.success());
    assert_eq!(o.stdout, original);
    let o = env.run(&["restore", &id, "--lines", "2:2", "--raw"]);
    assert_eq!(o.stdout, b"line two\n");
    let v = json(&env.run(&["restore", &id, "--bytes", "0:6"]));
    assert_eq!(v["encoding"], "utf-8-lossy");
    assert_eq!(v["content_base64"], "Y2Fm6Q0K");
}

/// A line longer than the response cap comes back cut; `--raw` says so on stderr
/// as the command that reads the rest, from the next byte, instead of passing the
/// cut off as the line.
#[test]
fn restore_raw_says_when_a_line_is_cut() {
    let env = Env::new();
    let mut original = b"short\n".to_vec();
    original.extend(std::iter::repeat_n(b'x', 20_000));
    original.extend_from_slice(b"\nafter\n");
    let id = env.store().put(&original).unwrap();
    let o = env.run(&["restore", &id, "--lines", "2:2", "--raw"]);
    assert!(o.status.success());
    assert_eq!(o.stdout.len(), 8192);
    let err = one_line_stderr(&o);
    assert_eq!(
        err.trim_end(),
        format!(
            "snip restore: more follows; continue with snip restore {id} --bytes 8198:20007 --raw"
        )
    );
    // A range to the last line: the rest runs to the end of the original.
    let o = env.run(&["restore", &id, "--lines", "2:3", "--raw"]);
    assert!(one_line_stderr(&o).contains(&format!("snip restore {id} --bytes 8198: --raw")));
    // A whole line: nothing on stderr.
    let o = env.run(&["restore", &id, "--lines", "3:3", "--raw"]);
    assert_eq!(
        (o.stdout.as_slice(), o.stderr.as_slice()),
        (&b"after\n"[..], &b""[..])
    );
}

/// A tiny deterministic generator for test inputs (xorshift64*).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n.max(1)
    }
}

/// An original of `n` lines: short, empty and long ones (over any page size
/// tried), with multi-byte UTF-8 and invalid bytes, maybe no final newline.
fn lines_with_long_ones(rng: &mut Rng, n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        let len = match rng.below(4) {
            0 => 0,
            1 => rng.below(40),
            _ => 600 + rng.below(12_000),
        };
        let mut line = Vec::new();
        while (line.len() as u64) < len {
            match rng.below(10) {
                0 => line.extend_from_slice("é".as_bytes()),
                1 => line.extend_from_slice("日本".as_bytes()),
                2 => line.push(0xff),
                3 => line.push(b' '),
                _ => line.push(b'a' + rng.below(26) as u8),
            }
        }
        out.extend_from_slice(&line);
        if i + 1 < n || rng.below(2) == 0 {
            out.push(b'\n');
        }
    }
    out
}

/// Lines `a..=b` (1-based) of `original`, `b` clamped to the last line.
fn line_range(original: &[u8], a: usize, b: Option<usize>) -> Vec<u8> {
    let lines: Vec<&[u8]> = original.split_inclusive(|&c| c == b'\n').collect();
    let b = b.unwrap_or(lines.len()).min(lines.len());
    lines[a - 1..b].concat()
}

/// Following `--raw`'s "continue with" commands from a `--lines` page reproduces the
/// range exactly, over originals with lines longer than the page, at several page
/// sizes: each command resumes at the byte after the page it follows.
#[test]
fn restore_raw_continue_chains_reproduce_the_range_exactly() {
    let env = Env::new();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut runs = 0;
    for _ in 0..3 {
        let original = lines_with_long_ones(&mut rng, 12);
        let id = env.store().put(&original).unwrap();
        let total = original.split_inclusive(|&c| c == b'\n').count();
        for cap in ["64", "700", "8192"] {
            let a = 1 + rng.below(total as u64 / 2) as usize;
            let b = (rng.below(2) == 0).then(|| a + rng.below(total as u64) as usize);
            let range = match b {
                Some(b) => format!("{a}:{b}"),
                None => format!("{a}:"),
            };
            let mut args: Vec<String> = [
                "restore",
                &id,
                "--lines",
                &range,
                "--max-bytes",
                cap,
                "--raw",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            let mut got = Vec::new();
            loop {
                runs += 1;
                let refs: Vec<&str> = args.iter().map(String::as_str).collect();
                let o = env.run(&refs);
                assert!(
                    o.status.success(),
                    "{args:?}: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
                got.extend_from_slice(&o.stdout);
                let err = String::from_utf8_lossy(&o.stderr).into_owned();
                let Some((_, cmd)) = err.split_once("continue with snip ") else {
                    assert_eq!(err, "", "{args:?}");
                    break;
                };
                args = cmd.split_whitespace().map(str::to_string).collect();
            }
            let want = line_range(&original, a, b);
            assert!(
                got == want,
                "lines {range} at cap {cap}: got {} bytes, want {}",
                got.len(),
                want.len()
            );
        }
    }
    assert!(
        runs > 30,
        "the chains were too short to test anything: {runs}"
    );
}

#[test]
fn restore_modes_and_a_pasted_marker_call() {
    let env = Env::new();
    let log = distinct_log();
    let id = env.store().put(&log).unwrap();
    let v = json(&env.run(&["restore", &id, "--lines", "12000:12001"]));
    assert_eq!(
        v["content"],
        "2024-05-01 request 12000 served in 3 ms\n2024-05-01 request 12001 served in 3 ms\n"
    );
    assert_eq!(
        (
            v["start"].as_u64(),
            v["end"].as_u64(),
            v["total_lines"].as_u64()
        ),
        (Some(12000), Some(12001), Some(20000))
    );
    let v = json(&env.run(&["restore", &id, "--search", "request 777 ", "--context", "0"]));
    assert_eq!(v["matches"][0]["line"], 777);
    assert_eq!(v["content"], "777:2024-05-01 request 777 served in 3 ms\n");
    let call = format!("snip_restore(id=\"{id}\", mode=\"lines\", start=3, end=4)");
    let o = env.run(&["restore", &call, "--raw"]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "2024-05-01 request 3 served in 3 ms\n2024-05-01 request 4 served in 3 ms\n"
    );
    // The same call as it reads inside a JSON string (a marker in a JSON tool result).
    let escaped = format!("snip_restore(id=\\\"{id}\\\", mode=\\\"lines\\\", start=3, end=4)");
    let o = env.run(&["restore", &escaped, "--raw"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "2024-05-01 request 3 served in 3 ms\n2024-05-01 request 4 served in 3 ms\n"
    );
    // --raw with no match says so on stderr (it printed nothing anywhere).
    let o = env.run(&["restore", &id, "--search", "no such text", "--raw"]);
    assert!(o.status.success() && o.stdout.is_empty());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no match for \"no such text\""), "{err}");
    // --raw with more to come says how to continue, on stderr.
    let o = env.run(&["restore", &id, "--raw", "--max-bytes", "100"]);
    assert_eq!(o.stdout.len(), 100);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--bytes 100:"));
    // --align token: the page ends before the word the cap would split, and the hint
    // keeps the flag.
    // (Byte 97 is inside "served" on the third line.)
    let plain = env
        .run(&["restore", &id, "--raw", "--max-bytes", "97"])
        .stdout;
    let o = env.run(&[
        "restore",
        &id,
        "--raw",
        "--max-bytes",
        "97",
        "--align",
        "token",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(plain.len(), 97);
    assert!(o.stdout.len() == 93 && plain.starts_with(&o.stdout));
    assert!(o.stdout.last().unwrap().is_ascii_whitespace());
    let hint = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        hint.contains(&format!("--bytes {}:", o.stdout.len())) && hint.contains("--align token"),
        "{hint}"
    );
    // A paged search: the hint keeps every flag given, and running it goes on.
    let args = [
        "restore",
        &id,
        "--search",
        "5 served",
        "--context",
        "1",
        "--max-bytes",
        "300",
        "--raw",
    ];
    let o = env.run(&args);
    let first = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    let hint = err
        .trim_end()
        .split_once("continue with ")
        .unwrap_or_else(|| panic!("no hint: {err}"))
        .1
        .to_string();
    assert!(hint.starts_with("snip restore "), "{hint}");
    assert!(
        hint.contains(" --context 1") && hint.contains(" --max-bytes 300"),
        "{hint}"
    );
    let script = format!("{SNIP} {}", hint.strip_prefix("snip ").unwrap());
    let next = Command::new("sh")
        .args(["-c", &script])
        .env_remove("SNIP_STORE")
        .env("SNIP_STORE_DIR", &env.dir)
        .output()
        .unwrap();
    assert!(
        next.status.success(),
        "{}",
        String::from_utf8_lossy(&next.stderr)
    );
    let more = String::from_utf8_lossy(&next.stdout);
    assert!(!more.is_empty() && *more != first, "{more}");
    // Context 1 kept: context lines (`N-…`) come with the matches (`N:…`).
    let context_line = |l: &str| {
        l.split_once('-')
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    assert!(more.lines().any(context_line), "{more}");
}

#[test]
fn restore_statuses_exit_non_zero_with_one_line() {
    let env = Env::new();
    let id = env.store().put(&distinct_log()).unwrap();
    let unknown = "sn_0123456789abcdef01234567";
    for (args, code, status) in [
        (vec!["restore", unknown], 1, "not_found"),
        (vec!["restore", "../x"], 2, "invalid"),
        (vec!["restore", "/etc/passwd", "--raw"], 2, "invalid"),
        (vec!["restore", &id, "--lines", "0:3"], 2, "invalid"),
        (vec!["restore", &id, "--full"], 3, "too_large"),
    ] {
        let o = env.run(&args);
        assert_eq!(o.status.code(), Some(code), "{args:?}");
        let e = one_line_stderr(&o);
        assert!(e.contains(status), "{e}");
        if !args.contains(&"--raw") {
            assert_eq!(json(&o)["status"], status);
        } else {
            assert!(o.stdout.is_empty());
        }
    }
    let o = env.run(&["restore", &id, "--bytes", "x:y"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(one_line_stderr(&o).contains("--bytes takes A:B"));
    let o = env.run_with(&[], &["restore", &id], &[("SNIP_STORE", "0")], b"");
    assert_eq!(o.status.code(), Some(4));
    assert_eq!(json(&o)["status"], "unavailable");
}

/// The JSON request form (the MCP tool's arguments) reads as docs/restore.md says;
/// a malformed one, or a call to another tool, says what is wrong with it rather
/// than calling the whole argument a bad id.
#[test]
fn restore_takes_a_json_request_and_names_each_error() {
    let env = Env::new();
    let log = distinct_log();
    let id = env.store().put(&log).unwrap();
    let req = format!(r#"{{"id":"{id}","mode":"lines","start":2,"end":3}}"#);
    let o = env.run(&["restore", &req, "--raw"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.stdout, line_range(&log, 2, Some(3)));
    // Flags still apply over it.
    let o = env.run(&[
        "restore",
        &format!(r#" {{"id":"{id}"}}"#),
        "--lines",
        "4:4",
        "--raw",
    ]);
    assert_eq!(o.stdout, line_range(&log, 4, Some(4)));
    for (arg, says) in [
        (
            format!(r#"{{"id":"{id}","mode":"chars"}}"#),
            "unknown variant `chars`",
        ),
        (
            format!(r#"{{"id":"{id}","offset":1}}"#),
            "unknown field `offset`",
        ),
        (format!(r#"{{"id":"{id}""#), "malformed restore request"),
        (
            format!(r#"evil_tool(id="{id}")"#),
            "\"evil_tool\" is not the restore tool",
        ),
    ] {
        refused_as_invalid(&env, &arg, says);
    }
}

/// `snip restore ARG` answers `invalid` (exit 2) with one line on stderr that says
/// `says` (and never that the argument is not an id: it is read as what it is).
fn refused_as_invalid(env: &Env, arg: &str, says: &str) {
    let o = env.run(&["restore", arg]);
    assert_eq!(o.status.code(), Some(2), "{arg}");
    let e = one_line_stderr(&o);
    assert!(
        e.contains(says) && !e.contains("is not a snip id"),
        "{arg}: {e}"
    );
    assert_eq!(json(&o)["status"], "invalid");
}

/// A whole marker line pasted as the argument restores what its call says; a marker
/// whose original was not kept, or a line that is not a whole marker, says what to
/// do in one line; a value that is neither a string nor a whole number names itself.
#[test]
fn restore_takes_a_pasted_marker_line() {
    let env = Env::new();
    let log = distinct_log();
    let o = env.run_with(&[], &[], &[], &log);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    let marker = out
        .lines()
        .find(|l| l.starts_with("[snip: ") && l.contains("mode=\"lines\""))
        .expect("a marker with a lines call");
    let m = snip_core::marker::parse(marker).unwrap();
    let (a, b) = m.lines.unwrap();
    let o = env.run(&["restore", marker, "--raw"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // A page of the range (the rest follows with the command stderr names).
    let want = line_range(&log, a as usize, Some(b as usize));
    assert!(
        !o.stdout.is_empty() && want.starts_with(&o.stdout),
        "{} of {} bytes",
        o.stdout.len(),
        want.len()
    );
    let gone = "[snip: 5 lines elided · head-tail-elide · lines 3-7 · original not retained (re-run the command with narrower output to see the rest)]";
    for (arg, says) in [
        (gone.to_string(), "original was not kept"),
        (
            format!("[snip: x · y · restore: {}", m.call.as_deref().unwrap()),
            "not the marker line around it",
        ),
        (
            r#"snip_restore(id="sn_0123456789abcdef01234567", mode="lines", start=-3, end=4)"#
                .to_string(),
            "start=-3 is neither a quoted string nor a whole number",
        ),
        (
            r#"snip_restore(id="sn_0123456789abcdef01234567", mode="lines", start="3")"#
                .to_string(),
            "start takes a whole number, not a quoted string",
        ),
    ] {
        refused_as_invalid(&env, &arg, says);
    }
}

#[test]
fn stats_agree_with_the_ledger_and_count_a_rewrite_that_saved_nothing() {
    let env = Env::new();
    let inputs: Vec<Vec<u8>> = vec![
        corpus("git-diff-requests-notty.txt"), // over the budget, returned as is
        distinct_log(),                        // lossy elision
        (0..50)
            .map(|i| format!("\x1b[32mline {i} ok\x1b[0m\n"))
            .collect::<String>()
            .into_bytes(), // small, lossless
        corpus("tqdm-single-tty.txt"),         // progress frames
    ];
    let mut receipts = Vec::new();
    for input in &inputs {
        let o = env.run_with(&[], &["filter", "--format", "json"], &[], input);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        receipts.push(json(&o));
    }
    let text = std::fs::read_to_string(env.dir.join("ledger.jsonl")).unwrap();
    let rows: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), inputs.len(), "one row per rewrite: {text}");
    for (row, r) in rows.iter().zip(&receipts) {
        assert_eq!(row["before"], r["original_bytes"]);
        assert_eq!(row["after"], r["output_bytes"]);
        assert_eq!(row["id"], r["id"]);
        assert_eq!(row["source"], "filter");
    }
    assert_eq!(
        rows[0]["before"], rows[0]["after"],
        "the diff saved nothing"
    );
    let s = json(&env.run(&["stats", "--json"]));
    let sum = |k: &str| rows.iter().map(|r| r[k].as_u64().unwrap()).sum::<u64>();
    assert_eq!(s["rewrites"], rows.len());
    assert_eq!(s["saved_nothing"], 1);
    assert_eq!(s["bytes_before"], sum("before"));
    assert_eq!(s["bytes_after"], sum("after"));
    let ids: std::collections::BTreeSet<&str> = rows
        .iter()
        .filter(|r| r["retained"] == true)
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(s["retained"], ids.len());
    assert_eq!(s["recoverable"], s["retained"]);
    let text = String::from_utf8(env.run(&["stats"]).stdout).unwrap();
    assert!(text.contains("1 saved nothing"), "{text}");
    assert!(
        text.contains(&format!("{} rewrites", rows.len()))
            || text.contains(&format!("rewrites      {}", rows.len())),
        "{text}"
    );
    // --since: a span that excludes everything, and a bad one.
    let s = json(&env.run_with(&[], &["stats", "--json", "--since", "1s"], &[], b""));
    assert!(s["rewrites"].as_u64().unwrap() <= rows.len() as u64);
    let o = env.run(&["stats", "--since", "soon"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(one_line_stderr(&o).contains("--since takes"));
}

/// `snip filter` when the store cannot keep the original: the output must be the
/// core's lossless-only result, the exit status 0, and one line on stderr saying why
/// the output is over the budget and how to elide anyway.
fn assert_lossless_only(o: &Output, input: &[u8]) {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_lossless_only_output(o, input);
}

/// [`assert_lossless_only`] without the exit status (`snip run` gives the command's).
fn assert_lossless_only_output(o: &Output, input: &[u8]) {
    let err = one_line_stderr(o);
    assert!(
        err.contains("could not be stored") && err.contains("SNIP_STORE=0"),
        "{err}"
    );
    struct Refuses;
    impl snip_core::Retain for Refuses {
        fn retain(&mut self, _: &[u8]) -> snip_core::Retention {
            snip_core::Retention::Failed { reason: "x".into() }
        }
    }
    let expected = snip_core::compress(input, &snip_core::Config::default(), &mut Refuses);
    assert!(!expected.lossy);
    assert!(o.stdout == expected.output, "not the lossless-only output");
    assert!(!String::from_utf8_lossy(&o.stdout).contains("snip_restore("));
}

#[test]
fn stats_count_an_original_rewritten_again_once() {
    let env = Env::new();
    let input = distinct_log();
    for _ in 0..3 {
        let o = env.run_with(&[], &["filter"], &[], &input);
        assert!(o.status.success());
    }
    let s = json(&env.run(&["stats", "--json"]));
    assert_eq!(
        (&s["rewrites"], &s["retained"], &s["recoverable"]),
        (&3.into(), &1.into(), &1.into())
    );
    let text = String::from_utf8(env.run(&["stats"]).stdout).unwrap();
    assert!(
        text.contains("recoverable   1 of 1 retained originals"),
        "{text}"
    );
}

#[test]
fn a_full_store_gives_lossless_only_output() {
    let env = Env::new();
    for input in [distinct_log(), corpus("rustc-error-flood-tty.txt")] {
        let o = env.run_with(
            &[],
            &["filter"],
            &[("SNIP_STORE_MAX_BYTES", "1000")],
            &input,
        );
        assert_lossless_only(&o, &input);
    }
}

/// Under a file-size limit (`ulimit -f`) writing the original fails (SIGXFSZ ended snip
/// with no output, status 153): lossless-only output, one line; `snip run` keeps the
/// command's status, and the command itself still gets the signal's default action.
#[test]
fn a_file_size_limit_gives_lossless_only_output() {
    let env = Env::new();
    env.store();
    let limited: &[&str] = &["sh", "-c", "ulimit -f 20 && exec \"$0\" \"$@\""];
    let input = distinct_log();
    let o = env.run_with(limited, &["filter"], &[], &input);
    assert_lossless_only(&o, &input);
    let leftovers: Vec<_> = std::fs::read_dir(env.dir.join("objects"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    let log = env._tmp.path().join("log.txt");
    std::fs::write(&log, &input).unwrap();
    let script = format!("cat {}; exit 3", log.display());
    let o = env.run_with(limited, &["run", "--", "sh", "-c", &script], &[], b"");
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_lossless_only_output(&o, &input);
    let big = env._tmp.path().join("big");
    let script = format!("head -c 100000 /dev/zero > {}", big.display());
    let o = env.run_with(limited, &["run", "--", "sh", "-c", &script], &[], b"");
    assert_eq!(o.status.code(), Some(128 + 25), "SIGXFSZ ends the command");
}

/// An original over the per-entry cap: one line, naming the limit to raise.
#[test]
fn an_original_over_the_entry_cap_says_which_limit() {
    let env = Env::new();
    let input = distinct_log();
    let o = env.run_with(
        &[],
        &["filter"],
        &[("SNIP_STORE_MAX_ENTRY_BYTES", "1000")],
        &input,
    );
    assert_lossless_only(&o, &input);
    let err = one_line_stderr(&o);
    assert!(
        err.contains("SNIP_STORE_MAX_ENTRY_BYTES=1000")
            && err.contains("raise SNIP_STORE_MAX_ENTRY_BYTES"),
        "{err}"
    );
}

/// A store that cannot be opened at all (its path runs through a regular file):
/// one line on stderr, not one for the store and another for the original.
#[test]
fn an_unusable_store_is_one_line() {
    let env = Env::new();
    let file = env._tmp.path().join("a-file");
    std::fs::write(&file, b"").unwrap();
    let dir = file.join("store");
    let input = distinct_log();
    let o = env.run_with(
        &[],
        &["filter"],
        &[("SNIP_STORE_DIR", dir.to_str().unwrap())],
        &input,
    );
    assert!(o.status.success());
    let err = one_line_stderr(&o);
    assert!(
        err.contains("store unavailable") && err.contains("bytes out (budget"),
        "{err}"
    );
    assert!(!String::from_utf8_lossy(&o.stdout).contains("snip_restore("));
}

/// Makes the store directory and `objects/` read-only (or writable again), and
/// returns the command prefix that makes the bits apply: root ignores them, so as
/// root every capability is dropped with `setpriv`.
fn read_only(env: &Env, on: bool) -> &'static [&'static str] {
    let mode = if on { 0o500 } else { 0o700 };
    for d in [env.dir.join("objects"), env.dir.clone()] {
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let me = std::fs::metadata(env._tmp.path()).unwrap().uid();
    if me == 0 {
        &["setpriv", "--bounding-set=-all", "--inh-caps=-all"]
    } else {
        &[]
    }
}

#[test]
fn a_read_only_store_gives_lossless_only_output() {
    let env = Env::new();
    env.store(); // created with its key, then made read-only
    let prefix = read_only(&env, true);
    let input = distinct_log();
    let o = env.run_with(prefix, &["filter"], &[], &input);
    assert_lossless_only(&o, &input);
    // Nothing was written.
    assert_eq!(
        std::fs::read_dir(env.dir.join("objects")).unwrap().count(),
        0
    );
    assert!(!env.dir.join("ledger.jsonl").exists());
    read_only(&env, false);
}

#[test]
fn gc_on_a_read_only_store_says_why_once() {
    let env = Env::new();
    env.store();
    let prefix = read_only(&env, true);
    let o = env.run_with(prefix, &["gc"], &[], b"");
    read_only(&env, false);
    assert_eq!(o.status.code(), Some(2));
    let err = one_line_stderr(&o);
    assert!(err.contains("cannot open"), "{err}");
    assert_eq!(err.matches("(os error 13)").count(), 1, "{err}");
}

/// A damaged or exposed key file, and gc without write access: one line each,
/// saying what to do about that cause.
#[test]
fn store_problems_say_the_fix_for_their_cause() {
    let env = Env::new();
    env.store();
    let key = env.dir.join("key");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let e = one_line_stderr(&env.run(&["gc"]));
    assert!(
        e.contains(&format!("chmod 600 {}", key.display())) && !e.contains("SNIP_STORE_DIR"),
        "{e}"
    );
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let full = std::fs::read(&key).unwrap();
    std::fs::write(&key, &full[..5]).unwrap();
    let e = one_line_stderr(&env.run(&["gc"]));
    assert!(
        e.contains("key file is not 32 bytes")
            && e.contains("remove it")
            && !e.contains("fill whole buffer"),
        "{e}"
    );
    std::fs::write(&key, &full).unwrap();
    let prefix = read_only(&env, true);
    let o = env.run_with(prefix, &["gc"], &[], b"");
    read_only(&env, false);
    let e = one_line_stderr(&o);
    assert!(e.contains("make it writable"), "{e}");
}

/// `snip hook` without a host is one line naming the hosts, status 2.
#[test]
fn a_command_without_its_subcommand_is_one_line() {
    let env = Env::new();
    let o = env.run(&["hook"]);
    assert_eq!(o.status.code(), Some(2));
    let e = one_line_stderr(&o);
    assert!(e.contains("claude-code") && e.contains("opencode"), "{e}");
}

#[test]
fn no_store_location_says_what_to_set() {
    let o = Command::new(SNIP)
        .arg("stats")
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = one_line_stderr(&o);
    assert!(
        err.starts_with("snip: stats: no store location could be found (HOME is not set"),
        "{err}"
    );
    assert!(
        err.contains("set SNIP_STORE_DIR to an absolute directory"),
        "{err}"
    );
    assert!(!err.contains("unset it"), "{err}");
}

#[test]
fn gc_removes_expired_originals() {
    let env = Env::new();
    let store = env.store();
    let old = store.put(b"old original").unwrap();
    let keep = store.put(b"fresh original").unwrap();
    let path = env.dir.join("objects").join(&old);
    let past = std::time::SystemTime::now() - std::time::Duration::from_secs(169 * 3600);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(past)
        .unwrap();
    let o = env.run(&["gc"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("removed 1 expired"), "{text}");
    assert!(!path.exists());
    let v = json(&env.run(&["gc", "--json"]));
    assert_eq!(
        (v["expired"].as_u64(), v["entries"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(
        store.restore(&RestoreRequest::full(&keep)).status,
        snip_store::RestoreStatus::Ok
    );
}

#[test]
fn read_only_commands_do_not_create_the_store() {
    let env = Env::new();
    let unknown = "sn_0123456789abcdef01234567";
    let o = env.run(&["stats", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json(&o);
    assert_eq!(
        (v["rewrites"].as_u64(), v["store"].as_str()),
        (Some(0), env.dir.to_str())
    );
    let o = env.run(&["stats"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("no rewrites recorded"));
    let o = env.run(&["restore", unknown]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(json(&o)["status"], "not_found");
    assert!(one_line_stderr(&o).contains("no store at"));
    let o = env.run(&["restore", "../x"]);
    assert_eq!(
        (o.status.code(), json(&o)["status"].as_str()),
        (Some(2), Some("invalid"))
    );
    let o = env.run(&["gc", "--json"]);
    assert!(o.status.success());
    assert_eq!(json(&o)["entries"], 0);
    assert!(env.run(&["gc"]).status.success());
    assert!(env.run(&["config"]).status.success());
    assert!(!env.dir.exists(), "a read-only command created the store");
    // The parent is left alone too.
    assert_eq!(std::fs::read_dir(env._tmp.path()).unwrap().count(), 0);
}

#[test]
fn a_symlinked_store_is_refused_however_the_path_is_spelled() {
    let env = Env::new();
    let real = env._tmp.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = env._tmp.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let link = link.to_str().unwrap();
    for dir in [link.to_string(), format!("{link}/"), format!("{link}/.")] {
        let o = env.run_with(&[], &["stats"], &[("SNIP_STORE_DIR", &dir)], b"");
        assert_eq!(o.status.code(), Some(2), "{dir}");
        assert!(one_line_stderr(&o).contains("it is a symlink"), "{dir}");
        let o = env.run_with(
            &[],
            &["filter"],
            &[("SNIP_STORE_DIR", &dir)],
            &distinct_log(),
        );
        assert!(o.status.success());
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("it is a symlink"),
            "{dir}"
        );
    }
    assert_eq!(
        std::fs::read_dir(&real).unwrap().count(),
        0,
        "written through the link"
    );
}

#[test]
fn a_damaged_original_of_the_same_size_is_not_served() {
    let env = Env::new();
    let original = b"first line\nsecond line\nthird line\n".to_vec();
    let id = env.store().put(&original).unwrap();
    // One byte changed in place: same size, so only the sha256 can tell.
    let path = env.dir.join("objects").join(&id);
    let mut bytes = std::fs::read(&path).unwrap();
    let at = snip_store::HEADER_LEN + 12;
    bytes[at] ^= 0x20;
    std::fs::write(&path, &bytes).unwrap();
    let o = env.run(&["restore", &id, "--bytes", "0:20", "--raw"]);
    assert_eq!(o.status.code(), Some(4));
    assert!(
        o.stdout.is_empty(),
        "served: {:?}",
        String::from_utf8_lossy(&o.stdout)
    );
    let e = one_line_stderr(&o);
    assert!(e.contains("error") && e.contains("sha256"), "{e}");
    let v = json(&env.run(&["restore", &id, "--lines", "1:2"]));
    assert_eq!(v["status"], "not_found", "the damaged entry was removed");
    // Storing it again (re-running the command) gives it back.
    assert_eq!(env.store().put(&original).unwrap(), id);
    let o = env.run(&["restore", &id, "--full", "--raw"]);
    assert_eq!(o.stdout, original);
}

/// Bytes of every file in `objects/`: entries and temp files.
fn objects_bytes(dir: &Path) -> (u64, usize) {
    let mut total = 0;
    let mut temps = 0;
    for e in std::fs::read_dir(dir.join("objects")).unwrap().flatten() {
        total += e.metadata().map(|m| m.len()).unwrap_or(0);
        temps += usize::from(e.file_name().to_string_lossy().starts_with(".tmp-"));
    }
    (total, temps)
}

/// Temp files of `snip` processes SIGKILLed mid-write count against
/// `SNIP_STORE_MAX_BYTES`: each writer reserves its bytes before writing, so a killed
/// one's file is counted, and the next writer that would go over the cap removes the
/// dead writers' files (no one holds them locked) instead of letting them pile up until
/// `snip gc`. After every kill, entries and temp files together stay within the cap.
#[test]
fn temp_files_of_killed_writers_count_against_the_cap() {
    const CAP: u64 = 12 << 20;
    const INPUT: usize = 5 << 20;
    let env = Env::new();
    let cap = CAP.to_string();
    let envs = [("SNIP_STORE_MAX_BYTES", cap.as_str())];
    // A first original, so the usage record exists.
    let o = env.run_with(&[], &[], &envs, &distinct_log());
    assert!(o.status.success());
    let input_dir = tempfile::tempdir().unwrap();
    let (mut caught, mut worst) = (0, 0);
    for attempt in 0..200 {
        if caught >= 6 {
            break;
        }
        // A distinct input each time (no deduplication), read from a file (fast).
        let path = input_dir.path().join("input");
        let line = format!("attempt {attempt} wrote this distinct line of the input\n");
        let mut data = Vec::with_capacity(INPUT);
        let mut i = 0u64;
        while data.len() < INPUT {
            i += 1;
            data.extend_from_slice(format!("{i} {line}").as_bytes());
        }
        std::fs::write(&path, &data).unwrap();
        let before: Vec<_> = std::fs::read_dir(env.dir.join("objects"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        let mut child = env
            .cmd(&[], &[])
            .env("SNIP_STORE_MAX_BYTES", &cap)
            .stdin(std::fs::File::open(&path).unwrap())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let t0 = std::time::Instant::now();
        let mut mid_write = false;
        while t0.elapsed() < std::time::Duration::from_secs(20) {
            mid_write = std::fs::read_dir(env.dir.join("objects"))
                .unwrap()
                .flatten()
                .any(|e| {
                    // This writer's temp file, most of the original written: the kill
                    // leaves a large file.
                    !before.contains(&e.file_name())
                        && e.file_name().to_string_lossy().starts_with(".tmp-")
                        && e.metadata().is_ok_and(|m| m.len() >= INPUT as u64 / 2)
                });
            if mid_write || child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let (total, temps) = objects_bytes(&env.dir);
        if mid_write && temps > 0 {
            caught += 1;
        }
        worst = worst.max(total);
        assert!(
            total <= CAP,
            "after attempt {attempt}: {total} bytes in objects/ ({temps} temp files) over the {CAP}-byte cap"
        );
    }
    assert!(caught >= 3, "caught only {caught} writers mid-write");
    // The store still takes and serves originals.
    let o = env.run_with(&[], &[], &envs, &distinct_log());
    assert!(o.status.success());
    let (total, _) = objects_bytes(&env.dir);
    assert!(total <= CAP, "{total} bytes after a normal write");
    eprintln!("caught {caught} writers mid-write; at most {worst} bytes in objects/");
}
