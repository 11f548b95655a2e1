//! `snip run [--] CMD ARGS…`: run a command as an agent's terminal would (stdout and
//! stderr merged into one pipe), print its compressed output, exit with its status.
//!
//! Exit status: the command's own; 128+N when a signal N ended it; as a shell does
//! when it cannot be started (with a one-line error): 127 when it is not found, 126
//! when it is found but cannot be executed (not executable, a directory, not a
//! program).
//!
//! Interrupted (SIGINT, SIGTERM or SIGHUP to `snip run`): the signal is passed on to
//! the command's process, snip waits for the command to exit, prints the compressed
//! output collected so far as on a normal exit, and exits with the command's status:
//! 128+N when the signal N ended it, the command's own code when it handled or ignored
//! the signal and exited.

use anyhow::Result;
use snip_hosts::process::{run_merged, StartError};
use std::process::ExitCode;

/// Arguments of `snip run`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// The restore tool's name as the host shows it to the model, quoted by the
    /// markers (e.g. `mcp__snip__snip_restore`); overrides `SNIP_RESTORE_TOOL`.
    /// Claude Code's `--wrap-bash` hook passes it.
    #[arg(long, value_name = "NAME", value_parser = restore_tool_name)]
    pub restore_tool: Option<String>,
    /// The command and its arguments.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
    pub command: Vec<String>,
}

/// Accepts `snip_restore` or a host's name for it (see `snip_core::marker`).
fn restore_tool_name(s: &str) -> std::result::Result<String, String> {
    if snip_core::marker::is_restore_tool_name(s) {
        Ok(s.to_string())
    } else {
        Err("expected snip_restore or a host's name for it, e.g. mcp__snip__snip_restore".into())
    }
}

/// Runs the command and prints its compressed, merged output.
pub fn run(args: Args) -> Result<ExitCode> {
    // A bad setting must not stop the command from running (an agent's wrapped Bash
    // call would fail unexecuted): say so, and pass the output through.
    let mut config = crate::common::core_config().unwrap_or_else(|e| {
        eprintln!("snip: {e:#}; running the command without compression");
        snip_core::Config {
            enabled: false,
            ..snip_core::Config::default()
        }
    });
    if let Some(tool) = args.restore_tool {
        config.restore_tool = tool;
    }
    let (program, rest) = args
        .command
        .split_first()
        .ok_or_else(|| anyhow::anyhow!("snip run needs a command: snip run -- CMD ARGS…"))?;
    let source = format!("run:{}", program.rsplit('/').next().unwrap_or(program));
    let ran = run_merged(program, rest, |reader| {
        let mut out = std::io::stdout().lock();
        super::filter::compress_reader(
            reader,
            None,
            &mut out,
            &config,
            &source,
            super::filter::Format::Text,
        )
    });
    let (res, status) = match ran {
        Ok(r) => r,
        Err(e) => match e.downcast::<StartError>() {
            Ok(e) => {
                eprintln!("snip: {e}");
                return Ok(ExitCode::from(e.status));
            }
            Err(e) => return Err(anyhow::anyhow!(e)),
        },
    };
    // Writing snip's output failed (a reader gone, a full disk) or reading the
    // command's did: the status is still the command's (contract row 9: exit codes
    // are never masked), and a failure other than a reader gone is said in one line.
    if let Err(e) = res {
        if !crate::common::is_broken_pipe(&e) {
            eprintln!(
                "snip: {e:#}; the command exited with status {status} (its output may be incomplete)"
            );
        }
    }
    // The command's own status even when a signal was passed on: one the command
    // handled or ignored, exiting 0 afterwards, must not be reported as a failure.
    Ok(ExitCode::from(status))
}
