//! Store benchmarks. Targets (issue 3): storing a 1 MB original ≤ 2 ms median; an
//! 8 KiB restore page from a 32 MiB original ≤ 1 ms median.
//!
//! `cargo bench -p snip-store --bench store`
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use snip_store::{RestoreRequest, RestoreStatus, Store, StoreOptions};

/// Deterministic log-like text (valid UTF-8, with some multi-byte characters).
fn log_text(len: usize, seed: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 128);
    let mut n = seed;
    while out.len() < len {
        n = n
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        out.extend_from_slice(
            format!(
                "2024-05-01T12:00:{:02} INFO worker-{} processed batch {} in {} ms — ok\n",
                (n >> 10) % 60,
                (n >> 20) % 16,
                n >> 40,
                (n >> 30) % 1000
            )
            .as_bytes(),
        );
    }
    out.truncate(len);
    out
}

fn put_1mb(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(&StoreOptions::in_dir(dir.path().join("store"))).expect("open");
    let original = log_text(1_000_000, 1);
    bench_new_puts(
        c,
        "put 1 MB original",
        &store,
        original,
        BatchSize::LargeInput,
    );
}

/// Times `store.put` of a new original each time (`original` with a counter in its
/// first 8 bytes: the same bytes would take the fast path of an entry already kept).
fn bench_new_puts(
    c: &mut Criterion,
    name: &str,
    store: &Store,
    mut original: Vec<u8>,
    size: BatchSize,
) {
    let mut i: u64 = 0;
    c.bench_function(name, |b| {
        b.iter_batched(
            || {
                i += 1;
                original[..8].copy_from_slice(&i.to_le_bytes());
                original.clone()
            },
            |o| store.put(&o).expect("put"),
            size,
        )
    });
}

/// A new ~50 KB original (a typical tool output; the hooks' common case): each put
/// writes a new entry. One store on tmpfs (`/dev/shm`, when there is one) and one in
/// the temp directory (`$TMPDIR`, else `/tmp`: a disk here), default caps, so once the
/// store is full each put also pays its share of eviction and rescans.
fn put_new_50kb(c: &mut Criterion) {
    let mut bases = vec![("temp dir", std::env::temp_dir())];
    if std::path::Path::new("/dev/shm").is_dir() {
        bases.push(("tmpfs", std::path::PathBuf::from("/dev/shm")));
    }
    let original = log_text(50_000, 5);
    for (what, base) in bases {
        let dir = tempfile::tempdir_in(&base).expect("temp dir");
        let store = Store::open(&StoreOptions::in_dir(dir.path().join("store"))).expect("open");
        let name = format!("put a new 50 KB original ({what})");
        bench_new_puts(c, &name, &store, original.clone(), BatchSize::SmallInput);
    }
}

/// The hashing share of a put: SHA-256 of the original, then the keyed id.
fn id_1mb(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(&StoreOptions::in_dir(dir.path().join("store"))).expect("open");
    let original = log_text(1_000_000, 3);
    c.bench_function("id of a 1 MB original", |b| {
        b.iter(|| store.id_for(&original).unwrap())
    });
}

fn restore_page(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(&StoreOptions::in_dir(dir.path().join("store"))).expect("open");
    let original = log_text(32 * 1024 * 1024, 2);
    let id = store.put(&original).expect("put");
    let mut start = 0u64;
    c.bench_function("restore 8 KiB bytes page of a 32 MiB original", |b| {
        b.iter(|| {
            start = (start + 1_048_573) % (original.len() as u64 - 8192);
            let r = store.restore(&RestoreRequest::bytes(&id, start, None));
            assert_eq!(r.status, RestoreStatus::Ok);
            r
        })
    });
}

/// The first `lines` page of an original over 1 MiB in a process reads and indexes
/// it whole (a store opened afresh each time: the cost of that first page); later
/// ones read a window through the index the process kept.
fn lines_page(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let opts = StoreOptions::in_dir(dir.path().join("store"));
    let store = Store::open(&opts).expect("open");
    let original = log_text(32 * 1024 * 1024, 4);
    let id = store.put(&original).expect("put");
    let mut group = c.benchmark_group("lines");
    group.sample_size(20);
    group.bench_function("first 8 KiB lines page of a 32 MiB original", |b| {
        b.iter_batched(
            || Store::open(&opts).expect("open"),
            |fresh| {
                let r = fresh.restore(&RestoreRequest::lines(&id, 200_000, None));
                assert_eq!(r.status, RestoreStatus::Ok);
                r
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();
    let mut line = 0u64;
    c.bench_function("later 8 KiB lines page of a 32 MiB original", |b| {
        b.iter(|| {
            line = (line + 7_919) % 300_000;
            let r = store.restore(&RestoreRequest::lines(&id, line + 1, None));
            assert_eq!(r.status, RestoreStatus::Ok);
            r
        })
    });
}

criterion_group!(
    benches,
    put_new_50kb,
    put_1mb,
    id_1mb,
    restore_page,
    lines_page
);
criterion_main!(benches);
