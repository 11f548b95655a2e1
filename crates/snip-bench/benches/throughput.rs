//! Throughput benches (criterion).
//!
//! - `pipeline/mixed-log-100MB`: one in-process `snip_core::compress` call on a 100 MB
//!   mixed log built from the text captures (MB/s).
//! - `stream/mixed-log-100MB`: the same log pushed through
//!   `snip_core::stream::StreamCompressor` in 64 KiB chunks, as `snip` does with long
//!   stdin (MB/s).
//! - `rule/<id>`: each rule alone (`snip_core::rules::apply_one`) on a 50 KB input of the
//!   kind it works on (µs per call).
//! - `pipeline-50KB/<id>`: the whole pipeline on those same 50 KB inputs.
//!
//! Originals are not written to disk here: the retain step answers with a fixed id, so
//! the numbers are the core's. Run with `cargo bench -p snip-bench --bench throughput`.
// The entry points criterion's macros generate carry no docs.
#![allow(missing_docs)]

use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use snip_bench::workloads::{mixed_log, rule_inputs};
use snip_core::{Config, Retain, Retention};
use std::hint::black_box;
use std::time::Duration;

/// Size of the mixed log, bytes.
const MIXED_LOG_BYTES: usize = 100_000_000;
/// Size of the per-rule inputs, bytes.
const RULE_INPUT_BYTES: usize = 50 * 1024;

/// Retains nothing but answers with a well-formed id, so lossy rules run as they do
/// with a working store.
struct FixedId;

impl Retain for FixedId {
    fn retain(&mut self, _original: &[u8]) -> Retention {
        Retention::Retained {
            id: "sn_000000000000000000000000".to_string(),
        }
    }
}

fn large(c: &mut Criterion) {
    let log = mixed_log(MIXED_LOG_BYTES);
    let config = Config::default();
    let mut g = c.benchmark_group("pipeline");
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(30))
        .throughput(Throughput::Bytes(log.len() as u64));
    g.bench_function("mixed-log-100MB", |b| {
        b.iter(|| snip_core::compress(black_box(&log), &config, &mut FixedId))
    });
    g.finish();

    let mut g = c.benchmark_group("stream");
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(30))
        .throughput(Throughput::Bytes(log.len() as u64));
    g.bench_function("mixed-log-100MB", |b| {
        b.iter(|| {
            let mut s = snip_core::stream::StreamCompressor::new(&config);
            let mut sink = std::io::sink();
            for chunk in log.chunks(64 * 1024) {
                s.push(black_box(chunk), &mut sink)
                    .expect("a sink never fails");
            }
            s.finish(&mut sink).expect("a sink never fails");
        })
    });
    g.finish();
}

fn per_rule(c: &mut Criterion) {
    let config = Config::default();
    let inputs = rule_inputs(RULE_INPUT_BYTES);
    let mut g = c.benchmark_group("rule");
    g.sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for (rule, input) in &inputs {
        g.throughput(Throughput::Bytes(input.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(rule), input, |b, input| {
            b.iter(|| snip_core::rules::apply_one(*rule, black_box(input), &config))
        });
    }
    g.finish();

    let mut g = c.benchmark_group("pipeline-50KB");
    g.sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for (rule, input) in &inputs {
        g.throughput(Throughput::Bytes(input.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(rule), input, |b, input| {
            b.iter(|| snip_core::compress(black_box(input), &config, &mut FixedId))
        });
    }
    g.finish();
}

criterion_group!(benches, per_rule, large);
criterion_main!(benches);
