//! `compress_recorded` with the real core: markers' restore calls return what they
//! promise, a failing store gives lossless-only output, and the ledger agrees.

mod common;

use common::{corpus, lines_of, page_all, temp_store};
use snip_core::marker;
use snip_core::{Config, Retain, Retention};
use snip_store::{
    compress_recorded, RestoreMode, RestoreRequest, Stats, Store, StoreHandle, StoreOptions,
};

/// Every marker in `output` that quotes a restore call: `(marker text, call)`. For a
/// JSON output, markers sit inside string values and are found after decoding them.
fn markers(output: &[u8]) -> Vec<(String, String)> {
    let mut texts = Vec::new();
    match serde_json::from_slice::<serde_json::Value>(output) {
        Ok(v) => collect_strings(&v, &mut texts),
        Err(_) => {
            // Text, or JSON Lines, whose marker lines are JSON strings: decoded.
            for line in String::from_utf8_lossy(output).lines() {
                match serde_json::from_str::<serde_json::Value>(line) {
                    Ok(serde_json::Value::String(m)) => texts.push(m),
                    _ => texts.push(line.to_string()),
                }
            }
        }
    }
    let mut out = Vec::new();
    for t in texts {
        let mut rest = t.as_str();
        while let Some(i) = rest.find("[snip: ") {
            let from = &rest[i..];
            let end = from
                .find(")]")
                .map(|e| e + 2)
                .or_else(|| from.find(']').map(|e| e + 1));
            let Some(end) = end else { break };
            let m = &from[..end];
            if let Some(p) = marker::parse(m) {
                if let Some(call) = p.call {
                    out.push((m.to_string(), call));
                }
            }
            rest = &from[end..];
        }
    }
    out
}

fn collect_strings(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::String(s) => out.push(s.clone()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| collect_strings(x, out)),
        _ => {}
    }
}

/// What a call should return, computed from the original without the store.
fn expected(original: &[u8], req: &RestoreRequest) -> Vec<u8> {
    let scope: Vec<u8> = match &req.field {
        None => original.to_vec(),
        Some(p) => {
            let doc: serde_json::Value = serde_json::from_slice(original).unwrap();
            let v = doc
                .pointer(p)
                .unwrap_or_else(|| panic!("marker field {p} does not exist"));
            v.as_str()
                .map(|s| s.as_bytes().to_vec())
                .unwrap_or_default()
        }
    };
    match req.mode {
        RestoreMode::Lines => lines_of(&scope, req.start.unwrap(), req.end.unwrap()),
        RestoreMode::Bytes => {
            let a = req.start.unwrap_or(0) as usize;
            let b = req.end.map_or(scope.len(), |e| e as usize);
            scope[a..b].to_vec()
        }
        RestoreMode::Full => scope,
        RestoreMode::Search => unreachable!(),
    }
}

#[test]
fn markers_restore_calls_return_what_they_promise() {
    let (_d, store) = temp_store(|_| {});
    let handle = StoreHandle::Open(Store::open(store.options()).unwrap());
    let config = Config::default();
    let mut calls = 0;
    let mut rebuilt = 0;
    for (name, original) in inputs() {
        let outcome = compress_recorded(&original, &config, &handle, "test");
        assert!(
            outcome.failed_open.is_none(),
            "{name}: {:?}",
            outcome.failed_open
        );
        if outcome.lossy {
            assert!(
                outcome.id().is_some(),
                "{name}: lossy output without a retained original"
            );
        }
        let found = markers(&outcome.output);
        for (m, call) in &found {
            let req =
                RestoreRequest::from_call(call).unwrap_or_else(|e| panic!("{name}: {call}: {e}"));
            assert_eq!(Some(req.id.as_str()), outcome.id(), "{name}: {m}");
            if req.mode == RestoreMode::Full {
                continue;
            }
            let mut paged = req.clone();
            paged.max_bytes = Some(65536);
            let (got, _) = page_all(&store, paged);
            assert!(
                got == expected(&original, &req),
                "{name}: {call} does not return the promised range"
            );
            // A lines marker's own line range is the call's range.
            let p = marker::parse(m).unwrap();
            if req.mode == RestoreMode::Lines && req.field.is_none() {
                assert_eq!(
                    p.lines,
                    Some((req.start.unwrap(), req.end.unwrap())),
                    "{name}: {m}"
                );
            }
            calls += 1;
        }
        // Where only elision happened, putting each elided range back where its
        // marker line stands rebuilds the original exactly.
        let only_elision = outcome.rules.iter().all(|r| {
            matches!(
                r.id,
                snip_core::RuleId::HeadTailElide
                    | snip_core::RuleId::ShapeFold
                    | snip_core::RuleId::TracebackKeep
            )
        });
        if outcome.lossy && only_elision && std::str::from_utf8(&outcome.output).is_ok() {
            let text = String::from_utf8(outcome.output.clone()).unwrap();
            let mut back = Vec::new();
            for line in text.split_inclusive('\n') {
                // In JSON Lines a marker line is a JSON string holding the marker.
                let unquoted = line
                    .strip_suffix('\n')
                    .filter(|l| l.starts_with("\"[snip:"))
                    .and_then(|l| serde_json::from_str::<String>(l).ok());
                match marker::parse(unquoted.as_deref().unwrap_or(line)).and_then(|p| p.call) {
                    Some(call) => {
                        let mut req = RestoreRequest::from_call(&call).unwrap();
                        // A range that starts inside a line follows a piece of that
                        // line, shown with a line ending of its own.
                        let start = req.start.unwrap_or(0) as usize;
                        if req.mode == RestoreMode::Bytes
                            && start > 0
                            && original[start - 1] != b'\n'
                        {
                            assert_eq!(back.pop(), Some(b'\n'), "{name}: {line}");
                        }
                        req.max_bytes = Some(65536);
                        back.extend(page_all(&store, req).0);
                    }
                    None => back.extend_from_slice(line.as_bytes()),
                }
            }
            assert!(
                back == original,
                "{name}: output with ranges put back is not the original"
            );
            rebuilt += 1;
        }
    }
    assert!(
        calls >= 5,
        "only {calls} restore calls found in the corpus outputs"
    );
    eprintln!("{calls} marker restore calls checked, {rebuilt} outputs rebuilt exactly");
}

