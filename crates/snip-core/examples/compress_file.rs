//! Compresses a file N times in-process and prints the median time per call.
//!
//! `cargo run --release -p snip-core --example compress_file -- FILE [N]`

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: compress_file FILE [N]");
    let n: usize = args.next().map_or(20, |s| s.parse().expect("N"));
    let input = std::fs::read(&path).expect("read FILE");
    let cfg = snip_core::Config::default();
    let mut times = Vec::with_capacity(n);
    let mut out_len = 0;
    for _ in 0..n {
        let t = Instant::now();
        let o = snip_core::compress(&input, &cfg, &mut snip_core::NoStore);
        times.push(t.elapsed());
        out_len = o.output.len();
    }
    times.sort();
    let median = times[n / 2];
    let mbps = input.len() as f64 / median.as_secs_f64() / 1e6;
    println!(
        "{path}: {} -> {} bytes, median {:?} ({mbps:.0} MB/s) over {n} runs",
        input.len(),
        out_len,
        median
    );
}
