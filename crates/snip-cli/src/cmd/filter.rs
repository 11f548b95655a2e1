//! `snip` / `snip filter`: compress stdin to stdout.
//!
//! Which engine runs (in memory and retained, a large JSON document in memory, or a
//! stream) is [`snip_store::compress_reader`]'s choice; this module reads the flags,
//! prints the output or its JSON receipt, and says on stderr what was not retained.

use anyhow::{Context, Result};
use snip_core::Outcome;
use std::io::{Read, Write};
use std::process::ExitCode;

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
                    serde_json::to_writer(&mut out, &snip_store::Receipt::of(&o))?;
                    out.write_all(b"\n")?;
                }
            }
            out.flush()?;
            return Ok(ExitCode::SUCCESS);
        }
    };
    // A regular file on stdin (`snip < FILE`) is read straight from the file, into one
    // buffer of its size; a pipe goes through the locked stdin.
    match regular_file_stdin() {
        Some((file, len)) => {
            drop(stdin);
            compress_reader(
                file,
                Some(len),
                &mut out,
                &config,
                &args.source,
                args.format,
            )?;
        }
        None => {
            let stdin = snip_hosts::process::WidensPipe::new(stdin);
            compress_reader(stdin, None, &mut out, &config, &args.source, args.format)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Stdin as a file with its length, when it is a regular file (not a pipe, terminal or
/// socket). Reads go to the file from its current offset, as they would through stdin.
fn regular_file_stdin() -> Option<(std::fs::File, u64)> {
    use std::os::fd::AsFd;
    let fd = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let file = std::fs::File::from(fd);
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    use std::io::Seek;
    let at = (&file).stream_position().ok()?;
    Some((file, meta.len().saturating_sub(at)))
}

/// Reads `input` to its end and writes its compressed form to `out`, with the engine
/// its length calls for (`len`: its length in bytes when known beforehand, for one
/// allocation) ([`snip_store::reader`]: in memory and retained up to
/// [`snip_store::reader::in_memory_cap`] bytes, as a stream beyond that in text
/// format; a JSON receipt needs the whole output in memory). Says on stderr when the
/// output is longer than it could be because no original was kept.
///
/// # Errors
/// Reading `input` or writing `out` failed.
pub fn compress_reader(
    input: impl Read,
    len: Option<u64>,
    out: &mut dyn Write,
    config: &snip_core::Config,
    source: &str,
    format: Format,
) -> Result<()> {
    let store = snip_store::open_from_env();
    let compressed = snip_store::compress_reader_sized(
        input,
        len,
        out,
        config,
        &store,
        source,
        format == Format::Text,
    )
    .map_err(|e| match e {
        snip_store::ReadError::Read(e) => anyhow::Error::from(e).context("reading input"),
        snip_store::ReadError::Write(e) => anyhow::Error::from(e),
    })?;
    let outcome = match compressed {
        snip_store::Compressed::Streamed { .. } => return Ok(()),
        snip_store::Compressed::PassedThrough { why, .. } => {
            eprintln!("snip: reading input: {why}; the input passed through unchanged");
            return Ok(());
        }
        snip_store::Compressed::InMemory(outcome) => outcome,
    };
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
        // The store's reason names its fix when it has one (a refused directory); a
        // failed write gets the fix for its cause.
        let fix = snip_store::error::write_fix(why)
            .map_or_else(|| "fix the store setting".to_owned(), |f| format!("{f},"));
        eprintln!(
            "snip: store unavailable ({why}); only lossless rules applied{} — {fix} or set SNIP_STORE=0 to elide without keeping originals",
            size(over)
        );
    } else if let Some(snip_core::Retention::Failed { reason }) = &outcome.retention {
        if over {
            // Lossy elision needs a kept original: say why the output is this long (the
            // store's reason says what to fix).
            eprintln!("{}", not_stored_line(reason, &size(true)));
        }
    }
    match format {
        Format::Text => out.write_all(&outcome.output)?,
        Format::Json => {
            serde_json::to_writer(&mut *out, &snip_store::Receipt::of(&outcome))?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(())
}

/// The one stderr line for an original the store could not keep (`size`: the output's
/// size against the budget, as `, N bytes out (budget B)`): the store's reason, then
/// the fix for its cause when it is a write error with a known one (a full disk, a
/// read-only file system, no permission), and the way to elide anyway.
fn not_stored_line(reason: &str, size: &str) -> String {
    let fix = snip_store::error::write_fix(reason).map_or_else(String::new, |f| format!("{f}, "));
    format!(
        "snip: the original could not be stored ({reason}); only lossless rules applied{size} — {fix}or set SNIP_STORE=0 to elide without keeping originals"
    )
}

#[cfg(test)]
mod tests {
    use super::not_stored_line;

    /// A full disk says to free space before the way around it; a reason that names
    /// its own fix (a cap to raise) is followed by the way around it alone.
    #[test]
    fn an_original_not_stored_gets_the_fix_for_its_cause() {
        let size = ", 30000 bytes out (budget 24576)";
        let full = not_stored_line(
            "writing the original: No space left on device (os error 28)",
            size,
        );
        assert!(
            full.contains("is full: free space, or lower SNIP_STORE_MAX_BYTES")
                && full
                    .ends_with("`snip gc`, or set SNIP_STORE=0 to elide without keeping originals"),
            "{full}"
        );
        let cap = not_stored_line(
            "over SNIP_STORE_MAX_ENTRY_BYTES=1000: raise SNIP_STORE_MAX_ENTRY_BYTES",
            size,
        );
        assert!(
            cap.ends_with(
                "(budget 24576) — or set SNIP_STORE=0 to elide without keeping originals"
            ),
            "{cap}"
        );
        assert_eq!(full.lines().count(), 1);
    }
}
