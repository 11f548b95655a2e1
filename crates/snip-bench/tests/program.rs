//! The `snip-bench` program (what `snip bench` runs) as a process: its wiring (settings,
//! errors, the output forms that conflict, help). The report it prints is checked
//! in-process by `tests/report.rs`, so the full benchmark runs once in the suite.

use std::process::Command;

fn snip_bench(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_snip-bench"))
        .args(args)
        .env_remove("SNIP_MAX_BYTES")
        .env_remove("SNIP_ENABLED")
        .output()
        .expect("snip runs")
}

/// The program's own wiring, without running the benchmark: the configuration comes
/// from the environment, and an error is one line on stderr with status 2. (The JSON
/// report is checked on the report `tests/report.rs` builds in-process, with the same
/// `render::json` the program prints: the full benchmark runs once in the suite.)
#[test]
fn a_bad_setting_is_one_line_and_status_2() {
    let out = Command::new(env!("CARGO_BIN_EXE_snip-bench"))
        .args(["--json", "--iterations", "1"])
        .env("SNIP_MAX_BYTES", "lots")
        .output()
        .expect("snip-bench runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("snip bench: ") && err.contains("SNIP_MAX_BYTES"),
        "{err}"
    );
}

/// The output forms conflict (refused before anything runs); the Markdown table itself
/// is checked on the report `tests/report.rs` builds, so the benchmark runs once here.
#[test]
fn json_and_markdown_conflict() {
    let out = snip_bench(&["--json", "--markdown"]);
    assert_eq!(out.status.code(), Some(2), "--json and --markdown conflict");
    assert!(out.stdout.is_empty());
}

/// `snip-bench --help` is the help `snip bench --help` shows (the arguments pass through).
#[test]
fn help_names_snip_bench() {
    let out = snip_bench(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("Usage: snip bench") && help.contains("--iterations"),
        "{help}"
    );
}

/// A `--store-key` that is not 64 hex characters is refused before anything runs.
#[test]
fn a_bad_store_key_is_refused() {
    let out = snip_bench(&["--json", "--store-key", "abc"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("64 hexadecimal characters"), "{err}");
}
