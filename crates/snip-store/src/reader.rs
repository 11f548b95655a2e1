//! Compressing a reader of any length: which of the three engines runs.
//!
//! - Up to [`in_memory_cap`] bytes (the store's entry cap when it is open and larger
//!   than [`IN_MEMORY_MAX`], else [`IN_MEMORY_MAX`]): in memory with the full pipeline
//!   (the reduced path for long inputs), the original kept in the store
//!   ([`compress_recorded`]), so every marker can restore.
//! - A JSON document (it can only be elided whole) up to [`DOCUMENT_IN_MEMORY_MAX`]
//!   bytes: also in memory, so that `json-fields` can elide inside it.
//! - Longer (and only when the caller can take the output as a stream and compression
//!   is on): as it arrives ([`snip_core::stream`]): memory stays bounded however long
//!   it is, its markers say the original is not retained, and a diff or JSON document
//!   passes through byte for byte; one ledger row records it.

use crate::{compress_recorded, LedgerRow, StoreHandle};
use snip_core::{Config, Outcome};
use std::io::{Read, Write};

/// Inputs longer than this (bytes) are compressed as a stream, unless the store keeps
/// longer originals (see [`in_memory_cap`]).
pub const IN_MEMORY_MAX: usize = 16 * 1024 * 1024;

/// The longest input (bytes) compressed in memory: the open store's entry cap (the
/// longest original it keeps, so every marker of the output restores), at least
/// [`IN_MEMORY_MAX`] and at most [`DOCUMENT_IN_MEMORY_MAX`]; [`IN_MEMORY_MAX`] when
/// the store is off or unavailable.
pub fn in_memory_cap(store: &StoreHandle) -> usize {
    match store {
        StoreHandle::Open(s) => {
            let entry = s.options().effective_entry_cap();
            usize::try_from(entry)
                .unwrap_or(usize::MAX)
                .clamp(IN_MEMORY_MAX, DOCUMENT_IN_MEMORY_MAX)
        }
        _ => IN_MEMORY_MAX,
    }
}

/// A document streaming would have to pass through whole (a diff, a JSON document)
/// is compressed in memory up to this many bytes, where its own rules apply.
pub const DOCUMENT_IN_MEMORY_MAX: usize = 64 * 1024 * 1024;

/// Starting capacity, bytes, of the buffer the input is read into: a typical tool
/// result fits, so it is read in one call into one allocation instead of through
/// small probing reads and a doubling buffer.
pub const READ_CAPACITY: usize = 64 * 1024;

/// What [`compress_reader`] did.
#[derive(Debug)]
pub enum Compressed {
    /// The whole input was compressed in memory; nothing was written yet: the caller
    /// writes [`Outcome::output`] (or a receipt of it).
    InMemory(Box<Outcome>),
    /// The input was compressed as a stream and written to `out` (flushed).
    Streamed {
        /// Bytes written to `out`.
        output_bytes: u64,
    },
    /// The input could not be held in memory (out of memory under `ulimit -v`) and
    /// was passed through to `out` unchanged (flushed): what was read, then the rest
    /// in fixed-size pieces, needing no more memory (fail open).
    PassedThrough {
        /// Bytes written to `out`.
        output_bytes: u64,
        /// Why, in one line.
        why: String,
    },
}

/// Fails open when the input could not be held in memory: writes what was read and
/// the rest of `input` to `out`. Any other read error, and any error with `stream_ok`
/// false (the caller needs the whole input in memory), is returned instead.
fn pass_through(
    e: std::io::Error,
    buf: Vec<u8>,
    mut input: impl Read,
    out: &mut dyn Write,
    stream_ok: bool,
) -> Result<Compressed, ReadError> {
    if !stream_ok || e.kind() != std::io::ErrorKind::OutOfMemory {
        return Err(ReadError::Read(e));
    }
    out.write_all(&buf).map_err(ReadError::Write)?;
    let first = buf.len() as u64;
    drop(buf);
    let rest = std::io::copy(&mut input, out).map_err(ReadError::Write)?;
    out.flush().map_err(ReadError::Write)?;
    Ok(Compressed::PassedThrough {
        output_bytes: first + rest,
        why: e.to_string(),
    })
}

/// Why [`compress_reader`] stopped.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Reading the input failed.
    #[error("reading input")]
    Read(#[source] std::io::Error),
    /// Writing the streamed output failed (a broken pipe, a full disk).
    #[error(transparent)]
    Write(std::io::Error),
}

