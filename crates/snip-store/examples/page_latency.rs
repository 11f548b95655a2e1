//! The latency of one restore page as a long-lived process (MCP server, proxy, Hermes
//! plugin) serves it: the store opened once, one 32 MiB original of log lines kept
//! once, then many 8 KiB pages (the default response cap) at varied offsets, `bytes`
//! and `lines`, from the directory store and (given a URL) the shared store, all kinds
//! in turn (interleaved, so a machine getting slower or faster shows in all of them).
//! Prints the median, p99 and maximum of each, in milliseconds of wall time, and the
//! same of one `PING` round trip to the shared store (the floor of any call to it).
//!
//! Every page is checked against the original (outside the timing): its bytes are the
//! original's bytes at the offsets it reports, and both stores give the same page.
//!
//! `cargo run --release -p snip-store --example page_latency -- [redis://127.0.0.1:PORT/0] [ROUNDS] [--keep DIR]`
//! (`scripts/bench-redis.sh` runs it against a fresh server). With `--keep DIR`, the
//! directory store is DIR (kept afterwards) and the ids are printed, for timing
//! `snip restore` on the same original.

use snip_store::{RestoreRequest, RestoreResponse, RestoreStatus, Store, StoreOptions, StoreUrl};
use std::time::{Duration, Instant};

/// Size of the original, bytes.
const ORIGINAL: usize = 32 * 1024 * 1024;
/// Rounds before the measured ones.
const WARMUP: usize = 20;

/// Deterministic log-like text: lines of 40 to ~200 bytes, some with multi-byte
/// characters, some long stack-trace-like lines.
fn log_text(len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 512);
    let mut n: u64 = 7;
    while out.len() < len {
        n = n
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let line = match (n >> 33) % 8 {
            0 => format!(
                "error[E0{:03}]: mismatched types at src/worker/{}.rs:{}:{} — expected `u64`, found `i32`\n",
                (n >> 12) % 1000,
                (n >> 22) % 40,
                (n >> 28) % 900,
                (n >> 40) % 80
            ),
            1 => format!(
                "    at com.example.pipeline.Stage{}.run(Stage{}.java:{}) ~[pipeline-{}.jar:?] {}\n",
                (n >> 10) % 30,
                (n >> 10) % 30,
                (n >> 20) % 500,
                (n >> 30) % 9,
                "x".repeat(((n >> 44) % 90) as usize)
            ),
            _ => format!(
                "2026-12-01T12:{:02}:{:02}.{:03}Z INFO worker-{} processed batch {} in {} ms\n",
                (n >> 10) % 60,
                (n >> 16) % 60,
                (n >> 22) % 1000,
                (n >> 32) % 16,
                n >> 40,
                (n >> 36) % 1000
            ),
        };
        out.extend_from_slice(line.as_bytes());
    }
    out.truncate(len);
    out
}

/// The page's exact bytes and where they are in the original.
fn page(r: &RestoreResponse) -> (u64, u64, Vec<u8>) {
    assert_eq!(r.status, RestoreStatus::Ok, "{}", r.note);
    let content = r.content_bytes().expect("a page");
    let (a, b) = match r.mode {
        Some(snip_store::RestoreMode::Lines) => (r.byte_start, r.byte_end),
        _ => (r.start, r.end),
    };
    (a.expect("a start"), b.expect("an end"), content)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut url = None;
    let mut rounds = 300usize;
    let mut keep = None;
    while let Some(a) = args.next() {
        if a == "--keep" {
            keep = Some(std::path::PathBuf::from(args.next().expect("--keep DIR")));
        } else if a.contains("://") {
            url = Some(a);
        } else {
            rounds = a.parse().expect("rounds: a number");
        }
    }
    let original = log_text(ORIGINAL);
    let lines = memchr::memchr_iter(b'\n', &original).count() as u64;

    let dir = tempfile::tempdir().expect("a temp dir");
    let mut stores = vec![(
        "directory",
        Store::open(&StoreOptions::in_dir(
            keep.clone().unwrap_or_else(|| dir.path().join("store")),
        ))
        .expect("the store"),
    )];
    if let Some(url) = &url {
        let mut o = StoreOptions::in_dir("/nonexistent-snip-store");
        o.url = Some(StoreUrl::parse(url, None).expect("a store URL"));
        o.timeout = Duration::from_secs(2);
        o.connect_timeout = Duration::from_secs(1);
        stores.push(("redis", Store::open(&o).expect("the shared store")));
    }
    let ids: Vec<String> = stores
        .iter()
        .map(|(_, s)| s.put(&original).expect("put"))
        .collect();
    if keep.is_some() {
        for ((name, _), id) in stores.iter().zip(&ids) {
            println!("id {name} {id}");
        }
    }

    // kind × store, in turn; pages at offsets spread over the whole original.
    let kinds = ["bytes", "lines"];
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); kinds.len() * stores.len()];
    let mut pings = Vec::new();
    let mut n: u64 = 1;
    for round in 0..rounds + WARMUP {
        n = n
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let at = (n >> 11) % (original.len() as u64 - 8192);
        let line = 1 + (n >> 13) % lines;
        for (k, kind) in kinds.iter().enumerate() {
            let mut pages = Vec::new();
            for (s, (_, store)) in stores.iter().enumerate() {
                let req = match *kind {
                    "bytes" => RestoreRequest::bytes(&ids[s], at, None),
                    _ => RestoreRequest::lines(&ids[s], line, None),
                };
                let t = Instant::now();
                let r = store.restore(&req);
                let took = t.elapsed();
                let (a, b, content) = page(&r);
                assert!(b - a <= 8192 && b > a, "{kind}: a page of {} bytes", b - a);
                assert!(content == original[a as usize..b as usize], "{kind} at {a}");
                if *kind == "lines" {
                    assert_eq!(r.start, Some(line));
                }
                pages.push((a, b));
                if round >= WARMUP {
                    times[k * stores.len() + s].push(took);
                }
            }
            assert!(
                pages.windows(2).all(|w| w[0] == w[1]),
                "{kind}: stores differ"
            );
        }
        // The floor for the shared store: one PING round trip.
        if let Some((_, shared)) = stores.get(1) {
            let t = Instant::now();
            shared.check().expect("PING");
            if round >= WARMUP {
                pings.push(t.elapsed());
            }
        }
    }

    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "8 KiB pages of a {} MiB original ({lines} lines), {rounds} interleaved rounds each (load {}):",
        ORIGINAL >> 20,
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let show = |what: String, v: &mut Vec<Duration>| {
        v.sort();
        let med = v[v.len() / 2];
        let p99 = v[(v.len() * 99).div_ceil(100) - 1];
        let over = v.iter().filter(|d| **d > Duration::from_millis(1)).count();
        println!(
            "  {what:22}  median {:8.3} ms  p99 {:8.3} ms  max {:8.3} ms  over 1 ms: {over}/{}",
            ms(med),
            ms(p99),
            ms(v[v.len() - 1]),
            v.len()
        );
    };
    for (k, kind) in kinds.iter().enumerate() {
        for (s, (name, _)) in stores.iter().enumerate() {
            show(
                format!("{kind} page, {name}"),
                &mut times[k * stores.len() + s],
            );
        }
    }
    if !pings.is_empty() {
        show("redis PING (floor)".to_string(), &mut pings);
    }
}
