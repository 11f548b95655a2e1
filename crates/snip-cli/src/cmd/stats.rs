//! `snip stats` (placeholder: owned by the work on this subcommand).
use anyhow::Result;
use std::process::ExitCode;

/// Arguments of `snip stats`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {}

/// Runs `snip stats`.
pub fn run(_args: Args) -> Result<ExitCode> {
    anyhow::bail!("snip stats is not built yet")
}
