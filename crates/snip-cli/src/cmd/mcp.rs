//! `snip mcp`: the MCP stdio server (`snip_restore`, `snip_stats`). Stdout carries
//! only protocol messages; logs go to stderr. The server exits 0 when stdin closes.
use anyhow::{Context as _, Result};
use rmcp::ServiceExt as _;
use snip_hosts::mcp_server::SnipServer;
use std::process::ExitCode;

/// Arguments of `snip mcp`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {}

/// Runs `snip mcp` until the client closes stdin.
pub fn run(_args: Args) -> Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the MCP runtime")?;
    runtime.block_on(async {
        let service = match SnipServer.serve(rmcp::transport::stdio()).await {
            Ok(s) => s,
            // The client went away before (or while) opening the session: clean exit.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
                return Ok(ExitCode::SUCCESS)
            }
            Err(e) => return Err(anyhow::anyhow!("snip mcp: {e}")),
        };
        service.waiting().await.context("snip mcp: serving")?;
        Ok(ExitCode::SUCCESS)
    })
}
