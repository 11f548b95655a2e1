//! Host integrations: thin translations between an agent host's formats and one core
//! call. Owns the Claude Code hook payloads, the MCP server, and the installers'
//! configuration edits. It does not own compression (snip-core) or the store
//! (snip-store); every rewrite goes through [`engine::compress`].

pub mod claude_code;
pub mod claude_install;
pub mod config_file;
pub mod engine;
pub mod mcp_server;
pub mod opencode;
