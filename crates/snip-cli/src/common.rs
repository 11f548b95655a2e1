//! Glue shared by subcommands: configuration from the environment, printing, errors.

use anyhow::Result;
use snip_core::Config;
use snip_store::{StoreHandle, StoreOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Starting capacity, bytes, of a buffer that reads stdin to its end: a typical tool
/// result (a hook payload, a command's output) fits, so it is read in one call into
/// one allocation instead of through small probing reads and a doubling buffer
/// (each doubling copies and touches fresh pages; a fresh page costs microseconds).
pub const STDIN_CAPACITY: usize = 64 * 1024;

/// The core configuration from `SNIP_*` environment variables (read on every call).
pub fn core_config() -> Result<Config> {
    Config::from_lookup(|k| std::env::var(k).ok()).map_err(|e| anyhow::anyhow!("{e}"))
}

/// The store for a command that only reads it (`stats`, `restore`, `gc`): `Err(dir)`
/// when the store is on but its directory does not exist (yet). There is nothing to
/// read then, and nothing is created (opening a store creates its directory, its key
/// and `objects/`). Otherwise the store as every surface opens it.
pub fn existing_store() -> std::result::Result<StoreHandle, PathBuf> {
    match StoreOptions::from_lookup(|k| std::env::var(k).ok()) {
        // A shared store (SNIP_STORE_URL) has no directory to be missing.
        Ok(o) if o.enabled && o.url.is_none() && is_missing(&o.dir) => Err(o.dir),
        Ok(o) => Ok(StoreHandle::open(&o)),
        Err(e) => Ok(StoreHandle::Unavailable(e.to_string())),
    }
}

/// True when nothing is at `path` (a dangling symlink is something: opening the
/// store then says why it is refused).
fn is_missing(path: &Path) -> bool {
    matches!(std::fs::symlink_metadata(path), Err(e) if e.kind() == std::io::ErrorKind::NotFound)
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

/// The exit status of a command's result: its own, 0 when it failed only because
/// stdout went away ([`is_broken_pipe`]), else 2 after one line on stderr
/// (`<program>: <error>`).
pub fn finish(result: Result<std::process::ExitCode>, program: &str) -> std::process::ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => {
            if is_broken_pipe(&e) {
                return std::process::ExitCode::SUCCESS;
            }
            eprintln!("{program}: {e:#}");
            std::process::ExitCode::from(2)
        }
    }
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
