//! `snip hook` (placeholder: owned by the work on this subcommand).
use anyhow::Result;
use std::process::ExitCode;

/// Arguments of `snip hook`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {}

/// Runs `snip hook`.
pub fn run(_args: Args) -> Result<ExitCode> {
    anyhow::bail!("snip hook is not built yet")
}
