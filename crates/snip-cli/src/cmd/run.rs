//! `snip run [--] CMD ARGS…`: run a command as an agent's terminal would (stdout and
//! stderr merged into one pipe), print its compressed output, exit with its status.
//!
//! Exit status: the command's own; 128+N when a signal N ended it; as a shell does
//! when it cannot be started (with a one-line error): 127 when it is not found, 126
//! when it is found but cannot be executed (not executable, a directory, not a
//! program).

use anyhow::Result;
use std::process::{Command, ExitCode, Stdio};

/// Arguments of `snip run`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// The command and its arguments.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
    pub command: Vec<String>,
}

/// Runs the command and prints its compressed, merged output.
pub fn run(args: Args) -> Result<ExitCode> {
    // A bad setting must not stop the command from running (an agent's wrapped Bash
    // call would fail unexecuted): say so, and pass the output through.
    let config = crate::common::core_config().unwrap_or_else(|e| {
        eprintln!("snip: {e:#}; running the command without compression");
        snip_core::Config {
            enabled: false,
            ..snip_core::Config::default()
        }
    });
    let (program, rest) = args
        .command
        .split_first()
        .ok_or_else(|| anyhow::anyhow!("snip run needs a command: snip run -- CMD ARGS…"))?;
    let (reader, writer) = std::io::pipe()?;
    let mut cmd = Command::new(program);
    cmd.args(rest)
        .stdin(Stdio::inherit())
        .stdout(writer.try_clone()?)
        .stderr(writer);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            drop(cmd);
            let (code, hint) = if e.kind() == std::io::ErrorKind::NotFound {
                (127, "check the name and PATH")
            } else {
                (
                    126,
                    "it was found but cannot be executed: check its permissions and format",
                )
            };
            eprintln!("snip: cannot run {program:?}: {e} ({hint})");
            return Ok(ExitCode::from(code));
        }
    };
    // Close our copies of the write end, so reading ends when the command exits.
    drop(cmd);
    let mut out = std::io::stdout().lock();
    let source = format!("run:{}", program.rsplit('/').next().unwrap_or(program));
    let res = super::filter::compress_reader(
        reader,
        &mut out,
        &config,
        &source,
        super::filter::Format::Text,
    );
    let status = child.wait()?;
    if let Err(e) = res {
        if !crate::common::is_broken_pipe(&e) {
            return Err(e);
        }
    }
    Ok(ExitCode::from(exit_code(&status)))
}

/// The status to exit with: the command's code, or 128+N for signal N.
fn exit_code(status: &std::process::ExitStatus) -> u8 {
    if let Some(c) = status.code() {
        return (c & 0xff) as u8;
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return (128 + sig).min(255) as u8;
        }
    }
    1
}
