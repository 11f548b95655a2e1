//! `snip install|uninstall claude-code`: registers the hook in Claude Code's
//! `settings.json` and the MCP server in Claude Code's MCP configuration.
//!
//! | scope | hooks | MCP server |
//! |---|---|---|
//! | `user` | `~/.claude/settings.json` | `~/.claude.json` → `mcpServers.snip` |
//! | `project` | `.claude/settings.json` | `.mcp.json` → `mcpServers.snip` |
//! | `local` | `.claude/settings.local.json` | `~/.claude.json` → `projects[<cwd>].mcpServers.snip` |

use crate::claude_code::shell_quote;
use crate::config_file::{self, home, input, Change, Dialect, Doc, Undo};
use crate::error::{Context as _, Result};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// Tools whose output the `PostToolUse` hook rewrites (a Claude Code matcher regex).
pub const POST_MATCHER: &str = "Bash|PowerShell|Read|Grep|Glob|WebFetch|mcp__.*";
/// Seconds Claude Code waits for the hook before ignoring it.
pub const HOOK_TIMEOUT_S: u64 = 30;

/// Where snip is registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    /// For every project of this user.
    User,
    /// For everyone working on this project (files meant to be committed).
    Project,
    /// For this user in this project only (files not committed).
    Local,
}

/// The files one scope edits.
pub struct Paths {
    /// The settings file holding the hooks.
    pub settings: PathBuf,
    /// The file holding the MCP server.
    pub mcp: PathBuf,
    /// Object keys from the MCP file's root to its `mcpServers` object.
    pub mcp_parent: Vec<String>,
}

impl Paths {
    /// The files of `scope`, relative to `$HOME` and the current directory.
    pub fn for_scope(scope: Scope) -> Result<Paths> {
        let home = home()?;
        let cwd = std::env::current_dir().context("reading the current directory")?;
        Ok(match scope {
            Scope::User => Paths {
                settings: home.join(".claude/settings.json"),
                mcp: home.join(".claude.json"),
                mcp_parent: vec!["mcpServers".into()],
            },
            Scope::Project => Paths {
                settings: cwd.join(".claude/settings.json"),
                mcp: cwd.join(".mcp.json"),
                mcp_parent: vec!["mcpServers".into()],
            },
            Scope::Local => Paths {
                settings: cwd.join(".claude/settings.local.json"),
                mcp: home.join(".claude.json"),
                mcp_parent: vec![
                    "projects".into(),
                    cwd.to_string_lossy().into_owned(),
                    "mcpServers".into(),
                ],
            },
        })
    }
}

/// The hook command for the snip binary at `exe`.
pub fn hook_command(exe: &Path) -> String {
    format!("{} hook claude-code", shell_quote(&exe.to_string_lossy()))
}

/// Whether a hook command is snip's (any location of the binary).
pub fn is_snip_hook(command: &str) -> bool {
    let Some(program) = command.trim().strip_suffix(" hook claude-code") else {
        return false;
    };
    let program = program.trim().trim_matches('\'').trim_matches('"');
    Path::new(program).file_name().and_then(|n| n.to_str()) == Some("snip")
}

/// Plans the install: the changes to make (empty when already installed).
pub fn plan_install(scope: Scope, wrap_bash: bool, exe: &Path) -> Result<Vec<Change>> {
    let paths = Paths::for_scope(scope)?;
    let command = hook_command(exe);
    let mut changes = Vec::new();

    let mut settings = Doc::load(&paths.settings, Dialect::Json)?;
    let value = settings.value();
    let mut events = vec![("PostToolUse", POST_MATCHER)];
    if wrap_bash {
        events.push(("PreToolUse", "Bash"));
    }
    for (event, matcher) in events {
        if has_snip_hook(&value, event) {
            continue;
        }
        let hooks = settings.object_at(&["hooks"])?;
        let groups = settings.array_in(&hooks, "/hooks", event)?;
        groups.append(input(&json!({
            "matcher": matcher,
            "hooks": [{ "type": "command", "command": command, "timeout": HOOK_TIMEOUT_S }],
        })));
    }
    changes.extend(settings.into_change());

    let mut mcp = Doc::load(&paths.mcp, Dialect::Json)?;
    let parent: Vec<&str> = paths.mcp_parent.iter().map(String::as_str).collect();
    if lookup(&mcp.value(), &parent)
        .and_then(|s| s.get("snip"))
        .is_none()
    {
        let servers = mcp.object_at(&parent)?;
        servers.append(
            "snip",
            input(&json!({
                "type": "stdio",
                "command": exe.to_string_lossy(),
                "args": ["mcp"],
                "env": {},
            })),
        );
    }
    changes.extend(mcp.into_change());
    Ok(changes)
}

