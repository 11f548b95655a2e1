//! `snip gc` (placeholder: owned by the work on this subcommand).
use anyhow::Result;
use std::process::ExitCode;

/// Arguments of `snip gc`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {}

/// Runs `snip gc`.
pub fn run(_args: Args) -> Result<ExitCode> {
    anyhow::bail!("snip gc is not built yet")
}