/// The corpus captures, and inputs that take other paths: a long salient line (an
/// island's window), one coloured line of 1.2 MB (rendered, then cut at both ends),
/// JSON Lines over the budget (whole lines elided, JSON-string markers).
fn inputs() -> Vec<(String, Vec<u8>)> {
    let mut inputs = corpus();
    inputs.push(("long salient line".into(), long_error_line_log()));
    let coloured: Vec<u8> = (0..20_000)
        .flat_map(|i| format!("\x1b[3{}m{}\x1b[0m", i % 8, "x".repeat(50)).into_bytes())
        .chain(*b"\n")
        .collect();
    inputs.push(("one coloured line".into(), coloured));
    let jsonl: String = (0..5000)
        .map(|i| format!("{{\"seq\": {i}, \"msg\": \"event number {i}\"}}\n"))
        .collect();
    inputs.push(("json lines".into(), jsonl.into_bytes()));
    inputs
}

/// A log with a 6 KB error line in its middle, which an island shows a window of.
fn long_error_line_log() -> Vec<u8> {
    let mut log = String::new();
    for i in 0..3000 {
        if i == 1500 {
            log.push_str(&"k=v ".repeat(400));
            log.push_str("ERROR request failed: payload=");
            log.push_str(&"x".repeat(4000));
            log.push('\n');
        }
        log.push_str(&format!("2024-05-01 step {i} ok\n"));
    }
    log.into_bytes()
}

/// A long log of distinct lines whose one failure sits in the middle, far over the
/// budget (nothing lossless shrinks it).
fn distinct_log() -> Vec<u8> {
    let mut log = String::new();
    for i in 1..=20_000 {
        log.push_str(&format!("2024-05-01 request {i} served in 3 ms\n"));
        if i == 12_345 {
            log.push_str("checksum mismatch for record 12345 (expected 0x1f, got 0x2e)\n");
        }
    }
    log.into_bytes()
}

#[test]
fn search_finds_a_clue_the_output_elided() {
    let (_d, store) = temp_store(|_| {});
    let handle = StoreHandle::Open(Store::open(store.options()).unwrap());
    let log = distinct_log();
    let outcome = compress_recorded(&log, &Config::default(), &handle, "test");
    assert!(outcome.lossy && outcome.output.len() < log.len() / 4);
    let id = outcome.id().unwrap();
    let r = store.restore(&RestoreRequest::search(id, "request 17000 "));
    let m = &r.matches.unwrap()[0];
    assert_eq!(m.line, 17_001);
    assert!(r
        .content
        .unwrap()
        .contains("17001:2024-05-01 request 17000 served"));
}

/// A store that cannot keep anything (the core must then stay lossless).
struct Refuses;
impl Retain for Refuses {
    fn retain(&mut self, _: &[u8]) -> Retention {
        Retention::Failed {
            reason: "refused".into(),
        }
    }
}

