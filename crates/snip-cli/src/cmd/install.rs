//! `snip install <host>`: registers snip with an agent host (see `docs/claude-code.md`
//! and `docs/opencode.md`). Config files are edited in place keeping every other key,
//! their order and (JSONC) comments; a timestamped backup is written first; a second
//! run changes nothing; a malformed file is refused and left untouched.
use anyhow::{Context as _, Result};
use snip_hosts::claude_install::{self, Scope};
use snip_hosts::{config_file, opencode};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `snip install`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The host to register with.
    #[arg(value_enum)]
    pub host: HostName,
    /// Where to register: `user` (every project), `project` (shared files in the
    /// current directory) or `local` (Claude Code only: this user, this project).
    #[arg(long, value_enum, default_value = "user")]
    pub scope: Scope,
    /// Claude Code: also add the `PreToolUse` hook that runs Bash commands through
    /// `snip run` (never auto-approves a command).
    #[arg(long)]
    pub wrap_bash: bool,
    /// Print the exact edit as a unified diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Hosts snip can be installed into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HostName {
    /// Claude Code: `PostToolUse` hook + MCP server.
    ClaudeCode,
    /// OpenCode: MCP server + `tool.execute.after` plugin.
    Opencode,
}

/// The absolute path of the running `snip` binary (what the configs point to).
pub fn snip_exe() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("locating the snip binary")?;
    Ok(exe.canonicalize().unwrap_or(exe))
}

/// The command the configs of `scope` name: for `project` (files meant to be
/// committed), the bare name `snip` when the `snip` found first on `PATH` is this very
/// binary, so no machine's absolute path lands in the repository; else the absolute
/// path. The second value says whether the bare name was chosen.
fn config_exe(scope: Scope, exe: PathBuf) -> (PathBuf, bool) {
    if scope != Scope::Project {
        return (exe, false);
    }
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("snip"))
            .find(|p| p.is_file())
    });
    match on_path.and_then(|p| p.canonicalize().ok()) {
        Some(found) if found == exe => (PathBuf::from("snip"), true),
        _ => (exe, false),
    }
}

/// ` --scope project` / ` --scope local` (nothing for the default scope).
pub fn scope_flag(scope: Scope) -> &'static str {
    match scope {
        Scope::User => "",
        Scope::Project => " --scope project",
        Scope::Local => " --scope local",
    }
}

/// Runs `snip install`.
pub fn run(args: Args) -> Result<ExitCode> {
    let (exe, by_name) = config_exe(args.scope, snip_exe()?);
    let changes = match args.host {
        HostName::ClaudeCode => claude_install::plan_install(args.scope, args.wrap_bash, &exe)?,
        HostName::Opencode => {
            if args.wrap_bash {
                anyhow::bail!("--wrap-bash applies to claude-code only");
            }
            opencode::plan_install(args.scope, &exe)?
        }
    };
    let host = args.host.name();
    if changes.is_empty() {
        crate::common::print(format!(
            "snip is already installed for {host} (scope {:?}); nothing changed\n",
            args.scope
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    let written = config_file::apply_install(changes, args.dry_run)?;
    let mut text: String = written
        .iter()
        .map(|p| format!("updated {}\n", p.display()))
        .collect();
    if by_name {
        text.push_str(
            "the config runs `snip` by name (found on PATH), so the files can be committed\n",
        );
    } else if args.scope == Scope::Project {
        text.push_str(&format!(
            "the config runs {} (no `snip` on PATH is this binary): \
             others who use these files need snip at that path\n",
            exe.display()
        ));
    }
    if !args.dry_run {
        text.push_str(&format!(
            "snip is installed for {host}; `snip uninstall {host}{}` removes it\n",
            scope_flag(args.scope)
        ));
    }
    crate::common::print(text)?;
    Ok(ExitCode::SUCCESS)
}

impl HostName {
    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            HostName::ClaudeCode => "claude-code",
            HostName::Opencode => "opencode",
        }
    }
}
