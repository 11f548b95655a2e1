//! `snip uninstall <host>`: removes what `snip install` added. A file still exactly as
//! the install left it gets its original bytes back (or is deleted when the install
//! created it); a file edited since loses only snip's own entries.
use super::install::HostName;
use anyhow::Result;
use snip_hosts::claude_install::{self, Scope};
use snip_hosts::{config_file, opencode};
use std::process::ExitCode;

/// Arguments of `snip uninstall`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The host to remove snip from.
    #[arg(value_enum)]
    pub host: HostName,
    /// The scope given to `snip install`.
    #[arg(long, value_enum, default_value = "user")]
    pub scope: Scope,
    /// Print the exact edit as a unified diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// Runs `snip uninstall`.
pub fn run(args: Args) -> Result<ExitCode> {
    let changes = match args.host {
        HostName::ClaudeCode => claude_install::plan_uninstall(args.scope)?,
        HostName::Opencode => opencode::plan_uninstall(args.scope)?,
    };
    let host = args.host.name();
    if changes.is_empty() {
        crate::common::print(format!(
            "snip is not installed for {host} (scope {:?}); nothing changed\n",
            args.scope
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    let text: String = config_file::apply_uninstall(changes, args.dry_run)?
        .iter()
        .map(|(p, undone)| match undone {
            config_file::Undone::Restored => format!("restored {}\n", p.display()),
            config_file::Undone::EntriesRemoved => format!(
                "removed snip's entries from {} (it changed since install; the rest is kept)\n",
                p.display()
            ),
            config_file::Undone::Removed => format!(
                "removed {} (it did not exist before install)\n",
                p.display()
            ),
        })
        .collect();
    crate::common::print(text)?;
    Ok(ExitCode::SUCCESS)
}
