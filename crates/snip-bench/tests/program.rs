//! The `snip-bench` program (what `snip bench` runs) as a process: the JSON shape the
//! issue names, totals equal to the sums of rows, and the other output forms.

use serde_json::Value;
use std::process::Command;

fn snip_bench(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_snip-bench"))
        .args(args)
        .env_remove("SNIP_MAX_BYTES")
        .env_remove("SNIP_ENABLED")
        .output()
        .expect("snip runs")
}

const TOTAL_KEYS: [&str; 9] = [
    "bytes_before",
    "bytes_after",
    "tokens_before",
    "tokens_after",
    "tokens_saved_pct",
    "clues_visible",
    "clues_recoverable",
    "diffs_changed",
    "json_invalid",
];

fn sum(rows: &[Value], key: &str) -> u64 {
    rows.iter().map(|r| r[key].as_u64().unwrap()).sum()
}

fn count(rows: &[Value], pred: impl Fn(&Value) -> bool) -> u64 {
    rows.iter().filter(|r| pred(r)).count() as u64
}

#[test]
fn json_report_has_the_issue_shape_and_totals_are_sums() {
    let out = snip_bench(&["--json", "--iterations", "1"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    let top: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(top, ["shapes", "captures", "new_captures"]);
    let new = new_capture_count();
    for (section, n) in [("shapes", 8), ("captures", 26), ("new_captures", new)] {
        let rows = v[section]["rows"].as_array().unwrap();
        assert_eq!(rows.len(), n, "{section}");
        let t = &v[section]["totals"];
        for k in TOTAL_KEYS {
            assert!(t[k].is_number(), "{section}.totals.{k}");
        }
        for k in [
            "bytes_before",
            "bytes_after",
            "tokens_before",
            "tokens_after",
        ] {
            assert_eq!(t[k].as_u64().unwrap(), sum(rows, k), "{section}.totals.{k}");
        }
        let before = t["tokens_before"].as_f64().unwrap();
        let after = t["tokens_after"].as_f64().unwrap();
        let pct = t["tokens_saved_pct"].as_f64().unwrap();
        assert!((0.0..=100.0).contains(&pct));
        assert!((pct - 100.0 * (before - after) / before).abs() < 0.01);
        let visible = count(rows, |r| r["clue_visible"] == true);
        let recoverable = count(rows, |r| r["clue_recoverable"] == true);
        let changed = count(rows, |r| r["diff_identical"] == false);
        let invalid = count(rows, |r| r["json_valid"] == false);
        assert_eq!(t["clues_visible"].as_u64().unwrap(), visible);
        assert_eq!(t["clues_recoverable"].as_u64().unwrap(), recoverable);
        assert_eq!(t["diffs_changed"].as_u64().unwrap(), changed);
        assert_eq!(t["json_invalid"].as_u64().unwrap(), invalid);
        for r in rows {
            assert!(r["median_us"].as_f64().unwrap() > 0.0);
            // The new captures may fail this today; their own test
            // (`captures_new.rs`) holds them to their recorded known failures.
            if section != "new_captures" {
                assert!(r["bytes_after"].as_u64() <= r["bytes_before"].as_u64());
            }
        }
    }
    let shapes: Vec<&str> = v["shapes"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        shapes,
        [
            "command-output",
            "json-envelope",
            "test-run",
            "traceback",
            "diff",
            "sql-table",
            "build-log",
            "json-array"
        ]
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

/// The number of captures in `fixtures/corpus-new/` (manifest rows).
fn new_capture_count() -> usize {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/corpus-new/MANIFEST.tsv");
    std::fs::read_to_string(manifest)
        .unwrap()
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .count()
}
