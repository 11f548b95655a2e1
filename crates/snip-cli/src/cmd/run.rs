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
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

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
    // Caught from before the spawn, so no signal can end snip before the command's
    // output is printed. If they cannot be caught, the command still runs.
    let signals = Signals::new([SIGINT, SIGTERM, SIGHUP]).ok();
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
    let relay = signals.map(|s| Relay::start(s, &child));
    let mut out = std::io::stdout().lock();
    let source = format!("run:{}", program.rsplit('/').next().unwrap_or(program));
    let res = super::filter::compress_reader(
        reader,
        None,
        &mut out,
        &config,
        &source,
        super::filter::Format::Text,
    );
    let (status, received) = match relay {
        Some(r) => r.wait(&mut child)?,
        None => (child.wait()?, None),
    };
    if let Err(e) = res {
        if !crate::common::is_broken_pipe(&e) {
            return Err(e);
        }
    }
    // The command's own status even when a signal was passed on: one the command
    // handled or ignored, exiting 0 afterwards, must not be reported as a failure (a
    // command the signal ended exits 128+N by `exit_code`).
    let _ = received;
    Ok(ExitCode::from(exit_code(&status)))
}

/// Passes SIGINT, SIGTERM and SIGHUP received by snip on to the command (its pid;
/// snip starts no process group) until the command has been reaped, and remembers
/// the first one.
struct Relay {
    handle: signal_hook::iterator::Handle,
    thread: std::thread::JoinHandle<()>,
    first: Arc<AtomicI32>,
    /// Set once the command is reaped: its pid may then belong to another process.
    reaped: Arc<Mutex<bool>>,
    pid: rustix::process::Pid,
}

impl Relay {
    fn start(mut signals: Signals, child: &Child) -> Relay {
        let pid = rustix::process::Pid::from_child(child);
        let first = Arc::new(AtomicI32::new(0));
        let reaped = Arc::new(Mutex::new(false));
        let handle = signals.handle();
        let thread = {
            let (first, reaped) = (Arc::clone(&first), Arc::clone(&reaped));
            std::thread::spawn(move || {
                for sig in signals.forever() {
                    let _ = first.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
                    let reaped = reaped.lock().unwrap_or_else(PoisonError::into_inner);
                    if let (false, Some(s)) = (*reaped, to_signal(sig)) {
                        // It may have exited already; nothing to do then.
                        let _ = rustix::process::kill_process(pid, s);
                    }
                }
            })
        };
        Relay {
            handle,
            thread,
            first,
            reaped,
            pid,
        }
    }

    /// Waits for the command to exit, reaps it and stops relaying. Returns its status
    /// and the first signal snip received, if any.
    fn wait(self, child: &mut Child) -> Result<(std::process::ExitStatus, Option<i32>)> {
        use rustix::process::{waitid, WaitId, WaitIdOptions};
        // Wait for the exit without reaping, so the pid cannot be reused while a
        // signal is still being passed on.
        while let Err(rustix::io::Errno::INTR) = waitid(
            WaitId::Pid(self.pid),
            WaitIdOptions::EXITED | WaitIdOptions::NOWAIT,
        ) {}
        let status = {
            let mut reaped = self.reaped.lock().unwrap_or_else(PoisonError::into_inner);
            let status = child.wait();
            *reaped = true;
            status?
        };
        self.handle.close();
        let _ = self.thread.join();
        let first = self.first.load(Ordering::SeqCst);
        Ok((status, (first != 0).then_some(first)))
    }
}

/// The signals snip passes on.
fn to_signal(sig: i32) -> Option<rustix::process::Signal> {
    use rustix::process::Signal;
    [Signal::INT, Signal::TERM, Signal::HUP]
        .into_iter()
        .find(|s| s.as_raw() == sig)
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