/// Reads `input` to its end and compresses it with the engine its length calls for
/// (see the module doc). `stream_ok` is false when the caller needs the whole output
/// in memory (a JSON receipt): then the input is always compressed in memory,
/// however long. A streamed call appends one ledger row tagged `source` when `store`
/// is open; an in-memory call records as [`compress_recorded`] does.
///
/// # Errors
/// Reading `input`, or writing a streamed output to `out`, failed.
pub fn compress_reader(
    input: impl Read,
    out: &mut dyn Write,
    config: &Config,
    store: &StoreHandle,
    source: &str,
    stream_ok: bool,
) -> Result<Compressed, ReadError> {
    compress_reader_sized(input, None, out, config, store, source, stream_ok)
}

/// [`compress_reader`] for an input whose length is known beforehand (`len`, bytes: a
/// regular file's size): the buffer is allocated once at that size (up to the
/// in-memory cap) and filled without probing reads. A wrong `len` costs only
/// reallocations.
///
/// # Errors
/// As [`compress_reader`].
pub fn compress_reader_sized(
    mut input: impl Read,
    len: Option<u64>,
    out: &mut dyn Write,
    config: &Config,
    store: &StoreHandle,
    source: &str,
    stream_ok: bool,
) -> Result<Compressed, ReadError> {
    let first_cap = in_memory_cap(store);
    // A regular file known to be longer than the cap streams from its first byte: no
    // buffer of the cap's size is filled (and faulted in) only to be cut into windows.
    // Its head is read first, as far as deciding whether it opens a JSON document
    // needs (the same decision as on the first `first_cap + 1` bytes).
    let known_long = len.is_some_and(|n| n > first_cap as u64) && stream_ok && config.enabled;
    let mut buf = Vec::new();
    let capacity = if known_long {
        READ_CAPACITY
    } else {
        len.map_or(READ_CAPACITY, |n| {
            usize::try_from(n).unwrap_or(usize::MAX).min(first_cap) + 1
        })
    };
    if let Err(e) = buf.try_reserve_exact(capacity) {
        let e = std::io::Error::new(std::io::ErrorKind::OutOfMemory, e);
        return pass_through(e, buf, input, out, stream_ok);
    }
    let read = if known_long {
        read_head(&mut input, &mut buf, first_cap + 1)
    } else {
        (&mut input)
            .take(first_cap as u64 + 1)
            .read_to_end(&mut buf)
            .map(drop)
    };
    if let Err(e) = read {
        return pass_through(e, buf, input, out, stream_ok);
    }
    let long = known_long || buf.len() > first_cap;
    // A diff or a JSON document past the cap: read it whole (up to a larger cap) so
    // that its own rules apply (`diff-protect`'s hunks, `json-fields`); a stream could
    // only pass it through.
    let mut cap = first_cap;
    if long && stream_ok && snip_core::stream::passes_through(&buf) {
        if let Err(e) = (&mut input)
            .take(DOCUMENT_IN_MEMORY_MAX.saturating_sub(buf.len()) as u64 + 1)
            .read_to_end(&mut buf)
        {
            return pass_through(e, buf, input, out, stream_ok);
        }
        cap = DOCUMENT_IN_MEMORY_MAX;
    }
    if (buf.len() > cap || (known_long && cap == first_cap)) && stream_ok && config.enabled {
        let mut s = snip_core::stream::StreamCompressor::new(config);
        let mut counted = Counted { out, bytes: 0 };
        // The windows of what was read are cut from it in place; the rest is read
        // straight into the compressor's input space (each byte copied once).
        s.push(&buf, &mut counted).map_err(ReadError::Write)?;
        drop(buf);
        loop {
            let n = match input.read(s.input_space()) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(ReadError::Read(e)),
            };
            s.commit(n, &mut counted).map_err(ReadError::Write)?;
        }
        let summary = s.finish(&mut counted).map_err(ReadError::Write)?;
        let output_bytes = counted.bytes;
        out.flush().map_err(ReadError::Write)?;
        if let StoreHandle::Open(store) = store {
            store.record(&LedgerRow::streamed(source, output_bytes, &summary));
        }
        return Ok(Compressed::Streamed { output_bytes });
    }
    if long {
        if let Err(e) = input.read_to_end(&mut buf) {
            return pass_through(e, buf, input, out, stream_ok);
        }
    }
    Ok(Compressed::InMemory(Box::new(compress_recorded(
        &buf, config, store, source,
    ))))
}

/// Reads into `buf` until it holds what [`snip_core::stream::passes_through`] reads
/// ([`snip_core::stream::holds_gate_head`]), `max` bytes, or the end of `input`.
fn read_head(input: &mut impl Read, buf: &mut Vec<u8>, max: usize) -> std::io::Result<()> {
    let mut chunk = [0u8; 8192];
    while !snip_core::stream::holds_gate_head(buf) {
        let want = chunk.len().min(max.saturating_sub(buf.len()));
        if want == 0 {
            break;
        }
        match input.read(&mut chunk[..want]) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A writer that counts the bytes written through it.
struct Counted<'a> {
    out: &'a mut dyn Write,
    bytes: u64,
}

impl Write for Counted<'_> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(b)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}
