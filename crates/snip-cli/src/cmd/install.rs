//! `snip install` (placeholder: owned by the work on this subcommand).
use anyhow::Result;
use std::process::ExitCode;

/// Arguments of `snip install`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {}

/// Runs `snip install`.
pub fn run(_args: Args) -> Result<ExitCode> {
    anyhow::bail!("snip install is not built yet")
}
