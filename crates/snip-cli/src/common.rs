//! Glue shared by subcommands: configuration from the environment, printing, errors.

use anyhow::Result;
use snip_core::Config;
use std::io::Write as _;

/// The core configuration from `SNIP_*` environment variables (read on every call).
pub fn core_config() -> Result<Config> {
    Config::from_lookup(|k| std::env::var(k).ok()).map_err(|e| anyhow::anyhow!("{e}"))
}

/// Writes `text` to stdout and flushes it. Subcommands print through this (never
/// `println!`, which panics when stdout is closed): a write error comes back as an
/// error, and `main` ends quietly with status 0 when it is a broken pipe
/// (`snip stats | head -0`), see [`is_broken_pipe`].
///
/// # Errors
/// Writing or flushing stdout failed.
pub fn print(text: impl AsRef<[u8]>) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_ref())?;
    out.flush()?;
    Ok(())
}

/// Broken pipe is success (the reader went away), also when it surfaced through
/// `serde_json` writing straight to stdout.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    use std::io::ErrorKind::BrokenPipe;
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == BrokenPipe)
            || c.downcast_ref::<serde_json::Error>()
                .is_some_and(|j| j.io_error_kind() == Some(BrokenPipe))
    })
}
