//! The compress pipeline (text, JSON, diff, terminal output) with a real store.
//!
//! Input: one byte choosing the budget, then the tool output. Invariants: no panic
//! (the engine's own catch would hide one, so a failed-open call is a finding), never
//! larger, the accounting invariant with every restore call answered by the store
//! (`snip_testkit::check_accounting`), deterministic, idempotent, valid JSON stays
//! valid JSON, a unified diff under its diff budget comes out byte-identical, and
//! memory bounded per input byte (checked by libFuzzer's `-rss_limit_mb`, and by
//! `-malloc_limit_mb` per allocation, as scripts/fuzz.sh sets them).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn store() -> &'static snip_testkit::TempStore {
    static S: OnceLock<snip_testkit::TempStore> = OnceLock::new();
    S.get_or_init(snip_testkit::TempStore::new)
}

/// Checks that a harness run can skip while an issue is open, named in
/// `SNIP_FUZZ_SKIP` (comma-separated: `accounting`, `idempotence` (inputs that are
/// not JSON), `idempotence-json` (JSON inputs), `json`).
fn skip(what: &str) -> bool {
    std::env::var("SNIP_FUZZ_SKIP").is_ok_and(|v| v.split(',').any(|s| s == what))
}

fuzz_target!(|data: &[u8]| {
    // The budget from the first byte, from the smallest a user can set
    // (`MIN_MAX_BYTES`): below it the kept last traceback end and salient lines may not
    // fit, so idempotence is not promised there. The same function reads the findings
    // replayed by snip-testkit's `fuzz_found.rs`.
    let Some((cfg, input)) = snip_testkit::fuzz_input::compress(data) else {
        return;
    };
    let s = &store().handle;
    let a = snip_store::compress_recorded(input, &cfg, s, "fuzz");
    assert!(a.failed_open.is_none(), "failed open: {:?}", a.failed_open);
    assert!(a.output.len() <= input.len(), "output grew");
    if !a.changed {
        assert_eq!(a.output, input);
    }
    let b2 = snip_store::compress_recorded(input, &cfg, s, "fuzz");
    assert_eq!(a.output, b2.output, "not deterministic");
    if !skip("accounting") {
        if let Err(e) = snip_testkit::check_accounting(input, &a.output, s) {
            panic!("accounting: {e}");
        }
    }
    let json_input = snip_core::rules::json_fields::is_json(input);
    if !skip(if json_input { "idempotence-json" } else { "idempotence" }) {
        let again = snip_core::compress(&a.output, &cfg, &mut snip_core::NoStore);
        assert!(again.output == a.output, "not idempotent");
    }
    if !skip("json") && serde_json::from_slice::<serde_json::Value>(input).is_ok() {
        assert!(
            serde_json::from_slice::<serde_json::Value>(&a.output).is_ok(),
            "valid JSON came out invalid"
        );
    }
    // Under its own budget a diff comes back byte-identical; over it, it shortens by whole
    // hunks (docs/contract.md), which the accounting check above covers.
    if input.starts_with(b"diff --git ")
        && input.len() <= cfg.diff_max_bytes
        && a.rules.iter().any(|r| r.id.to_string() == "diff-protect")
    {
        assert_eq!(a.output, input, "a diff was modified");
    }
});
