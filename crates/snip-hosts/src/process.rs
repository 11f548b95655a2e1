//! Running a command for a host: as an agent's terminal runs it (stdout and stderr
//! merged into one pipe, signals to snip passed on to it: [`run_merged`]), or in the
//! foreground of the terminal ([`run_in_foreground`]), and its exit status as a shell
//! reports it ([`exit_code`]); a pipe that brings snip a long input is widened
//! ([`WidensPipe`]).

use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
use signal_hook::iterator::Signals;
use std::io::PipeReader;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, PoisonError};

/// A command that could not be started, with the status a shell exits with then.
#[derive(Debug, thiserror::Error)]
#[error("cannot run {program:?}: {source} ({hint})")]
pub struct StartError {
    /// The program as given.
    pub program: String,
    /// 127 when it is not found, 126 when it is found but cannot be executed (not
    /// executable, a directory, not a program).
    pub status: u8,
    /// What to check.
    pub hint: &'static str,
    /// The OS error.
    #[source]
    pub source: std::io::Error,
}

/// Runs `program` with `args`, its stdin inherited and its stdout and stderr merged
/// into one pipe, which `read` consumes (to its end: it ends when the command exits).
/// SIGINT, SIGTERM and SIGHUP sent to this process meanwhile are passed on to the
/// command (its pid; no process group is made), which decides what they mean.
/// Returns what `read` returned and the command's status as [`exit_code`] gives it:
/// its own code, also when it handled or ignored a signal passed on, 128+N when the
/// signal N ended it.
///
/// # Errors
/// [`StartError`] when the command cannot be started; an I/O error (boxed) when the
/// pipe cannot be made or waiting for the command fails.
pub fn run_merged<R>(
    program: &str,
    args: &[String],
    read: impl FnOnce(WidensPipe<PipeReader>) -> R,
) -> Result<(R, u8), Box<dyn std::error::Error + Send + Sync>> {
    // Caught from before the spawn, so no signal can end this process before the
    // command's output is read. If they cannot be caught, the command still runs.
    let signals = Signals::new([SIGINT, SIGTERM, SIGHUP]).ok();
    let (reader, writer) = std::io::pipe()?;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::inherit())
        .stdout(writer.try_clone()?)
        .stderr(writer);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(source) => {
            let (status, hint) = if source.kind() == std::io::ErrorKind::NotFound {
                (127, "check the name and PATH")
            } else {
                (
                    126,
                    "it was found but cannot be executed: check its permissions and format",
                )
            };
            return Err(Box::new(StartError {
                program: program.to_string(),
                status,
                hint,
                source,
            }));
        }
    };
    // Close our copies of the write end, so reading ends when the command exits.
    drop(cmd);
    let relay = signals.map(|s| Relay::start(s, &child));
    let got = read(WidensPipe::new(reader));
    let status = match relay {
        Some(r) => r.wait(&mut child)?,
        None => child.wait()?,
    };
    Ok((got, exit_code(&status)))
}

/// The capacity, bytes, [`widen_pipe`] asks for: Linux's default ceiling for a process
/// without `CAP_SYS_RESOURCE` (`/proc/sys/fs/pipe-max-size`).
pub const PIPE_CAPACITY: usize = 1024 * 1024;

/// Bytes a [`WidensPipe`] passes on before it widens its pipe: a typical tool result
/// is shorter and leaves the pipe as it was.
pub const WIDEN_AFTER: usize = 1024 * 1024;

/// Asks the kernel to let the pipe `fd` hold [`PIPE_CAPACITY`] bytes instead of its
/// default 64 KiB, when `fd` is a pipe narrower than that (Linux, `F_SETPIPE_SZ`);
/// anything else, or a refusal (over the user's pipe memory limit), leaves it as it
/// was, silently.
///
/// Why: a writer blocks once the pipe is full, and each 64 KiB then costs both
/// processes a wake-up. Through a 1 MiB pipe a 100 MB log reaches `snip` in 16 times
/// fewer hand-overs, and the writer keeps running while `snip` works on what it read
/// (docs/benchmark.md, "A wider pipe").
pub fn widen_pipe(fd: impl std::os::fd::AsFd) {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        // Only a pipe has a size to read (anything else: EBADF); a wider one is kept.
        let fd = fd.as_fd();
        if rustix::pipe::fcntl_getpipe_size(fd).is_ok_and(|n| n < PIPE_CAPACITY) {
            let _ = rustix::pipe::fcntl_setpipe_size(fd, PIPE_CAPACITY);
        }
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let _ = fd;
}

/// A reader that widens the pipe it reads ([`widen_pipe`]) once [`WIDEN_AFTER`] bytes
/// have come through it, so only a long input gets the wider pipe. The kernel counts a
/// pipe's capacity against its user's soft limit of pipe memory
/// (`/proc/sys/fs/pipe-user-pages-soft`, 64 MiB by default), and past that limit the
/// user's new pipes get one page each: widening every pipe of every short call could
/// slow a machine running many at once.
#[derive(Debug)]
pub struct WidensPipe<R> {
    inner: R,
    /// Bytes still to pass before widening; 0 once widened.
    until: usize,
}

impl<R> WidensPipe<R> {
    /// Wraps `inner` (a pipe, or anything else, which is then read as it is).
    pub fn new(inner: R) -> Self {
        WidensPipe {
            inner,
            until: WIDEN_AFTER,
        }
    }
}

impl<R: std::io::Read + std::os::fd::AsFd> std::io::Read for WidensPipe<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if self.until > 0 {
            self.until = self.until.saturating_sub(n);
            if self.until == 0 {
                widen_pipe(&self.inner);
            }
        }
        Ok(n)
    }
}

