//! The generated shapes: deterministic, sized as the issue names, one clue each.

use snip_bench::shapes::{self, NAMES};
use snip_bench::Kind;

#[test]
fn generator_is_deterministic() {
    let a = shapes::all();
    let b = shapes::all();
    assert_eq!(a, b);
    let names: Vec<&str> = a.iter().map(|s| s.name).collect();
    assert_eq!(names, NAMES);
}

#[test]
fn shapes_have_the_sizes_the_issue_names() {
    // 12,000-line command output ~61 kB; JSON envelope ~86 kB; 2,000-case test run
    // ~100 kB; 3,000-frame traceback ~359 kB; diff ~430 kB; 900-row table ~47 kB;
    // 8,000-line build log ~335 kB; 8,000-item JSON array ~207 kB.
    let named = [
        ("command-output", 61_000),
        ("json-envelope", 86_000),
        ("test-run", 100_000),
        ("traceback", 359_000),
        ("diff", 430_000),
        ("sql-table", 47_000),
        ("build-log", 335_000),
        ("json-array", 207_000),
    ];
    for (shape, (name, size)) in shapes::all().iter().zip(named) {
        assert_eq!(shape.name, name);
        assert_eq!(shape.nominal_bytes, size);
        let len = shape.input.len() as f64;
        assert!(
            (len - size as f64).abs() <= size as f64 * 0.10,
            "{name}: {len} bytes is not within 10% of {size}"
        );
    }
}

#[test]
fn shapes_have_the_counts_the_issue_names() {
    let all = shapes::all();
    let get = |n: &str| {
        let s = all.iter().find(|s| s.name == n).unwrap();
        String::from_utf8(s.input.clone()).unwrap()
    };
    let lines = |n: &str| get(n).lines().count();
    // 12,000 counter lines plus the merged stderr line.
    assert_eq!(lines("command-output"), 12_001);
    assert_eq!(lines("build-log"), 8_000);
    let tap = get("test-run");
    let cases = tap
        .lines()
        .filter(|l| l.starts_with("ok ") || l.starts_with("not ok "))
        .count();
    assert_eq!(cases, 2_000);
    let frames = get("traceback")
        .lines()
        .filter(|l| l.starts_with("  File "))
        .count();
    // 3,000 recursive frames, plus the entry point and the failing lookup.
    assert_eq!(frames, 3_002);
    let rows = get("sql-table")
        .lines()
        .filter(|l| l.contains(" | "))
        .count();
    assert_eq!(rows, 901, "900 rows and the header");
    let array: serde_json::Value = serde_json::from_str(&get("json-array")).unwrap();
    assert_eq!(array.as_array().unwrap().len(), 8_000);
}

#[test]
fn each_clue_occurs_once_and_in_the_middle_where_planted() {
    for s in shapes::all() {
        let hits = memchr::memmem::find_iter(&s.input, s.clue.as_bytes()).count();
        assert_eq!(hits, 1, "{}: clue {:?} occurs {hits} times", s.name, s.clue);
        let at = memchr::memmem::find(&s.input, s.clue.as_bytes()).unwrap() as f64;
        let rel = at / s.input.len() as f64;
        if s.name == "traceback" {
            assert!(rel > 0.99, "the traceback's clue is its exception line");
        } else {
            assert!(
                (0.3..0.7).contains(&rel),
                "{}: clue at {:.0}% of the input, not in the middle",
                s.name,
                rel * 100.0
            );
        }
    }
}

#[test]
fn kinds_match_content() {
    for s in shapes::all() {
        match s.kind {
            Kind::Json => {
                let v: serde_json::Value = serde_json::from_slice(&s.input).unwrap();
                if s.name == "json-envelope" {
                    let out = v["stdout"].as_str().unwrap();
                    assert!(out.len() > 80_000 && out.contains(s.clue));
                }
            }
            Kind::Diff => {
                assert!(s.input.starts_with(b"diff --git a/"));
                let text = String::from_utf8(s.input.clone()).unwrap();
                let clue_line = text.lines().find(|l| l.contains(s.clue)).unwrap();
                assert!(clue_line.starts_with('+'), "the clue is an added line");
            }
            Kind::Text => assert!(std::str::from_utf8(&s.input).is_ok()),
        }
    }
}
