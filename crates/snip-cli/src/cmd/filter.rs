//! `snip filter`.
use anyhow::Result;
use std::process::ExitCode;

/// Arguments of `snip filter`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {}

/// Runs `snip filter`.
pub fn run(_args: Args) -> Result<ExitCode> {
    anyhow::bail!("snip filter is not built yet")
}
