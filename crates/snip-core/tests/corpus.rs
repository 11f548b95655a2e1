//! Every real capture: clue kept (visible, or covered by a marker with a restore call),
//! never larger, diffs byte-identical, JSON valid, idempotent, deterministic.

mod common;

use snip_core::marker;
use snip_core::{Config, NoStore};

fn visible(out: &[u8], clue: &str) -> bool {
    let text = snip_core::text::strip_ansi(out);
    memchr::memmem::find(&text, clue.as_bytes()).is_some()
}

#[test]
fn every_capture_keeps_its_clue_and_shrinks() {
    let mut failures = Vec::new();
    for c in common::corpus() {
        let o = common::compress(&c.bytes);
        assert!(o.output.len() <= c.bytes.len(), "{} grew", c.file);
        assert!(o.failed_open.is_none(), "{}: {:?}", c.file, o.failed_open);
        if !visible(&o.output, &c.clue) {
            // Elided: some marker must cover it and quote a restore call.
            let text = String::from_utf8_lossy(&o.output);
            let covered = text
                .lines()
                .filter_map(marker::parse)
                .any(|m| m.call.is_some());
            if !covered {
                failures.push(c.file.clone());
            }
        }
    }
    assert!(failures.is_empty(), "clue lost in {failures:?}");
}

#[test]
fn diffs_are_byte_identical() {
    for c in common::corpus().iter().filter(|c| c.file.contains("diff")) {
        let o = common::compress(&c.bytes);
        assert!(!o.changed, "{}", c.file);
        assert_eq!(o.output, c.bytes);
        assert_eq!(o.rules[0].id, snip_core::RuleId::DiffProtect);
    }
}

#[test]
fn json_stays_valid_and_under_budget() {
    let budget = Config::default().max_bytes;
    for c in common::corpus().iter().filter(|c| c.file.contains("json")) {
        let o = common::compress(&c.bytes);
        assert!(o.changed, "{}", c.file);
        let v: serde_json::Value = serde_json::from_slice(&o.output)
            .unwrap_or_else(|e| panic!("{} invalid JSON: {e}", c.file));
        assert!(
            o.output.len() <= budget,
            "{}: {} bytes",
            c.file,
            o.output.len()
        );
        if c.file.starts_with("cargo-metadata") {
            assert_eq!(v["workspace_root"], "/home/u/dev/webapp");
            let orig: serde_json::Value = serde_json::from_slice(&c.bytes).unwrap();
            let keys =
                |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
            assert_eq!(keys(&v), keys(&orig), "top-level keys kept");
        }
    }
}

#[test]
fn second_pass_changes_nothing_and_runs_repeat_exactly() {
    for c in common::corpus() {
        let once = common::compress(&c.bytes);
        let again = common::compress(&c.bytes);
        assert_eq!(once.output, again.output, "{} not deterministic", c.file);
        let twice = common::compress(&once.output);
        assert_eq!(twice.output, once.output, "{} not idempotent", c.file);
    }
}

#[test]
fn crlf_and_final_newline_are_kept() {
    for c in common::corpus() {
        let o = common::compress(&c.bytes);
        // A trailing spinner erased in place (`ESC[1G ESC[0K`) leaves no visible last
        // line; otherwise the presence of a final newline is kept.
        let last = c.bytes.rsplit(|&b| b == b'\n').next().unwrap_or(b"");
        if !last.contains(&0x1b) {
            assert_eq!(
                o.output.ends_with(b"\n"),
                c.bytes.ends_with(b"\n"),
                "{}",
                c.file
            );
        }
        let crlf_in = c.bytes.windows(2).filter(|w| w == b"\r\n").count();
        let lf_in = memchr::memchr_iter(b'\n', &c.bytes).count();
        if crlf_in == lf_in && lf_in > 0 {
            // Every line ending was CRLF: every output line ending is CRLF too.
            let crlf_out = o.output.windows(2).filter(|w| w == b"\r\n").count();
            let lf_out = memchr::memchr_iter(b'\n', &o.output).count();
            assert_eq!(crlf_out, lf_out, "{}", c.file);
        }
    }
}

#[test]
fn markers_parse_and_lossy_ones_name_the_store_id() {
    for c in common::corpus() {
        let o = common::compress(&c.bytes);
        let text = String::from_utf8_lossy(&o.output);
        for line in text.lines().filter(|l| l.starts_with("[snip:")) {
            let m = marker::parse(line)
                .unwrap_or_else(|| panic!("{}: unparsable marker {line}", c.file));
            assert_eq!(m.id.as_deref(), o.id(), "{}: {line}", c.file);
        }
    }
}

#[test]
fn without_a_store_lossy_markers_say_not_retained() {
    let c = common::corpus()
        .into_iter()
        .find(|c| c.file.starts_with("ls-laR"))
        .unwrap();
    let o = snip_core::compress(&c.bytes, &Config::default(), &mut NoStore);
    assert!(o.lossy);
    let text = String::from_utf8_lossy(&o.output);
    let m = text.lines().find_map(marker::parse).unwrap();
    assert!(m.not_retained && m.id.is_none(), "{text}");
}

#[test]
fn a_failed_store_means_lossless_only() {
    struct Full;
    impl snip_core::Retain for Full {
        fn retain(&mut self, _: &[u8]) -> snip_core::Retention {
            snip_core::Retention::Failed {
                reason: "disk full".into(),
            }
        }
    }
    for c in common::corpus() {
        let o = snip_core::compress(&c.bytes, &Config::default(), &mut Full);
        assert!(!o.lossy, "{}", c.file);
        assert!(
            !o.rules.iter().any(|r| matches!(
                r.id,
                snip_core::RuleId::HeadTailElide
                    | snip_core::RuleId::ShapeFold
                    | snip_core::RuleId::TracebackKeep
            )),
            "{}",
            c.file
        );
        if !c.file.contains("json") {
            assert!(visible(&o.output, &c.clue), "{}", c.file);
        }
    }
}

#[test]
fn marker_ranges_point_at_what_was_removed() {
    // Each head-tail/traceback marker's byte range is the original bytes of its lines.
    for c in common::corpus() {
        let o = common::compress(&c.bytes);
        let text = String::from_utf8_lossy(&o.output);
        let starts: Vec<usize> = std::iter::once(0)
            .chain(memchr::memchr_iter(b'\n', &c.bytes).map(|i| i + 1))
            .collect();
        for m in text.lines().filter_map(marker::parse) {
            if !matches!(
                snip_core::RuleId::parse(&m.rule),
                Some(
                    snip_core::RuleId::HeadTailElide
                        | snip_core::RuleId::ShapeFold
                        | snip_core::RuleId::TracebackKeep
                )
            ) {
                continue;
            }
            let (a, b) = m.lines.unwrap();
            let (s, e) = m.bytes.unwrap();
            assert!(a >= 1 && a <= b, "{}: {:?}", c.file, m);
            assert!(s < e && e as usize <= c.bytes.len(), "{}: {:?}", c.file, m);
            if m.call
                .as_deref()
                .is_some_and(|call| call.contains("mode=\"lines\""))
            {
                assert_eq!(s as usize, starts[a as usize - 1], "{}: {:?}", c.file, m);
            }
        }
    }
}
