//! Glue shared by subcommands: configuration from the environment, errors.

use anyhow::Result;
use snip_core::Config;

/// The core configuration from `SNIP_*` environment variables (read on every call).
pub fn core_config() -> Result<Config> {
    Config::from_lookup(|k| std::env::var(k).ok()).map_err(|e| anyhow::anyhow!("{e}"))
}

/// Broken pipe is success (the reader went away).
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
