//! `snip demo`.
use anyhow::Result;
use std::process::ExitCode;

/// Arguments of `snip demo`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {}

/// Runs `snip demo`.
pub fn run(_args: Args) -> Result<ExitCode> {
    anyhow::bail!("snip demo is not built yet")
}
