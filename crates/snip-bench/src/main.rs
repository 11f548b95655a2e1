//! The `snip-bench` program behind `snip bench`: the proof table — bytes, o200k
//! tokens, clues, diffs, JSON and time per call on the eight generated shapes and the
//! bundled real captures (this crate's library). `snip bench context` runs the
//! conversation-pass session benchmark instead.
//!
//! It is a program of its own, installed next to `snip` (`snip bench ARGS` runs
//! `snip-bench ARGS`), so that `snip` itself does not carry the tokenizers and their
//! tables: `snip` starts for every tool call a hook sees, and every page it does not
//! map or relocate is time saved there.
#![forbid(unsafe_code)]

mod cli;
mod session;

use anyhow::{anyhow, Result};
use clap::Parser as _;
use std::process::ExitCode;

/// Measure savings, kept clues and speed on generated shapes and real captures.
#[derive(clap::Parser, Debug)]
#[command(name = "snip bench", bin_name = "snip bench", version)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    /// What to bench instead of the table.
    #[command(subcommand)]
    pub what: Option<What>,
    /// Print the report as JSON: {"shapes": {"rows", "totals", "targets"}, "captures": …,
    /// "new_captures": …}.
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,
    /// Print the report as Markdown tables.
    #[arg(long)]
    pub markdown: bool,
    /// Timed in-process calls per input; the median is reported (0: none is timed and
    /// every median_us is 0).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(0..=10_000))]
    pub iterations: u32,
    /// The key (64 hex characters) of the bench's temporary store instead of a random
    /// one: the ids in restore calls, and so the token counts, are then the same on
    /// every run. With --iterations 0 two runs print the same bytes.
    #[arg(long, value_name = "HEX", value_parser = snip_bench::store::parse_key)]
    pub store_key: Option<[u8; snip_bench::store::KEY_LEN]>,
}

/// The other benchmarks `snip bench` can run.
#[derive(clap::Subcommand, Debug)]
pub enum What {
    /// The conversation pass over a long session: tokens, prompt-cache reuse, cost.
    Context(session::Args),
}

fn main() -> ExitCode {
    cli::finish(run(Args::parse()), "snip bench")
}

/// Runs `snip bench`.
fn run(args: Args) -> Result<ExitCode> {
    if let Some(What::Context(a)) = args.what {
        return session::run(a);
    }
    let opts = snip_bench::Options {
        config: crate::cli::core_config()?,
        iterations: args.iterations as usize,
        store_key: args.store_key,
    };
    let report = snip_bench::run(&opts).map_err(|e| anyhow!(e))?;
    let text = if args.json {
        snip_bench::render::json(&report) + "\n"
    } else if args.markdown {
        snip_bench::render::markdown(&report)
    } else {
        snip_bench::render::text(&report)
    };
    crate::cli::print(text)?;
    Ok(ExitCode::SUCCESS)
}
