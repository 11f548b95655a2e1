//! `snip` / `snip filter`: compress stdin to stdout.
//!
//! Inputs up to [`IN_MEMORY_MAX`] bytes are compressed in memory with the full
//! pipeline, and their originals are kept in the store; so is a JSON document up to
//! [`DOCUMENT_IN_MEMORY_MAX`] bytes (it can only be elided whole). A longer stream is
//! compressed as it arrives ([`snip_core::stream`]): memory stays bounded however long
//! it is, its markers say the original is not retained, and a diff or JSON document
//! passes through byte for byte.

use anyhow::{Context, Result};
use serde_json::json;
use snip_core::Outcome;
use std::io::{Read, Write};
use std::process::ExitCode;

/// Inputs longer than this (bytes) are compressed as a stream.
pub const IN_MEMORY_MAX: usize = 16 * 1024 * 1024;

/// Output format.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// The compressed text only.
    #[default]
    Text,
    /// A JSON receipt: output, changed, sizes and the rules that fired.
    Json,
}

/// Arguments of `snip filter`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// `text` prints the compressed output; `json` prints a receipt
    /// `{"output", "output_encoding", "changed", "original_bytes", "output_bytes",
    /// "rules", "lossy", "id", "retained", "failed_open"}` (see docs/cli.md).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Ledger source tag for this call.
    #[arg(long, default_value = "filter", hide = true)]
    pub source: String,
}

/// Reads stdin, compresses it, writes the result to stdout. A bad `SNIP_*` setting
/// loses nothing: one line on stderr, and the input passes through unchanged (a JSON
/// receipt says `failed_open`), with status 0.
pub fn run(args: Args) -> Result<ExitCode> {
    let mut stdin = std::io::stdin().lock();
    let mut out = std::io::stdout().lock();
    let config = match crate::common::core_config() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("snip: {e:#}; the input passes through unchanged");
            match args.format {
                Format::Text => {
                    std::io::copy(&mut stdin, &mut out).context("passing the input through")?;
                }
                Format::Json => {
                    let mut buf = Vec::new();
                    stdin.read_to_end(&mut buf).context("reading input")?;
                    let mut o = Outcome::unchanged(&buf);
                    o.failed_open = Some(format!("{e:#}"));
                    serde_json::to_writer(&mut out, &receipt(&o))?;
                    out.write_all(b"\n")?;
                }
            }
            out.flush()?;
            return Ok(ExitCode::SUCCESS);
        }
    };
    compress_reader(stdin, &mut out, &config, &args.source, args.format)?;
    Ok(ExitCode::SUCCESS)
}

/// A document streaming would have to pass through whole (a diff, a JSON document)
/// is compressed in memory up to this many bytes, where its own rules apply.
pub const DOCUMENT_IN_MEMORY_MAX: usize = 64 * 1024 * 1024;

