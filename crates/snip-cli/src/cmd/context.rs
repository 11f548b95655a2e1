//! `snip context` (placeholder: owned by the work on this subcommand).
use anyhow::Result;
use std::process::ExitCode;

/// Arguments of `snip context`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {}

/// Runs `snip context`.
pub fn run(_args: Args) -> Result<ExitCode> {
    anyhow::bail!("snip context is not built yet")
}
