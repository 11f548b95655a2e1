//! The stream compressor: the same input pushed in random chunkings gives the same
//! output as pushed whole, and never panics.
//!
//! Input: one byte choosing the budget, one byte seeding the chunk sizes, then the
//! input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use snip_core::stream::StreamCompressor;
use snip_core::Config;

fn run(input: &[u8], cfg: &Config, seed: u8) -> Vec<u8> {
    let mut s = StreamCompressor::new(cfg);
    let mut out = Vec::new();
    if seed == 0 {
        s.push(input, &mut out).expect("vec write");
    } else {
        let mut x = u32::from(seed) | 1;
        let mut rest = input;
        while !rest.is_empty() {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let n = (1 + (x as usize) % 97).min(rest.len());
            s.push(&rest[..n], &mut out).expect("vec write");
            rest = &rest[n..];
        }
    }
    s.finish(&mut out).expect("vec write");
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((cfg, seed, input)) = snip_testkit::fuzz_input::stream(data) else {
        return;
    };
    let whole = run(input, &cfg, 0);
    let chunked = run(input, &cfg, seed.max(1));
    assert!(whole == chunked, "chunking changed the output");
    assert!(whole.len() <= input.len() + 4096, "stream output grew past its footer");
});