/// Reads `input` to its end and writes its compressed form to `out`: in memory (and
/// retained in the store) up to [`IN_MEMORY_MAX`] bytes, as a stream beyond that
/// (text format only; a JSON receipt needs the whole output in memory).
///
/// # Errors
/// Reading `input` or writing `out` failed.
pub fn compress_reader(
    mut input: impl Read,
    out: &mut dyn Write,
    config: &snip_core::Config,
    source: &str,
    format: Format,
) -> Result<()> {
    let mut buf = Vec::with_capacity(crate::common::STDIN_CAPACITY);
    (&mut input)
        .take(IN_MEMORY_MAX as u64 + 1)
        .read_to_end(&mut buf)
        .context("reading input")?;
    // A JSON document past the cap: read it whole (up to a larger cap) so that
    // `json-fields` can elide inside it; a stream could only pass it through.
    let mut cap = IN_MEMORY_MAX;
    if buf.len() > IN_MEMORY_MAX
        && format == Format::Text
        && snip_core::rules::json_fields::opens_multiline_document(&buf)
    {
        (&mut input)
            .take((DOCUMENT_IN_MEMORY_MAX - buf.len()) as u64 + 1)
            .read_to_end(&mut buf)
            .context("reading input")?;
        cap = DOCUMENT_IN_MEMORY_MAX;
    }
    if buf.len() > cap && format == Format::Text && config.enabled {
        let mut s = snip_core::stream::StreamCompressor::new(config);
        let mut counted = Counted { out, bytes: 0 };
        // In window-sized pieces, so the compressor never holds a second copy.
        for piece in buf.chunks(snip_core::stream::WINDOW) {
            s.push(piece, &mut counted)?;
        }
        drop(buf);
        let mut chunk = vec![0u8; 1 << 20];
        loop {
            let n = match input.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e).context("reading input"),
            };
            s.push(&chunk[..n], &mut counted)?;
        }
        let summary = s.finish(&mut counted)?;
        let after = counted.bytes;
        out.flush()?;
        if let snip_store::StoreHandle::Open(store) = snip_store::open_from_env() {
            store.record(&snip_store::LedgerRow::streamed(source, after, &summary));
        }
        return Ok(());
    }
    if buf.len() > IN_MEMORY_MAX {
        input.read_to_end(&mut buf).context("reading input")?;
    }
    let store = snip_store::open_from_env();
    let outcome = snip_store::compress_recorded(&buf, config, &store, source);
    if let Some(why) = &outcome.failed_open {
        eprintln!("snip: {why}; the output is the original");
    }
    // Fail open, but say so in one line: without a kept original only the lossless
    // rules apply.
    let over = outcome.output.len() > config.max_bytes;
    let size = |over: bool| {
        if over {
            format!(
                ", {} bytes out (budget {})",
                outcome.output.len(),
                config.max_bytes
            )
        } else {
            String::new()
        }
    };
    if let snip_store::StoreHandle::Unavailable(why) = &store {
        eprintln!(
            "snip: store unavailable ({why}); only lossless rules applied{} — fix the store setting or set SNIP_STORE=0 to elide without keeping originals",
            size(over)
        );
    } else if let Some(snip_core::Retention::Failed { reason }) = &outcome.retention {
        if over {
            // Lossy elision needs a kept original: say why the output is this long (the
            // store's reason says what to fix).
            eprintln!(
                "snip: the original could not be stored ({reason}); only lossless rules applied{} — or set SNIP_STORE=0 to elide without keeping originals",
                size(true)
            );
        }
    }
    match format {
        Format::Text => out.write_all(&outcome.output)?,
        Format::Json => {
            serde_json::to_writer(&mut *out, &receipt(&outcome))?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(())
}

/// The JSON receipt of one call (see `docs/cli.md`). `output` is the output as text:
/// exact when `output_encoding` is `utf-8`; with `utf-8-lossy`, invalid UTF-8 shows
/// as U+FFFD and `output_base64` holds the exact bytes. `output_bytes` counts the
/// real bytes.
pub fn receipt(o: &Outcome) -> serde_json::Value {
    let rules: Vec<serde_json::Value> = o
        .rules
        .iter()
        .map(|r| {
            let mut m = serde_json::Map::new();
            m.insert("id".into(), json!(r.id.as_str()));
            for (k, v) in &r.counts {
                m.insert((*k).into(), json!(v));
            }
            serde_json::Value::Object(m)
        })
        .collect();
    let output = snip_store::JsonText::of(&o.output);
    let mut receipt = json!({
        "output": output.text,
        "output_encoding": output.encoding,
        "changed": o.changed,
        "original_bytes": o.original_bytes,
        "output_bytes": o.output.len(),
        "rules": rules,
        "lossy": o.lossy,
        "id": o.id(),
        "retained": o.id().is_some(),
        "failed_open": o.failed_open,
    });
    if let Some(b64) = output.base64 {
        receipt["output_base64"] = b64.into();
    }
    receipt
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
