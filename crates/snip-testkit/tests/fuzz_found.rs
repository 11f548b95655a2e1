//! Inputs the fuzz harness (`fuzz/`, `scripts/fuzz.sh`) found, kept as regression tests
//! named after what they pin. Each file is the fuzz target's input: one byte choosing
//! the budget (`128 + b * 64`), then the tool output.

use snip_core::Config;

fn split(data: &[u8]) -> (Config, &[u8]) {
    let (&b, input) = data.split_first().expect("a budget byte");
    (Config::with_budget(128 + (b as usize) * 64), input)
}

/// At a budget below the settable minimum the kept last traceback end and the markers
/// around it overrun the budget; snip's own markers do not count against it on a
/// second pass, which then changes nothing.
#[test]
fn compressing_an_output_again_changes_nothing_on_a_coloured_test_run() {
    let (cfg, input) = split(include_bytes!("regressions/idempotence-vitest-640.bin"));
    let once = snip_core::compress(input, &cfg, &mut snip_core::NoStore);
    let twice = snip_core::compress(&once.output, &cfg, &mut snip_core::NoStore);
    if twice.output != once.output {
        let a = String::from_utf8_lossy(&once.output);
        let b = String::from_utf8_lossy(&twice.output);
        panic!(
            "not idempotent\n--- once ({} bytes)\n{a}\n--- twice ({} bytes)\n{b}",
            a.len(),
            b.len()
        );
    }
}

/// Issue 16 item 12 (JSON part): a JSON document whose keys alone exceeded the budget
/// came out over it, so a second pass elided more. Object members are now elided too.
#[test]
fn compressing_a_large_json_object_again_changes_nothing() {
    let (cfg, input) = split(include_bytes!(
        "regressions/idempotence-npm-view-json-1536.bin"
    ));
    let once = snip_core::compress(input, &cfg, &mut snip_core::NoStore);
    let twice = snip_core::compress(&once.output, &cfg, &mut snip_core::NoStore);
    assert!(
        once.output.len() <= cfg.max_bytes,
        "{} bytes",
        once.output.len()
    );
    assert!(serde_json::from_slice::<serde_json::Value>(&once.output).is_ok());
    assert!(twice.output == once.output, "not idempotent");
}

/// Found by the `hook` target: a short run of `\r` frames without a final newline (a
/// `dd` progress line cut mid-frame, as a Bash tool's stdout) is rendered without a
/// footer, and the rendering keeps the missing final newline missing. The accounting
/// checker took only a rendering that ends in a newline as the footerless one.
#[test]
fn a_footerless_rendering_without_a_final_newline_is_accounted_for() {
    let input: &[u8] = b"\r306184192 bytes (306 MB, 292 MiB) copied, 1 s, 305 MB/s\r513802240 bytes (514 MB, 490 MiB) copied, 2 s, 257 MB/s\r714080256 bytes (714 MB, 681 ";
    let store = snip_testkit::TempStore::new();
    let cfg = Config::with_budget(snip_core::config::MIN_MAX_BYTES);
    let (out, _) = snip_testkit::compress_and_check(input, &cfg, &store.handle)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out, b"714080256 bytes (714 MB, 681 ");
}

/// Found by the `compress` target (budget 1,536 bytes, the fuzz target's `1024 + b *
/// 64`): a coloured vitest run whose gap markers overlap ("96 lines (5124 bytes)
/// elided" at bytes 1633-6757, after a marker ending at 6007). Open.
#[test]
#[ignore = "accounting: two markers of a coloured vitest run overlap at a 1,536-byte budget; open (text pipeline)"]
fn markers_of_a_coloured_test_run_do_not_overlap() {
    let data = include_bytes!("regressions/accounting-vitest-overlap-1536.bin");
    let (&b, input) = data.split_first().expect("a budget byte");
    let cfg = Config::with_budget(snip_core::config::MIN_MAX_BYTES + (b as usize) * 64);
    let store = snip_testkit::TempStore::new();
    if let Err(e) = snip_testkit::compress_and_check(input, &cfg, &store.handle) {
        panic!("{e}");
    }
}
