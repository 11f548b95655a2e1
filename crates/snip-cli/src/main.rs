//! The `snip` binary: flags and glue. The work lives in the library crates.
//!
//! On Linux with glibc the process starts at the C `main` of `entry.rs`, not through
//! Rust's runtime start-up (see there); elsewhere at `fn main` below. Both run [`run`].
// (Unit tests keep the test harness's own `main`.)
#![cfg_attr(all(target_os = "linux", target_env = "gnu", not(test)), no_main)]
// Unsafe code is denied, and allowed on one item: `entry::main` (`#[no_mangle]`).
#![deny(unsafe_code)]

mod cmd;
mod common;
#[cfg(all(target_os = "linux", target_env = "gnu", not(test)))]
mod entry;

use clap::parser::ValueSource;
use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand};
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
    /// Get back what a marker says was removed (bytes, lines, search, full).
    Restore(cmd::restore::Args),
    /// Report the savings ledger.
    Stats(cmd::stats::Args),
    /// Evict expired and over-budget originals from the store.
    Gc(cmd::gc::Args),
    /// Measure savings, kept clues and speed on generated shapes and real captures.
    Bench(cmd::bench::Args),
    /// Run the MCP stdio server (snip_restore, snip_stats).
    Mcp(cmd::mcp::Args),
    /// Host hooks (e.g. `snip hook claude-code`).
    Hook(cmd::hook::Args),
    /// Register snip with a host (claude-code, opencode).
    Install(cmd::install::Args),
    /// Remove snip from a host's configuration.
    Uninstall(cmd::uninstall::Args),
    /// Conversation pass: shrink older tool results of a request (JSON on stdin).
    Context(cmd::context::Args),
    /// Local reverse proxy for the Anthropic and OpenAI APIs: compresses tool results
    /// and runs the conversation pass before forwarding.
    Proxy(cmd::proxy::Args),
    /// Run a host (claude, codex, opencode) through the proxy on a free loopback port.
    Wrap(cmd::proxy::WrapArgs),
}

#[cfg(any(not(all(target_os = "linux", target_env = "gnu")), test))]
fn main() -> ExitCode {
    run()
}

/// Runs the command line of this process and returns its exit status.
fn run() -> ExitCode {
    survive_file_size_limit();
    // The Claude Code hook runs after every tool call: skip building the whole
    // command-line parser for it (a measurable share of a short process's life).
    let mut args = std::env::args_os().skip(1);
    if let (Some(a), Some(b), None) = (args.next(), args.next(), args.next()) {
        if a == "hook" && b == "claude-code" {
            return finish(cmd::hook::run(cmd::hook::Args {
                host: cmd::hook::Host::ClaudeCode,
            }));
        }
    }
    let matches = match Cli::command().try_get_matches() {
        Ok(m) => m,
        Err(e) => return usage_error(e),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => return usage_error(e),
    };
    if let Some(msg) = misplaced_filter_flag(&matches) {
        eprintln!("snip: {msg}");
        return ExitCode::from(2);
    }
    let result = match cli.command {
        None => cmd::filter::run(cli.filter),
        Some(Command::Filter(mut a)) => {
            // `snip --format json filter`: the flag before the subcommand counts too.
            let sub = matches.subcommand_matches("filter");
            if given(&matches, "format") && !sub.is_some_and(|m| given(m, "format")) {
                a.format = cli.filter.format;
            }
            if given(&matches, "source") && !sub.is_some_and(|m| given(m, "source")) {
                a.source = cli.filter.source;
            }
            cmd::filter::run(a)
        }
        Some(Command::Run(a)) => cmd::run::run(a),
        Some(Command::Demo(a)) => cmd::demo::run(a),
        Some(Command::Config(a)) => cmd::config::run(a),
        Some(Command::Restore(a)) => cmd::restore::run(a),
        Some(Command::Stats(a)) => cmd::stats::run(a),
        Some(Command::Gc(a)) => cmd::gc::run(a),
        Some(Command::Bench(a)) => cmd::bench::run(a),
        Some(Command::Mcp(a)) => cmd::mcp::run(a),
        Some(Command::Hook(a)) => cmd::hook::run(a),
        Some(Command::Install(a)) => cmd::install::run(a),
        Some(Command::Uninstall(a)) => cmd::uninstall::run(a),
        Some(Command::Context(a)) => cmd::context::run(a),
        Some(Command::Proxy(a)) => cmd::proxy::run(a),
        Some(Command::Wrap(a)) => cmd::proxy::wrap(a),
    };
    finish(result)
}

/// The exit status of a subcommand's result ([`common::finish`]).
fn finish(result: anyhow::Result<ExitCode>) -> ExitCode {
    common::finish(result, "snip")
}

/// Whether `id` was given on the command line (not a default).
fn given(m: &clap::ArgMatches, id: &str) -> bool {
    m.value_source(id) == Some(ValueSource::CommandLine)
}

