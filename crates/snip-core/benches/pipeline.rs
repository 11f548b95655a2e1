//! Benchmarks of the core: each rule and the whole pipeline on a ~50 KB terminal
//! output, and the pipeline on a 100 MB mixed log built from the real captures.
//!
//! Run: `cargo bench -p snip-core --bench pipeline` (add `-- --quick` for a short run).
//! Targets (issue 2): ≤ 50 µs per 50 KB terminal output, ≥ 1 GB/s on the large log.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use snip_core::{compress, rules, Config, NoStore};
use std::hint::black_box;
use std::path::PathBuf;

fn capture(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/corpus")
        .join(name);
    std::fs::read(p).expect("capture")
}

/// ~100 MB of the text captures (no diff, no JSON) repeated in a fixed order.
fn mixed_log(target: usize) -> Vec<u8> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/corpus");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.file_name().into_string().unwrap()))
        .filter(|n| n.ends_with(".txt") && !n.contains("diff") && !n.contains("json"))
        .collect();
    names.sort();
    let caps: Vec<Vec<u8>> = names.iter().map(|n| capture(n)).collect();
    let mut out = Vec::with_capacity(target + (1 << 20));
    let mut i = 0;
    while out.len() < target {
        out.extend_from_slice(&caps[i % caps.len()]);
        i += 1;
    }
    out
}

fn per_rule(c: &mut Criterion) {
    let cfg = Config::default();
    let inputs = [
        ("rich-progress-tty", capture("rich-progress-tty.txt")),
        (
            "cargo-test-fail-notty",
            capture("cargo-test-fail-notty.txt"),
        ),
        (
            "rustc-error-flood-tty",
            capture("rustc-error-flood-tty.txt"),
        ),
    ];
    let mut g = c.benchmark_group("rule-50KB");
    for (name, input) in &inputs {
        g.throughput(Throughput::Bytes(input.len() as u64));
        for r in rules::REGISTRY {
            g.bench_with_input(BenchmarkId::new(r.id, name), input, |b, i| {
                b.iter(|| rules::apply_one(r.id, black_box(i), &cfg))
            });
        }
        g.bench_with_input(BenchmarkId::new("pipeline", name), input, |b, i| {
            b.iter(|| compress(black_box(i), &cfg, &mut NoStore))
        });
    }
    g.finish();
}

fn large(c: &mut Criterion) {
    let cfg = Config::default();
    let log = mixed_log(100 << 20);
    let mut g = c.benchmark_group("mixed-log-100MB");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(log.len() as u64));
    g.bench_function("pipeline", |b| {
        b.iter(|| compress(black_box(&log), &cfg, &mut NoStore))
    });
    g.finish();
}

criterion_group!(benches, per_rule, large);
criterion_main!(benches);