/// Plans the uninstall: exact restores where the files are as installed, otherwise
/// the removal of snip's entries only.
pub fn plan_uninstall(scope: Scope) -> Result<Vec<Change>> {
    let paths = Paths::for_scope(scope)?;
    let mut changes = Vec::new();
    match config_file::plan_uninstall(&paths.settings, Some(Dialect::Json))? {
        Undo::Exact(c) => changes.push(c),
        Undo::Structural(doc, created) => {
            remove_snip_hooks(&doc);
            config_file::remove_empty_created(&doc, &created);
            changes.extend(doc.into_change());
        }
        Undo::Nothing => {}
    }
    // `~/.claude.json` is shared by the user and local scopes and rewritten by Claude
    // Code itself; the same logic applies.
    match config_file::plan_uninstall(&paths.mcp, Some(Dialect::Json))? {
        Undo::Exact(c) => changes.push(c),
        Undo::Structural(doc, created) => {
            let parent: Vec<&str> = paths.mcp_parent.iter().map(String::as_str).collect();
            let mut obj = Some(doc.root_object());
            for k in &parent {
                obj = obj.and_then(|o| o.object_value(k));
            }
            if let Some(prop) = obj.and_then(|o| o.get("snip")) {
                prop.remove();
            }
            config_file::remove_empty_created(&doc, &created);
            changes.extend(doc.into_change());
        }
        Undo::Nothing => {}
    }
    Ok(changes)
}

/// Whether `settings` already has snip's hook for `event`.
fn has_snip_hook(settings: &Value, event: &str) -> bool {
    settings["hooks"][event].as_array().is_some_and(|groups| {
        groups.iter().any(|g| {
            g["hooks"].as_array().is_some_and(|hs| {
                hs.iter()
                    .any(|h| h["command"].as_str().is_some_and(is_snip_hook))
            })
        })
    })
}

/// Removes snip's hooks from `hooks.PostToolUse` and `hooks.PreToolUse`: a matcher
/// group holding only snip's hook goes whole; otherwise only snip's entry goes.
fn remove_snip_hooks(doc: &Doc) {
    let Some(hooks) = doc.root_object().object_value("hooks") else {
        return;
    };
    for event in ["PostToolUse", "PreToolUse"] {
        let Some(groups) = hooks.array_value(event) else {
            continue;
        };
        for group in groups.elements() {
            let Some(obj) = group.as_object() else {
                continue;
            };
            let Some(entries) = obj.array_value("hooks") else {
                continue;
            };
            let elements = entries.elements();
            let is_snip: Vec<bool> = elements
                .iter()
                .map(|e| {
                    e.to_serde_value()
                        .and_then(|v| v["command"].as_str().map(is_snip_hook))
                        .unwrap_or(false)
                })
                .collect();
            if !is_snip.iter().any(|s| *s) {
                continue;
            }
            if is_snip.iter().all(|s| *s) {
                group.remove();
            } else {
                for (e, snip) in elements.into_iter().zip(is_snip) {
                    if snip {
                        e.remove();
                    }
                }
            }
        }
    }
}

/// The value at a path of object keys.
fn lookup<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(*k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_its_hook_wherever_the_binary_is() {
        assert!(is_snip_hook("/usr/local/bin/snip hook claude-code"));
        assert!(is_snip_hook("'/opt/my tools/snip' hook claude-code"));
        assert!(!is_snip_hook("/usr/bin/other hook claude-code"));
        assert!(!is_snip_hook("snip hook opencode"));
    }
}