/// The filter's flags may come before a subcommand, where clap accepts them for any
/// subcommand; only the filter uses them. For another subcommand (`snip --format json
/// run …`, which would print text), the one-line error to exit 2 with.
fn misplaced_filter_flag(matches: &clap::ArgMatches) -> Option<String> {
    let name = matches.subcommand_name().filter(|n| *n != "filter")?;
    let flag = ["format", "source"]
        .into_iter()
        .find(|id| given(matches, id))?;
    let hint = if name == "run" {
        "`snip run` prints the command's compressed output as text".to_string()
    } else {
        format!("see `snip {name} --help` for its flags")
    };
    Some(format!(
        "--{flag} is a flag of the filter (`snip --{flag} … < FILE` or `snip filter --{flag} …`), not of `snip {name}`; {hint}"
    ))
}

/// Under a file-size limit (`RLIMIT_FSIZE`, `ulimit -f`) a write past it raises SIGXFSZ,
/// whose default action ends the process with no output: with a handler installed the
/// write fails with `EFBIG` instead, and the store's fail-open path answers (the
/// lossless result, one line on stderr). A caught signal, unlike an ignored one, is
/// reset to its default in the commands `snip run` starts.
fn survive_file_size_limit() {
    catch_signal(signal_hook::consts::SIGXFSZ);
}

/// Installs a handler for `signal` that only records it: the write that raised it
/// (SIGPIPE, SIGXFSZ) fails with `EPIPE` or `EFBIG` instead of the process ending.
/// Failing to install it leaves the default action: nothing else to do.
fn catch_signal(signal: std::ffi::c_int) {
    let seen = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let _ = signal_hook::flag::register(signal, seen);
}

/// A command-line error as one line on stderr, status 2: clap's message, the usage
/// line it names, and where to read more (clap prints them on five lines or so).
/// `--help` and `--version` print as clap prints them.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        e.exit();
    }
    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        eprintln!("snip: {}", missing_subcommand());
        return ExitCode::from(2);
    }
    let rendered = e.render().to_string();
    let usage = (!rendered
        .lines()
        .any(|l| l.trim_start().starts_with("Usage: ")))
    .then(usage_of_invocation);
    eprintln!(
        "snip: {}",
        one_line_usage_error(&rendered, usage.as_deref())
    );
    ExitCode::from(2)
}

/// One line for a command named without the subcommand it needs (`snip hook`): the
/// subcommands it takes and where to read more.
fn missing_subcommand() -> String {
    let mut cmd = Cli::command();
    cmd.build();
    let path: Vec<String> = std::env::args().skip(1).collect();
    let mut names = vec!["snip".to_string()];
    let mut at = &cmd;
    for a in &path {
        match at.find_subcommand(a) {
            Some(sub) => {
                names.push(sub.get_name().to_string());
                at = sub;
            }
            None => break,
        }
    }
    let subs: Vec<&str> = at
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .map(|s| s.get_name())
        .collect();
    let name = names.join(" ");
    if subs.is_empty() {
        let usage = at.clone().render_usage().to_string();
        let usage = usage.trim().trim_start_matches("Usage:").trim();
        return format!("'{name}' needs arguments: {usage}; try '{name} --help'");
    }
    format!(
        "'{name}' needs a subcommand, one of: {}; e.g. '{name} {}'; try '{name} --help'",
        subs.join(", "),
        subs.first().copied().unwrap_or("--help")
    )
}

/// The usage line of the (sub)command this invocation names, for the errors clap
/// renders without one (a bad value, e.g. `--format xml`): `snip [OPTIONS] …`, or
/// `snip restore [OPTIONS] <ID|CALL>` for a word naming a subcommand.
fn usage_of_invocation() -> String {
    let mut cmd = Cli::command();
    cmd.build();
    let sub = std::env::args()
        .skip(1)
        .find_map(|a| cmd.find_subcommand(&a).map(|c| c.get_name().to_string()));
    let usage = match sub.and_then(|n| cmd.find_subcommand_mut(&n).map(|c| c.render_usage())) {
        Some(u) => u,
        None => cmd.render_usage(),
    };
    let usage = usage.to_string();
    let usage = usage.trim();
    usage.strip_prefix("Usage: ").unwrap_or(usage).to_string()
}

/// clap's rendered error (`error: …`, a tip, `Usage: …`, `For more information, try
/// '--help'.`) as one line: `… (usage: …; try '--help')`.
fn one_line_usage_error(rendered: &str, fallback_usage: Option<&str>) -> String {
    let lines: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let first = lines.first().copied().unwrap_or("invalid arguments");
    let mut out = first.strip_prefix("error: ").unwrap_or(first).to_string();
    // What a message ending in ':' lists (the missing arguments).
    for l in lines.iter().skip(1).take_while(|l| {
        !["tip: ", "Usage: ", "For more"]
            .iter()
            .any(|p| l.starts_with(p))
    }) {
        out.push(' ');
        out.push_str(l);
    }
    if let Some(tip) = lines.iter().find_map(|l| l.strip_prefix("tip: ")) {
        out.push_str(&format!(" ({tip})"));
    }
    if let Some(usage) = lines
        .iter()
        .find_map(|l| l.strip_prefix("Usage: "))
        .or(fallback_usage)
    {
        out.push_str(&format!("; usage: {usage}"));
    }
    out.push_str("; try '--help'");
    out
}
