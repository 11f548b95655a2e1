//! The new captures (`fixtures/corpus-new/`) through the marker checks of `corpus.rs`:
//! every marker parses and names the outcome's store id, a line marker's byte range
//! starts at its first line, the final newline (or its absence) and all-CRLF line
//! endings are kept, and with a failing store only lossless rules run. The clue, JSON,
//! diff and budget checks (with the store) are `snip-bench`'s `captures_new.rs`.

mod common;

use snip_core::marker;
use snip_core::Config;

#[test]
fn markers_parse_and_ranges_point_at_lines() {
    let all = common::corpus_in("corpus-new");
    assert!(all.len() >= 30);
    for c in all {
        let o = common::compress(&c.bytes);
        let text = String::from_utf8_lossy(&o.output);
        for line in text.lines().filter(|l| l.starts_with("[snip:")) {
            let m = marker::parse(line)
                .unwrap_or_else(|| panic!("{}: unparsable marker {line}", c.file));
            assert_eq!(m.id.as_deref(), o.id(), "{}: {line}", c.file);
        }
        let starts: Vec<usize> = std::iter::once(0)
            .chain(memchr::memchr_iter(b'\n', &c.bytes).map(|i| i + 1))
            .collect();
        for m in text.lines().filter_map(marker::parse) {
            if !matches!(m.rule.as_str(), "head-tail-elide" | "traceback-keep") {
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

#[test]
fn final_newline_and_crlf_are_kept() {
    for c in common::corpus_in("corpus-new") {
        let o = common::compress(&c.bytes);
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
            let crlf_out = o.output.windows(2).filter(|w| w == b"\r\n").count();
            let lf_out = memchr::memchr_iter(b'\n', &o.output).count();
            assert_eq!(crlf_out, lf_out, "{}", c.file);
        }
    }
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
    for c in common::corpus_in("corpus-new") {
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
    }
}
