//! `snip bench`: runs the `snip-bench` program installed next to `snip` with the same
//! arguments (`snip bench --help` lists them). The benchmark is a program of its own
//! so that `snip`, started for every tool call a hook sees, does not carry the
//! tokenizers and their tables (see `crates/snip-bench/src/main.rs`).

use anyhow::{anyhow, Context as _, Result};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

/// The program that implements `snip bench`.
const PROGRAM: &str = "snip-bench";

/// Arguments of `snip bench`: passed to `snip-bench` unread.
#[derive(clap::Args, Debug)]
#[command(disable_help_flag = true, disable_version_flag = true)]
pub struct Args {
    /// Arguments for `snip-bench` (`snip bench --help` lists them).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<OsString>,
}

/// `snip-bench` next to the running `snip` (how both are installed and built), else
/// the first one on `PATH`.
fn program() -> Option<PathBuf> {
    let beside = std::env::current_exe()
        .ok()
        .map(|exe| exe.with_file_name(PROGRAM))
        .filter(|p| p.is_file());
    beside.or_else(|| {
        std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|dir| dir.join(PROGRAM))
            .find(|p| p.is_file())
    })
}

/// Runs `snip-bench` with `args`; its exit status is `snip bench`'s.
pub fn run(args: Args) -> Result<ExitCode> {
    let Some(path) = program() else {
        return Err(anyhow!(
            "`snip bench` needs the `{PROGRAM}` program, which is installed next to `snip` \
             and was not found there or on PATH; install both with \
             `scripts/install.sh` (in a checkout, `cargo build -p snip-bench` builds it \
             next to `snip`)"
        ));
    };
    let mut cmd = Command::new(&path);
    cmd.args(&args.args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        let err = cmd.exec();
        Err(err).with_context(|| format!("cannot run {}", path.display()))
    }
    #[cfg(not(unix))]
    {
        let status = cmd
            .status()
            .with_context(|| format!("cannot run {}", path.display()))?;
        Ok(ExitCode::from(
            status.code().unwrap_or(1).clamp(0, 255) as u8
        ))
    }
}
