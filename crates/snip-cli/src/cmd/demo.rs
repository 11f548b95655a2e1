//! `snip demo`: the main job on real captures bundled into the binary.
//!
//! For each capture: bytes before → after, the rules that fired, and a short excerpt of
//! what the model would read; then the totals and one restore round trip (the lines a
//! marker elided, back from the store, compared with the original). Originals go to a
//! temporary store removed at the end, or to `SNIP_STORE_DIR` when it is set (tagged
//! `demo` in its ledger).

use anyhow::Result;
use std::process::ExitCode;

/// Arguments of `snip demo`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// Lines of output excerpt shown per capture.
    #[arg(long, default_value_t = 6)]
    pub lines: usize,
    /// Show one capture (by name, e.g. `git-clone-progress-tty`) and print its whole output.
    #[arg(long)]
    pub only: Option<String>,
}

/// Runs the demo.
pub fn run(args: Args) -> Result<ExitCode> {
    let config = crate::common::core_config()?;
    crate::common::print(snip_hosts::demo::report(
        &config,
        args.lines,
        args.only.as_deref(),
    )?)?;
    Ok(ExitCode::SUCCESS)
}
