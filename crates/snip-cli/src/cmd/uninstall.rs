//! `snip uninstall` (placeholder: owned by the work on this subcommand).
use anyhow::Result;
use std::process::ExitCode;

/// Arguments of `snip uninstall`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {}

/// Runs `snip uninstall`.
pub fn run(_args: Args) -> Result<ExitCode> {
    anyhow::bail!("snip uninstall is not built yet")
}