#[test]
fn a_full_store_gives_lossless_only_output_and_no_error() {
    // SNIP_STORE_MAX_BYTES=1000: every capture over the budget is too big to keep.
    let (_d, store) = temp_store(|o| o.max_bytes = 1000);
    let handle = StoreHandle::Open(Store::open(store.options()).unwrap());
    let config = Config::default();
    let mut over = 0;
    for (name, original) in inputs() {
        let outcome = compress_recorded(&original, &config, &handle, "test");
        assert!(outcome.failed_open.is_none(), "{name}");
        assert!(
            !outcome.lossy,
            "{name}: lossy output without a retained original"
        );
        assert!(outcome.id().is_none());
        assert!(
            markers(&outcome.output).is_empty(),
            "{name}: a marker quotes a restore call"
        );
        assert!(!String::from_utf8_lossy(&outcome.output).contains(marker::NOT_RETAINED));
        // Exactly the core's lossless-only result.
        let lossless = snip_core::compress(&original, &config, &mut Refuses);
        assert_eq!(outcome.output, lossless.output, "{name}");
        if original.len() > config.max_bytes {
            over += 1;
            // Asked (diffs are returned before the store is asked): it failed.
            assert!(
                matches!(outcome.retention, None | Some(Retention::Failed { .. })),
                "{name}"
            );
        }
    }
    assert!(over >= 10);
    let rows = store.ledger(None);
    assert!(rows.iter().all(|r| !r.retained && r.id.is_none()));
    assert!(rows.iter().any(|r| r
        .note
        .as_deref()
        .is_some_and(|n| n.contains("SNIP_STORE_MAX_BYTES"))));
}

#[test]
fn a_turned_off_store_says_not_retained_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let dir_s = dir.to_string_lossy().into_owned();
    let handle = StoreHandle::from_lookup(|k| match k {
        "SNIP_STORE" => Some("0".into()),
        "SNIP_STORE_DIR" => Some(dir_s.clone()),
        _ => None,
    });
    let outcome = compress_recorded(&distinct_log(), &Config::default(), &handle, "test");
    assert!(outcome.lossy);
    assert_eq!(outcome.retention, Some(Retention::Off));
    let text = String::from_utf8_lossy(&outcome.output);
    assert!(text.contains(marker::NOT_RETAINED));
    assert!(!text.contains("snip_restore("));
    assert!(!dir.exists(), "a turned-off store wrote to disk");
}

#[test]
fn the_ledger_agrees_with_every_call_including_one_that_saved_nothing() {
    let (_d, store) = temp_store(|_| {});
    let handle = StoreHandle::Open(Store::open(store.options()).unwrap());
    let config = Config::default();
    let diff = common::corpus()
        .into_iter()
        .find(|(n, _)| n == "git-diff-requests-notty.txt")
        .unwrap()
        .1;
    assert!(diff.len() > config.max_bytes);
    let inputs: Vec<(Vec<u8>, &str)> = vec![
        (diff, "diff over the budget: returned as is"),
        (
            b"\x1b[1;31merror\x1b[0m: three\n".repeat(3),
            "small, lossless ANSI strip",
        ),
        (
            b"plain and small\n".to_vec(),
            "unchanged and small: not recorded",
        ),
        (distinct_log(), "lossy elision"),
    ];
    let mut expected_rows = Vec::new();
    for (input, why) in &inputs {
        let o = compress_recorded(input, &config, &handle, "agree");
        if o.changed || input.len() > config.max_bytes {
            expected_rows.push((
                o.original_bytes as u64,
                o.output.len() as u64,
                o.id().map(str::to_string),
                why,
            ));
        } else {
            assert!(!o.changed, "{why}");
        }
    }
    let rows = store.ledger(None);
    assert_eq!(rows.len(), expected_rows.len(), "{rows:?}");
    for (row, (before, after, id, why)) in rows.iter().zip(&expected_rows) {
        assert_eq!((row.before, row.after), (*before, *after), "{why}");
        assert_eq!(&row.id, id, "{why}");
        assert_eq!(row.retained, id.is_some());
        assert_eq!(row.source, "agree");
    }
    // The diff row saved nothing and is still counted.
    assert_eq!(rows[0].before, rows[0].after);
    assert_eq!(rows[0].rules, ["diff-protect"]);
    assert!(rows.last().unwrap().lossy && rows.last().unwrap().retained);
    let s: Stats = store.stats(None);
    assert_eq!(s.rewrites, expected_rows.len() as u64);
    assert_eq!(s.saved_nothing, 1);
    assert_eq!(
        s.bytes_before,
        expected_rows.iter().map(|r| r.0).sum::<u64>()
    );
    assert_eq!(
        s.bytes_after,
        expected_rows.iter().map(|r| r.1).sum::<u64>()
    );
    let ids: std::collections::BTreeSet<_> =
        expected_rows.iter().filter_map(|r| r.2.as_ref()).collect();
    assert_eq!(s.retained, ids.len() as u64);
    assert_eq!(s.recoverable, s.retained);
    // `since` in the future counts nothing.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
    assert_eq!(store.stats(Some(later)).rewrites, 0);
}

#[test]
fn open_from_options_uses_the_given_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let o = StoreOptions::in_dir(tmp.path().join("s"));
    let h = StoreHandle::open(&o);
    assert!(h.store().is_some());
    assert!(tmp.path().join("s/key").exists());
}
