//! `snip proxy` and `snip wrap`: the local reverse proxy of `snip-proxy`, alone or in
//! front of one host run as a child process.
//!
//! Both read the compression settings (`SNIP_*`), the conversation-pass settings
//! (`SNIP_CONTEXT_*`) and the store (`SNIP_STORE*`) from the environment. A bad
//! setting turns that part off with a warning; the proxy still forwards.
use anyhow::{anyhow, bail, Context as _, Result};
use snip_context::ContextSettings;
use snip_proxy::{Provider, Proxy, ProxyConfig, Rewriter, Upstream};
use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, ExitCode};

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

/// A host `snip wrap` runs.
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
    let runtime = runtime()?;
    runtime.block_on(async move {
        let proxy = Proxy::bind(config.clone(), rewriter()).await?;
        eprintln!(
            "snip proxy: listening on http://{} (anthropic -> {}, openai -> {})",
            proxy.local_addr(),
            config.anthropic,
            config.openai
        );
        proxy.serve(std::future::pending()).await;
        Ok::<_, anyhow::Error>(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Starts the proxy on a free loopback port, runs the host pointed at it, and exits
/// with the host's status (128+N when a signal N ended it).
pub fn wrap(args: WrapArgs) -> Result<ExitCode> {
    let config = proxy_config(&args.upstreams)?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = match runtime() {
            Ok(rt) => rt,
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        };
        rt.block_on(async move {
            match Proxy::bind(config, rewriter()).await {
                Ok(proxy) => {
                    let _ = tx.send(Ok(proxy.local_addr()));
                    proxy.serve(std::future::pending()).await;
                }
                Err(e) => {
                    let _ = tx.send(Err(e.into()));
                }
            }
        });
    });
    let addr = rx
        .recv()
        .map_err(|_| anyhow!("the proxy thread ended before listening"))??;
    let base = format!("http://{addr}");
    let program = args.program.clone().unwrap_or_else(|| {
        match args.host {
            Host::Claude => "claude",
            Host::Codex => "codex",
            Host::Opencode => "opencode",
        }
        .into()
    });
    let mut cmd = Command::new(&program);
    match args.host {
        Host::Claude => {
            cmd.env("ANTHROPIC_BASE_URL", &base);
        }
        Host::Codex => {
            cmd.args(snip_proxy::clients::codex_overrides(&base));
        }
        Host::Opencode => {
            let existing = std::env::var("OPENCODE_CONFIG_CONTENT").ok();
            cmd.env(
                "OPENCODE_CONFIG_CONTENT",
                snip_proxy::clients::opencode_config(existing.as_deref(), &base),
            );
        }
    }
    cmd.args(&args.args);
    // Ctrl-C reaches the host (same process group), which decides what it means;
    // snip stays up to serve it until it exits.
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGQUIT] {
        let _ = signal_hook::flag::register(sig, flag.clone());
    }
    let status = cmd
        .status()
        .with_context(|| format!("start {}", program.to_string_lossy()))?;
    Ok(exit_code(status))
}

/// The host's exit status as snip's: its code, or 128+N for a signal N.
fn exit_code(status: std::process::ExitStatus) -> ExitCode {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(c), _) => ExitCode::from(c.clamp(0, 255) as u8),
        (None, Some(s)) => ExitCode::from((128 + s).clamp(0, 255) as u8),
        _ => ExitCode::FAILURE,
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("start the async runtime")
}

/// The proxy settings from the upstream options.
fn proxy_config(args: &UpstreamArgs) -> Result<ProxyConfig> {
    let mut config = ProxyConfig {
        extra_ca: args.ca_file.clone(),
        ..ProxyConfig::default()
    };
    for spec in &args.upstream {
        let (which, url) = match spec.split_once('=') {
            Some(("anthropic", url)) => (Some(Provider::Anthropic), url),
            Some(("openai", url)) => (Some(Provider::OpenAi), url),
            _ if spec.contains("://") && !spec.split("://").next().unwrap_or("").contains('=') => {
                (None, spec.as_str())
            }
            _ => bail!("--upstream {spec:?}: expected URL, anthropic=URL or openai=URL"),
        };
        let up = Upstream::parse(url)?;
        if which != Some(Provider::OpenAi) {
            config.anthropic = up.clone();
        }
        if which != Some(Provider::Anthropic) {
            config.openai = up;
        }
    }
    Ok(config)
}

/// The rewriter from the environment; a bad setting turns its part off (with a
/// warning on stderr), never the proxy.
fn rewriter() -> Rewriter {
    let config = crate::common::core_config().unwrap_or_else(|e| {
        eprintln!("snip proxy: {e:#}; tool results are forwarded uncompressed");
        snip_core::Config {
            enabled: false,
            ..snip_core::Config::default()
        }
    });
    let context = ContextSettings::from_lookup(|k| std::env::var(k).ok()).unwrap_or_else(|e| {
        eprintln!("snip proxy: {e}; the conversation pass is off");
        ContextSettings {
            enabled: false,
            ..ContextSettings::default()
        }
    });
    let store = snip_store::open_from_env();
    if let snip_store::StoreHandle::Unavailable(why) = &store {
        eprintln!("snip proxy: store unavailable ({why}); only lossless rules apply");
    }
    Rewriter::new(config, context, store)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_specs() {
        let a = UpstreamArgs {
            upstream: vec![
                "http://127.0.0.1:1".into(),
                "anthropic=http://127.0.0.1:2/p/".into(),
            ],
            ca_file: None,
        };
        let c = proxy_config(&a).unwrap();
        assert_eq!(c.anthropic.to_string(), "http://127.0.0.1:2/p");
        assert_eq!(c.openai.to_string(), "http://127.0.0.1:1");
        for bad in ["ftp://x", "gemini=http://x", "nothing"] {
            let a = UpstreamArgs {
                upstream: vec![bad.into()],
                ca_file: None,
            };
            assert!(proxy_config(&a).is_err(), "{bad}");
        }
    }
}
