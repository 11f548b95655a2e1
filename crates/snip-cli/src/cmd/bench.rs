//! `snip bench` (placeholder: owned by the work on this subcommand).
use anyhow::Result;
use std::process::ExitCode;

/// Arguments of `snip bench`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {}

/// Runs `snip bench`.
pub fn run(_args: Args) -> Result<ExitCode> {
    anyhow::bail!("snip bench is not built yet")
}
