//! `snip restore` (placeholder: owned by the work on this subcommand).
use anyhow::Result;
use std::process::ExitCode;

/// Arguments of `snip restore`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {}

/// Runs `snip restore`.
pub fn run(_args: Args) -> Result<ExitCode> {
    anyhow::bail!("snip restore is not built yet")
}
