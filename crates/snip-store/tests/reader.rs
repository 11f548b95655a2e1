//! `compress_reader`: which engine runs for which input (in memory and retained, a
//! large JSON document in memory, a stream), what each writes, and what the ledger
//! records.

mod common;

use common::temp_store;
use snip_core::{Config, Retention};
use snip_store::reader::{in_memory_cap, DOCUMENT_IN_MEMORY_MAX, IN_MEMORY_MAX};
use snip_store::{compress_reader, compress_recorded, Compressed, ReadError, StoreHandle};

/// Distinct numbered log lines, `n` bytes or a little more.
fn log(n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n + 64);
    let mut i = 0u64;
    while out.len() < n {
        out.extend_from_slice(format!("line {i:08}: worker {} done\n", i % 7).as_bytes());
        i += 1;
    }
    out
}

fn open(store: &snip_store::Store) -> StoreHandle {
    StoreHandle::Open(snip_store::Store::open(store.options()).unwrap())
}

#[test]
fn a_short_input_is_compressed_in_memory_and_retained() {
    let (_d, store) = temp_store(|_| {});
    let handle = open(&store);
    let config = Config::default();
    let input = log(200_000);
    let mut out = Vec::new();
    let got = compress_reader(&input[..], &mut out, &config, &handle, "t", true).unwrap();
    let Compressed::InMemory(outcome) = got else {
        panic!("a short input streamed");
    };
    assert!(
        out.is_empty(),
        "an in-memory result is the caller's to write"
    );
    assert!(outcome.lossy && outcome.id().is_some());
    assert!(matches!(
        outcome.retention,
        Some(Retention::Retained { .. })
    ));
    assert_eq!(store.ledger(None).len(), 1);
    // The same output as compress_recorded on the same bytes and store.
    let direct = compress_recorded(&input, &config, &handle, "t");
    assert!(outcome.output == direct.output, "outputs differ");
}

#[test]
fn a_long_input_streams_unless_the_caller_needs_it_whole() {
    let (_d, store) = temp_store(|o| o.max_entry_bytes = IN_MEMORY_MAX as u64);
    let handle = open(&store);
    let config = Config::default();
    let input = log(IN_MEMORY_MAX + 1);

    let mut out = Vec::new();
    let got = compress_reader(&input[..], &mut out, &config, &handle, "s", true).unwrap();
    let Compressed::Streamed { output_bytes } = got else {
        panic!("a {} byte input stayed in memory", input.len());
    };
    assert_eq!(output_bytes, out.len() as u64);
    assert!(out.len() < input.len() / 10, "{} bytes out", out.len());
    let rows = store.ledger(None);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].before, input.len() as u64);
    assert_eq!(rows[0].after, output_bytes);
    assert!(!rows[0].retained && rows[0].id.is_none());

    // A caller that needs the whole output (a JSON receipt) gets it in memory.
    let mut out = Vec::new();
    let got = compress_reader(&input[..], &mut out, &config, &handle, "s", false).unwrap();
    assert!(matches!(got, Compressed::InMemory(_)) && out.is_empty());

    // So does one with compression off (nothing to stream): the input, unchanged.
    let off = Config {
        enabled: false,
        ..Config::default()
    };
    let got = compress_reader(&input[..], &mut out, &off, &handle, "s", true).unwrap();
    let Compressed::InMemory(outcome) = got else {
        panic!("streamed with compression off");
    };
    assert_eq!(outcome.output, input);
}

#[test]
fn a_long_json_document_is_read_whole_up_to_its_own_cap() {
    let (_d, store) = temp_store(|_| {});
    let handle = open(&store);
    let mut doc = b"{\n  \"items\": [\n".to_vec();
    let mut i = 0u64;
    while doc.len() <= IN_MEMORY_MAX {
        doc.extend_from_slice(format!("    {{\"n\": {i}, \"name\": \"item {i}\"}},\n").as_bytes());
        i += 1;
    }
    doc.extend_from_slice(b"    {\"n\": -1}\n  ]\n}\n");
    assert!(doc.len() > IN_MEMORY_MAX && doc.len() <= DOCUMENT_IN_MEMORY_MAX);
    let mut out = Vec::new();
    let got = compress_reader(&doc[..], &mut out, &Config::default(), &handle, "j", true).unwrap();
    let Compressed::InMemory(outcome) = got else {
        panic!("a JSON document under its cap streamed");
    };
    assert!(out.is_empty());
    assert!(outcome.output.len() < doc.len());
    serde_json::from_slice::<serde_json::Value>(&outcome.output).expect("still one JSON document");
}

/// A reader that fails after its first bytes.
struct Failing(bool);

impl std::io::Read for Failing {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if std::mem::replace(&mut self.0, true) {
            return Err(std::io::Error::other("disk gone"));
        }
        buf[..3].copy_from_slice(b"abc");
        Ok(3)
    }
}

#[test]
fn a_read_error_says_reading_input() {
    let mut out = Vec::new();
    let err = compress_reader(
        Failing(false),
        &mut out,
        &Config::default(),
        &StoreHandle::Disabled,
        "e",
        true,
    )
    .unwrap_err();
    assert!(matches!(err, ReadError::Read(ref e) if e.to_string() == "disk gone"));
    assert_eq!(err.to_string(), "reading input");
}

/// Issue 19: an input past [`IN_MEMORY_MAX`] that the store can keep is compressed in
/// memory and retained (its markers restore), not streamed with nothing kept; past
/// the store's entry cap it streams. The length hint of a regular file changes nothing
/// but the allocation.
#[test]
fn an_input_the_store_can_keep_is_compressed_in_memory_and_retained() {
    let cap = IN_MEMORY_MAX as u64 + (2 << 20);
    let (_d, store) = temp_store(|o| o.max_entry_bytes = cap);
    let handle = open(&store);
    assert_eq!(in_memory_cap(&handle) as u64, cap);
    let config = Config::default();
    let input = log(IN_MEMORY_MAX + (1 << 20));
    let mut out = Vec::new();
    let got = snip_store::compress_reader_sized(
        &input[..],
        Some(input.len() as u64),
        &mut out,
        &config,
        &handle,
        "t",
        true,
    )
    .unwrap();
    let Compressed::InMemory(outcome) = got else {
        panic!("an input the store can keep streamed");
    };
    assert!(matches!(
        outcome.retention,
        Some(Retention::Retained { .. })
    ));
    assert!(outcome.output.len() < config.max_bytes + 4096);

    // Past the entry cap, and with a wrong hint, it streams.
    let input = log(cap as usize + 1);
    let got = snip_store::compress_reader_sized(
        &input[..],
        Some(10),
        &mut out,
        &config,
        &handle,
        "t",
        true,
    )
    .unwrap();
    assert!(matches!(got, Compressed::Streamed { .. }));
}
