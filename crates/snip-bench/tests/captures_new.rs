//! The new captures (`fixtures/corpus-new/`) go through the same checks as the old set,
//! with a real store: every clue visible or recoverable with one restore call, JSON
//! still valid, diffs under the diff budget byte-identical, no output above the budget plus
//! one marker, never larger, no fail-open, deterministic, idempotent.
//!
//! A check a capture fails today is listed in its manifest row's `known_failures`
//! (with its failure class). Such a check must keep failing the same way: if it passes,
//! the entry must be removed (no silent pass); if it fails worse than its recorded
//! limit (`budget<=N`: the output grew past N bytes), the test fails. A check that
//! fails without an entry fails the test.

use snip_bench::captures::{self, KnownFailure, Set};
use snip_bench::report::{bench_input, set_inputs, Input, ONE_MARKER_BYTES};
use snip_bench::store::TempStore;
use snip_bench::{Kind, Options};
use snip_core::{Config, Retain, Retention};

/// Every check, by the name `known_failures` uses.
const CHECKS: &[&str] = &[
    "clue",
    "json",
    "diff",
    "budget",
    "grew",
    "open",
    "deterministic",
    "idempotent",
];

struct Ids(usize);

impl Retain for Ids {
    fn retain(&mut self, _: &[u8]) -> Retention {
        self.0 += 1;
        Retention::Retained {
            id: format!("sn_{:024x}", self.0),
        }
    }
}

/// Each check's outcome: (name, passed, measured value for limits).
fn run_checks(
    input: &Input,
    opts: &Options,
    store: &mut TempStore,
) -> Vec<(&'static str, bool, u64)> {
    let row = bench_input(input, opts, store);
    // Diffs up to their own budget stay byte-identical.
    let diff_budget = opts.config.diff_max_bytes as u64;
    let once = snip_core::compress(&input.bytes, &opts.config, &mut Ids(0));
    let twice = snip_core::compress(&once.output, &opts.config, &mut Ids(100));
    vec![
        ("clue", row.clue_recoverable, 0),
        ("json", row.json_valid != Some(false), 0),
        (
            "diff",
            input.kind != Kind::Diff
                || row.bytes_before > diff_budget
                || row.diff_identical == Some(true),
            0,
        ),
        ("budget", row.within_bound, row.bytes_after),
        ("grew", row.bytes_after <= row.bytes_before, row.bytes_after),
        ("open", row.failed_open.is_none(), 0),
        ("deterministic", row.deterministic, 0),
        ("idempotent", twice.output == once.output, 0),
    ]
}

fn judge(name: &str, results: &[(&'static str, bool, u64)], known: &[KnownFailure]) -> Vec<String> {
    let mut problems = Vec::new();
    for k in known {
        if !CHECKS.contains(&k.check.as_str()) {
            problems.push(format!(
                "{name}: unknown check `{}` in known_failures",
                k.check
            ));
        }
    }
    for &(check, passed, measured) in results {
        let entry = known.iter().find(|k| k.check == check);
        match (passed, entry) {
            (true, None) => {}
            (false, None) => {
                problems.push(format!("{name}: fails `{check}` (measured {measured})"))
            }
            (true, Some(k)) => problems.push(format!(
                "{name}: `{check}` passes now: remove `{}` from known_failures",
                k.class
            )),
            (false, Some(k)) => {
                if let Some(limit) = k.limit {
                    if measured > limit {
                        problems.push(format!(
                            "{name}: `{check}` regressed further: {measured} > {limit} ({})",
                            k.class
                        ));
                    }
                }
            }
        }
    }
    problems
}

#[test]
fn every_new_capture_passes_or_fails_only_as_recorded() {
    let opts = Options {
        iterations: 2,
        config: Config::default(),
        ..Options::default()
    };
    let rows = captures::of(Set::New).unwrap();
    let inputs = set_inputs(Set::New).unwrap();
    assert!(inputs.len() >= 30, "{} new captures", inputs.len());
    let mut store = TempStore::new().unwrap();
    let mut problems = Vec::new();
    for (input, c) in inputs.iter().zip(&rows) {
        assert_eq!(input.name, c.manifest.file);
        let results = run_checks(input, &opts, &mut store);
        problems.extend(judge(&input.name, &results, &c.manifest.known_failures));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_judge_catches_new_failures_silent_passes_and_further_regressions() {
    let known = captures::parse_known_failures("budget<=1000:big-json; clue:lost").unwrap();
    assert!(judge("x", &[("budget", false, 900), ("clue", false, 0)], &known).is_empty());
    assert_eq!(
        judge("x", &[("budget", false, 1001)], &known).len(),
        1,
        "worse"
    );
    assert_eq!(
        judge("x", &[("budget", true, 10)], &known).len(),
        1,
        "silent pass"
    );
    assert_eq!(
        judge("x", &[("json", false, 0)], &known).len(),
        1,
        "new failure"
    );
    let typo = captures::parse_known_failures("budgte:x").unwrap();
    assert_eq!(judge("x", &[], &typo).len(), 1, "unknown check");
    assert!(captures::parse_known_failures("budget").is_err());
    assert!(captures::parse_known_failures("budget<=x:y").is_err());
}

#[test]
fn one_marker_allowance_is_small_next_to_the_budget() {
    assert!(ONE_MARKER_BYTES * 16 <= Config::default().max_bytes);
}
