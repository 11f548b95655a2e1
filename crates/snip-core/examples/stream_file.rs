//! Runs a file through the stream and writes the output on stdout: the harness for
//! the stream's instruction counts (callgrind) and output comparisons.
//!
//! `cargo run --release -p snip-core --example stream_file -- FILE [PUSH [WINDOW [BUDGET]]]`
//!
//! PUSH: bytes per push (64 KiB, as `snip` reads); WINDOW: the stream's window (lines
//! cut at twice it; the default window and cut when absent); BUDGET: `max_bytes`.

use std::io::Write;

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: stream_file FILE [PUSH [WINDOW [BUDGET]]]");
    let num = |a: Option<String>| a.map(|s| s.parse::<usize>().expect("a number"));
    let push = num(args.next()).unwrap_or(65536).max(1);
    let window = num(args.next());
    let cfg = match num(args.next()) {
        Some(b) => snip_core::Config::with_budget(b),
        None => snip_core::Config::default(),
    };
    let data = std::fs::read(&path)?;
    let mut out = Vec::new();
    let mut s = match window {
        Some(w) => snip_core::stream::StreamCompressor::with_window(&cfg, w, w * 2),
        None => snip_core::stream::StreamCompressor::new(&cfg),
    };
    for c in data.chunks(push) {
        s.push(c, &mut out)?;
    }
    s.finish(&mut out)?;
    std::io::stdout().lock().write_all(&out)
}
