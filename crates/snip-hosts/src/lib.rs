//! snip-hosts: thin translations between an agent host's formats and one core call.
//!
//! - [`claude_code`]: the Claude Code `PostToolUse` hook payloads (what `snip hook
//!   claude-code` reads and writes);
//! - [`mcp_server`]: the MCP server (`snip mcp`), on the official Rust SDK;
//! - [`claude_install`], [`opencode`], [`config_file`]: the installers' plans and their
//!   format-preserving, recorded, undoable configuration edits;
//! - [`engine`]: the calls every adapter makes (compress with the store, restore,
//!   stats), configured from `SNIP_*` environment variables;
//! - [`process`]: running a command as an agent's terminal does (`snip run`, Claude
//!   Code's wrapped Bash calls) or in the foreground (`snip wrap`), signals passed on.
//!
//! It does not own compression (snip-core), the store (snip-store), or flags and
//! printing (snip-cli). Every rewrite goes through [`engine::compress`], which never
//! fails: on any error the output passes through unchanged.
//!
//! ```
//! use serde_json::json;
//! use snip_hosts::claude_code;
//!
//! // A hook event snip does not handle: no change (the hook prints `{}`).
//! assert_eq!(claude_code::respond(&json!({"hook_event_name": "Stop"})), None);
//! // How the installers quote a path into a shell command.
//! assert_eq!(claude_code::shell_quote("it's"), r"'it'\''s'");
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod claude_code;
pub mod claude_install;
pub mod config_file;
pub mod demo;
pub mod engine;
mod error;
pub mod mcp_server;
pub mod opencode;
pub mod process;

pub use error::{Error, Result};

/// Where the adapters read their settings.
mod common {
    /// The core configuration from `SNIP_*` environment variables (read on every call),
    /// with the host's name for the restore tool (see [`crate::engine::set_restore_tool`])
    /// unless `SNIP_RESTORE_TOOL` names one. An error is remembered for the host to tell
    /// the user (see [`crate::engine::setting_error`]).
    pub fn core_config() -> Result<snip_core::Config, snip_core::ConfigError> {
        let lookup = |k: &str| std::env::var(k).ok();
        let mut c = snip_core::Config::from_lookup(lookup).inspect_err(|e| {
            let _ = crate::engine::BAD_SETTING.set(e.to_string());
        })?;
        if let Some(tool) = crate::engine::host_restore_tool() {
            if lookup("SNIP_RESTORE_TOOL").is_none_or(|v| v.trim().is_empty()) {
                c.restore_tool = tool.to_string();
            }
        }
        Ok(c)
    }
}