/// Runs `cmd` in the foreground until it exits and returns its status as
/// [`exit_code`] gives it. SIGINT and SIGQUIT (Ctrl-C, Ctrl-\\) reach the command
/// through the terminal's process group and do not end this process, which keeps
/// serving the command (e.g. as its proxy) until it exits.
///
/// # Errors
/// The command could not be started or waited for.
pub fn run_in_foreground(cmd: &mut Command) -> std::io::Result<u8> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGQUIT] {
        let _ = signal_hook::flag::register(sig, flag.clone());
    }
    Ok(exit_code(&cmd.status()?))
}

/// The status to exit with after a command: its code, or 128+N for signal N (as a
/// shell reports it); 1 when there is neither.
pub fn exit_code(status: &ExitStatus) -> u8 {
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

/// Passes SIGINT, SIGTERM and SIGHUP received by this process on to the command (its
/// pid) until the command has been reaped.
struct Relay {
    handle: signal_hook::iterator::Handle,
    thread: std::thread::JoinHandle<()>,
    /// Set once the command is reaped: its pid may then belong to another process.
    reaped: Arc<Mutex<bool>>,
    pid: rustix::process::Pid,
}

impl Relay {
    fn start(mut signals: Signals, child: &Child) -> Relay {
        let pid = rustix::process::Pid::from_child(child);
        let reaped = Arc::new(Mutex::new(false));
        let handle = signals.handle();
        let thread = {
            let reaped = Arc::clone(&reaped);
            std::thread::spawn(move || {
                for sig in signals.forever() {
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
            reaped,
            pid,
        }
    }

    /// Waits for the command to exit, reaps it and stops relaying.
    fn wait(self, child: &mut Child) -> std::io::Result<ExitStatus> {
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
        Ok(status)
    }
}

/// The signals passed on.
fn to_signal(sig: i32) -> Option<rustix::process::Signal> {
    use rustix::process::Signal;
    [Signal::INT, Signal::TERM, Signal::HUP]
        .into_iter()
        .find(|s| s.as_raw() == sig)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read as _;

    fn sh(script: &str) -> (String, u8) {
        let (out, status) = run_merged("sh", &["-c".into(), script.into()], |mut r| {
            let mut s = String::new();
            r.read_to_string(&mut s).unwrap();
            s
        })
        .unwrap();
        (out, status)
    }

    #[test]
    fn stdout_and_stderr_share_one_pipe_and_the_status_is_the_commands() {
        assert_eq!(
            sh("echo a; echo b >&2; echo c; exit 3"),
            ("a\nb\nc\n".into(), 3)
        );
        // Ended by a signal: 128+N.
        assert_eq!(sh("kill -TERM $$").1, 128 + 15);
    }

    #[test]
    fn a_command_that_cannot_start_gets_a_shells_status() {
        let e = run_merged("/nonexistent/snip-test", &[], |_| ()).unwrap_err();
        let e = e.downcast::<StartError>().unwrap();
        assert_eq!(e.status, 127);
        let e = run_merged("/", &[], |_| ()).unwrap_err();
        assert_eq!(e.downcast::<StartError>().unwrap().status, 126);
    }

    /// A pipe is widened to [`PIPE_CAPACITY`] whenever the kernel lets this user
    /// widen one (probed on a second pipe); a regular file is left alone and nothing
    /// fails; a pipe already wider is kept.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_pipe_is_widened_and_a_file_is_left_alone() {
        let want = widened_size();
        let (reader, _writer) = std::io::pipe().unwrap();
        assert_eq!(
            rustix::pipe::fcntl_getpipe_size(&reader).unwrap(),
            64 * 1024
        );
        widen_pipe(&reader);
        assert_eq!(rustix::pipe::fcntl_getpipe_size(&reader).unwrap(), want);
        let file = tempfile::tempfile().unwrap();
        widen_pipe(&file);
        assert!(rustix::pipe::fcntl_getpipe_size(&file).is_err());
        if want == PIPE_CAPACITY {
            let (wide, _w) = std::io::pipe().unwrap();
            if rustix::pipe::fcntl_setpipe_size(&wide, 2 * PIPE_CAPACITY).is_ok() {
                widen_pipe(&wide);
                let n = rustix::pipe::fcntl_getpipe_size(&wide).unwrap();
                assert_eq!(n, 2 * PIPE_CAPACITY);
            }
        }
    }

    /// The size a widened pipe has here: [`PIPE_CAPACITY`] when this user may widen
    /// one (probed on a pipe of its own), else the default 64 KiB.
    #[cfg(target_os = "linux")]
    fn widened_size() -> usize {
        let (probe, _w) = std::io::pipe().unwrap();
        if rustix::pipe::fcntl_setpipe_size(&probe, PIPE_CAPACITY).is_ok() {
            PIPE_CAPACITY
        } else {
            64 * 1024
        }
    }

    /// `run_merged`'s pipe keeps its size through a short output and is widened
    /// once [`WIDEN_AFTER`] bytes have come through, with every byte read.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_long_output_widens_the_pipe_and_a_short_one_does_not() {
        let want = widened_size();
        let size_after = |bytes: usize| {
            let script = format!("head -c {bytes} /dev/zero");
            let ((size, got), _) = run_merged("sh", &["-c".into(), script], |mut r| {
                let mut got = 0;
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    match r.read(&mut buf).unwrap() {
                        0 => break,
                        n => got += n,
                    }
                }
                let size = rustix::pipe::fcntl_getpipe_size(&r.inner).unwrap();
                (size, got)
            })
            .unwrap();
            assert_eq!(got, bytes);
            size
        };
        assert_eq!(size_after(100_000), 64 * 1024);
        assert_eq!(size_after(WIDEN_AFTER - 1), 64 * 1024);
        assert_eq!(size_after(3 * WIDEN_AFTER), want);
    }
}
