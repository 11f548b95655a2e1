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

#[test]
#[ignore = "issue 16 item 12 (JSON part): a JSON document whose kept keys alone exceed the budget comes out over it, so a second pass elides more; open"]
fn compressing_a_large_json_object_again_changes_nothing() {
    let (cfg, input) = split(include_bytes!(
        "regressions/idempotence-npm-view-json-1536.bin"
    ));
    let once = snip_core::compress(input, &cfg, &mut snip_core::NoStore);
    let twice = snip_core::compress(&once.output, &cfg, &mut snip_core::NoStore);
    assert!(twice.output == once.output, "not idempotent");
}
