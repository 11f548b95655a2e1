//! `compress_reader`: which engine runs for which input (in memory and retained, a
//! large JSON document in memory, a stream), what each writes, and what the ledger
//! records.

mod common;

use common::temp_store;
use snip_core::{Config, Retention};
use snip_store::reader::{in_memory_cap, DOCUMENT_IN_MEMORY_MAX, IN_MEMORY_MAX};
use snip_store::{
    compress_reader, compress_reader_sized, compress_recorded, Compressed, ReadError, StoreHandle,
};

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

/// A reader that returns at most `max` bytes a call and counts its calls, as a file
/// or pipe could.
struct Trickle<'a> {
    rest: &'a [u8],
    max: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.max).min(self.rest.len());
        buf[..n].copy_from_slice(&self.rest[..n]);
        self.rest = &self.rest[n..];
        Ok(n)
    }
}

/// A regular file known to be longer than the in-memory cap streams from its first
/// byte (no buffer of the cap's size): the same output as when its length is not
/// known (a pipe), in any read sizes; a JSON document of known length is still read
/// whole, a short file still in memory, and a file that turns out shorter than it
/// said (it shrank) is still compressed whole.
#[test]
fn a_known_long_file_streams_from_its_head_with_the_pipes_output() {
    let (_d, store) = temp_store(|o| o.max_entry_bytes = IN_MEMORY_MAX as u64);
    let handle = open(&store);
    let config = Config::default();
    let mut input = log(IN_MEMORY_MAX + 3_000_000);
    let at = input.len() / 2;
    input.splice(
        at..at,
        b"error: the one failure in the middle
"
        .iter()
        .copied(),
    );
    let run = |bytes: &[u8], len: Option<u64>, max: usize| {
        let mut out = Vec::new();
        let got = compress_reader_sized(
            Trickle { rest: bytes, max },
            len,
            &mut out,
            &config,
            &handle,
            "f",
            true,
        )
        .unwrap();
        (got, out)
    };
    let (got, piped) = run(&input, None, 1 << 20);
    assert!(matches!(got, Compressed::Streamed { .. }));
    assert!(String::from_utf8_lossy(&piped).contains("error: the one failure"));
    for max in [1 << 20, 65_536, 4_099, 7 << 20] {
        let (got, file) = run(&input, Some(input.len() as u64), max);
        assert!(matches!(got, Compressed::Streamed { .. }), "reads of {max}");
        assert!(
            file == piped,
            "reads of {max}: the file's output differs from the pipe's"
        );
    }

    // A JSON document: its head says so, and it is read whole as from a pipe.
    let mut doc = b"\xEF\xBB\xBF \n  {\n  \"items\": [\n".to_vec();
    let mut i = 0u64;
    while doc.len() <= IN_MEMORY_MAX {
        doc.extend_from_slice(format!("    {{\"n\": {i}}},\n").as_bytes());
        i += 1;
    }
    doc.extend_from_slice(b"    {\"n\": -1}\n  ]\n}\n");
    let (got, out) = run(&doc, Some(doc.len() as u64), 3);
    assert!(out.is_empty(), "a JSON document streamed");
    let Compressed::InMemory(outcome) = got else {
        panic!("a JSON document of known length streamed");
    };
    serde_json::from_slice::<serde_json::Value>(&outcome.output[3..]).expect("one JSON document");

    // Said longer than it is: whatever engine runs, nothing is lost or cut short.
    let short = log(300_000);
    let (got, out) = run(&short, Some(IN_MEMORY_MAX as u64 + 1), 65_536);
    let (Compressed::Streamed { .. } | Compressed::InMemory(_)) = got else {
        panic!("passed through");
    };
    let text = match got {
        Compressed::InMemory(o) => o.output,
        _ => out,
    };
    assert!(text.starts_with(b"line 00000000"), "the head is kept");
}

/// A diff past the in-memory cap is read whole (up to the document cap) as a JSON
/// document is, from a pipe or a file of known length: the stream could only pass it
/// through, unshortened and silently.
#[test]
fn a_long_diff_is_read_whole_up_to_the_document_cap() {
    let (_d, store) = temp_store(|o| o.max_entry_bytes = IN_MEMORY_MAX as u64);
    let handle = open(&store);
    let mut diff = Vec::new();
    let mut i = 0u64;
    while diff.len() <= IN_MEMORY_MAX {
        diff.extend_from_slice(
            format!("diff --git a/f{i}.txt b/f{i}.txt\n--- a/f{i}.txt\n+++ b/f{i}.txt\n@@ -1,2 +1,2 @@\n-old {i}\n+new {i}\n same\n")
                .as_bytes(),
        );
        i += 1;
    }
    for len in [None, Some(diff.len() as u64)] {
        let mut out = Vec::new();
        let got = compress_reader_sized(
            Trickle {
                rest: &diff,
                max: 1 << 20,
            },
            len,
            &mut out,
            &Config::default(),
            &handle,
            "d",
            true,
        )
        .unwrap();
        assert!(
            matches!(got, Compressed::InMemory(_)) && out.is_empty(),
            "a {} byte diff streamed (length {len:?})",
            diff.len()
        );
    }
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
