//! `snip proxy` and `snip wrap`: the local reverse proxy of `snip-proxy`, alone or in
//! front of one host run as a child process.
//!
//! Both read the compression settings (`SNIP_*`), the conversation-pass settings
//! (`SNIP_CONTEXT_*`) and the store (`SNIP_STORE*`) from the environment. A bad
//! setting turns that part off with a warning; the proxy still forwards.
use anyhow::{bail, Context as _, Result};
use snip_proxy::launch::{self, Client};
use snip_proxy::{ProxyConfig, Rewriter};
use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

/// Upstream and TLS options shared by `snip proxy` and `snip wrap`.
#[derive(clap::Args, Debug, Default)]
pub struct UpstreamArgs {
    /// Where to forward: `URL` (both providers), `anthropic=URL` or `openai=URL`
    /// (http or https, with an optional path prefix); repeatable. Defaults: the
    /// providers' public HTTPS API hosts.
    #[arg(long, value_name = "[PROVIDER=]URL")]
    pub upstream: Vec<String>,
    /// A PEM file of extra CA certificates to trust for HTTPS upstreams.
    #[arg(long, value_name = "PEM")]
    pub ca_file: Option<PathBuf>,
}

/// Arguments of `snip proxy`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Address to listen on (loopback only, unless --allow-remote).
    #[arg(long, default_value = "127.0.0.1:8787")]
    pub listen: SocketAddr,
    /// Allow a non-loopback --listen address: anyone who reaches it can send requests
    /// through it (with their own keys) and read nothing else, but it is then no
    /// longer a private tool.
    #[arg(long)]
    pub allow_remote: bool,
    #[command(flatten)]
    pub upstreams: UpstreamArgs,
}

/// A host `snip wrap` runs (see [`Client`]).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Host {
    /// Claude Code (`ANTHROPIC_BASE_URL`).
    Claude,
    /// Codex CLI (a `model_providers` entry with `wire_api = "responses"`, given as
    /// `-c` overrides).
    Codex,
    /// OpenCode (the anthropic and openai providers' `baseURL`, through
    /// `OPENCODE_CONFIG_CONTENT`).
    Opencode,
}

/// Arguments of `snip wrap`.
#[derive(clap::Args, Debug)]
pub struct WrapArgs {
    /// The host to run.
    #[arg(value_enum)]
    pub host: Host,
    /// The program to run instead of the host's usual command (`claude`, `codex`,
    /// `opencode`), e.g. a path to it.
    #[arg(long, value_name = "PATH")]
    pub program: Option<OsString>,
    #[command(flatten)]
    pub upstreams: UpstreamArgs,
    /// The host's own arguments, after `--`.
    #[arg(last = true)]
    pub args: Vec<OsString>,
}

/// Runs the proxy until the process is stopped.
pub fn run(args: Args) -> Result<ExitCode> {
    let mut config = proxy_config(&args.upstreams)?;
    config.listen = args.listen;
    config.allow_remote = args.allow_remote;
    if !args.listen.ip().is_loopback() {
        if !args.allow_remote {
            bail!(
                "refusing to listen on {}: not a loopback address (add --allow-remote to allow it)",
                args.listen
            );
        }
        eprintln!(
            "snip proxy: warning: listening on {}, reachable from other machines",
            args.listen
        );
    }
    let (anthropic, openai) = (config.anthropic.clone(), config.openai.clone());
    launch::serve_forever(config, rewriter(), |addr| {
        eprintln!(
            "snip proxy: listening on http://{addr} (anthropic -> {anthropic}, openai -> {openai})"
        );
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Starts the proxy on a free loopback port, runs the host pointed at it, and exits
/// with the host's status (128+N when a signal N ended it).
pub fn wrap(args: WrapArgs) -> Result<ExitCode> {
    let config = proxy_config(&args.upstreams)?;
    let addr = launch::serve_in_background(config, rewriter())?;
    let client = match args.host {
        Host::Claude => Client::Claude,
        Host::Codex => Client::Codex,
        Host::Opencode => Client::Opencode,
    };
    let mut cmd = client.command(args.program, &format!("http://{addr}"), &args.args);
    // Ctrl-C reaches the host (same process group), which decides what it means;
    // snip stays up to serve it until it exits.
    let status = snip_hosts::process::run_in_foreground(&mut cmd)
        .with_context(|| format!("start {}", cmd.get_program().to_string_lossy()))?;
    Ok(ExitCode::from(status))
}

/// The proxy settings from the upstream options.
fn proxy_config(args: &UpstreamArgs) -> Result<ProxyConfig> {
    let mut config = ProxyConfig {
        extra_ca: args.ca_file.clone(),
        ..ProxyConfig::default()
    };
    for spec in &args.upstream {
        config
            .set_upstream(spec)
            .with_context(|| format!("--upstream {spec:?}"))?;
    }
    Ok(config)
}

/// The rewriter from the environment; a bad setting turns its part off (with a
/// warning on stderr), never the proxy.
fn rewriter() -> Rewriter {
    launch::rewriter_from_env(|why| eprintln!("snip proxy: {why}"))
}
