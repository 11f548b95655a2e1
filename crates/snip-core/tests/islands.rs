//! Islands go to different lines: numbered copies of one error keep one island, so a
//! traceback further down the middle is still shown.

use snip_core::stream::StreamCompressor;
use snip_core::{compress, Config, NoStore};

/// 100,000 lines: 100 numbered copies of one error at lines 40,001-40,100, and a
/// traceback ending in the real cause around line 70,000.
fn log() -> Vec<u8> {
    let mut v = Vec::new();
    for i in 0..100_000u32 {
        if (40_000..40_100).contains(&i) {
            v.extend_from_slice(format!("error: failure {i}\n").as_bytes());
        } else if i == 70_000 {
            v.extend_from_slice(b"Traceback (most recent call last):\n");
            v.extend_from_slice(b"  File \"job.py\", line 3, in <module>\n    run()\n");
            v.extend_from_slice(b"ValueError: the real cause\n");
        } else {
            v.extend_from_slice(format!("step {i:06} ok\n").as_bytes());
        }
    }
    v
}

fn check(out: &[u8], path: &str) {
    let text = String::from_utf8_lossy(out);
    assert!(
        text.contains("error: failure 40000"),
        "{path}: the first copy"
    );
    assert!(
        !text.contains("error: failure 40050"),
        "{path}: copies of one shape share one island"
    );
    assert!(
        text.contains("Traceback (most recent call last):"),
        "{path}"
    );
    assert!(text.contains("ValueError: the real cause"), "{path}");
    assert!(
        out.len() <= Config::default().max_bytes,
        "{path}: {}",
        out.len()
    );
}

#[test]
fn in_memory() {
    let input = log();
    let o = compress(&input, &Config::default(), &mut NoStore);
    check(&o.output, "compress");
}

#[test]
fn streaming() {
    let input = log();
    let config = Config::default();
    let mut s = StreamCompressor::new(&config);
    let mut out = Vec::new();
    for chunk in input.chunks(64 * 1024) {
        s.push(chunk, &mut out).expect("a Vec never fails");
    }
    s.finish(&mut out).expect("a Vec never fails");
    check(&out, "stream");
}

#[test]
fn reduced_path() {
    // Past 4 MiB the reduced path runs; pad the head with plain lines.
    let mut input = Vec::new();
    for i in 0..200_000u32 {
        input.extend_from_slice(format!("warm-up line {i:06} ok\n").as_bytes());
    }
    input.extend(log());
    assert!(input.len() > 4 << 20);
    let o = compress(&input, &Config::default(), &mut NoStore);
    check(&o.output, "reduced");
}

/// With a small budget the island share fits one or two islands: a traceback's last
/// line (its exception) goes before its header and before other error lines, and a
/// line whose context does not fit is kept alone.
#[test]
fn a_small_budget_keeps_the_exception_that_ends_a_traceback() {
    for errors in [true, false] {
        let mut v = String::new();
        for i in 0..3000 {
            let level = if errors && i % 5 == 0 {
                "ERROR"
            } else {
                "INFO"
            };
            v.push_str(&format!("{level} request {i}\n"));
            if i == 1500 {
                v.push_str("Traceback (most recent call last):\n  File \"x.py\", line 1, in f\n    g()\nValueError: boom\n");
            }
        }
        let config = Config::with_budget(4096);
        let out = compress(v.as_bytes(), &config, &mut NoStore).output;
        let text = String::from_utf8_lossy(&out);
        assert!(out.len() < v.len(), "errors: {errors}");
        assert!(
            text.contains("\nValueError: boom\n"),
            "errors: {errors}\n{text}"
        );
    }
}
