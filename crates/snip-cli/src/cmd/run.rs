//! `snip run`.
use anyhow::Result;
use std::process::ExitCode;

/// Arguments of `snip run`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {}

/// Runs `snip run`.
pub fn run(_args: Args) -> Result<ExitCode> {
    anyhow::bail!("snip run is not built yet")
}
