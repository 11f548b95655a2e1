//! The `snip` binary: flags and glue. The work lives in the library crates.
#![forbid(unsafe_code)]

mod cmd;
mod common;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// snip makes AI agents' tool output small without losing what matters.
///
/// With no subcommand, filters stdin to stdout (same as `snip filter`).
#[derive(Parser, Debug)]
#[command(name = "snip", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    filter: cmd::filter::Args,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Filter stdin to stdout (the default).
    Filter(cmd::filter::Args),
    /// Run a command (stdout and stderr merged), print its compressed output, exit with its status.
    Run(cmd::run::Args),
    /// Show what snip does on bundled real captures.
    Demo(cmd::demo::Args),
    /// Print the resolved configuration (SNIP_* variables).
    Config(cmd::config::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        None => cmd::filter::run(cli.filter),
        Some(Command::Filter(a)) => cmd::filter::run(a),
        Some(Command::Run(a)) => cmd::run::run(a),
        Some(Command::Demo(a)) => cmd::demo::run(a),
        Some(Command::Config(a)) => cmd::config::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            if common::is_broken_pipe(&e) {
                return ExitCode::SUCCESS;
            }
            eprintln!("snip: {e:#}");
            ExitCode::from(2)
        }
    }
}
