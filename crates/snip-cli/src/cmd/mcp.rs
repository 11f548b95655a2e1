//! `snip mcp` (placeholder: owned by the work on this subcommand).
use anyhow::Result;
use std::process::ExitCode;

/// Arguments of `snip mcp`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {}

/// Runs `snip mcp`.
pub fn run(_args: Args) -> Result<ExitCode> {
    anyhow::bail!("snip mcp is not built yet")
}
