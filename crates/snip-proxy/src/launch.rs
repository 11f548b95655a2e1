//! Starting a proxy from a program: upstream specs as a command line gives them, the
//! rewriter from `SNIP_*` variables, serving on a runtime of its own (in the calling
//! thread or a background one), and the command of a client pointed at it (what
//! `snip proxy` and `snip wrap` do; the flags and messages stay in `snip-cli`).

use crate::{clients, Error, Provider, Proxy, ProxyConfig, Rewriter, Upstream};
use snip_context::ContextSettings;
use std::ffi::OsString;
use std::net::SocketAddr;
use std::process::Command;

impl ProxyConfig {
    /// Sets an upstream from `spec`: `URL` (both providers), `anthropic=URL` or
    /// `openai=URL` (`URL`: see [`Upstream::parse`]).
    ///
    /// # Errors
    /// [`Error::Upstream`] when `spec` is none of these or its URL is not valid.
    pub fn set_upstream(&mut self, spec: &str) -> Result<(), Error> {
        let (which, url) = match spec.split_once('=') {
            Some(("anthropic", url)) => (Some(Provider::Anthropic), url),
            Some(("openai", url)) => (Some(Provider::OpenAi), url),
            _ if spec.contains("://") && !spec.split("://").next().unwrap_or("").contains('=') => {
                (None, spec)
            }
            _ => {
                return Err(Error::Upstream {
                    url: spec.to_string(),
                    why: "expected URL, anthropic=URL or openai=URL".into(),
                })
            }
        };
        let up = Upstream::parse(url)?;
        if which != Some(Provider::OpenAi) {
            self.anthropic = up.clone();
        }
        if which != Some(Provider::Anthropic) {
            self.openai = up;
        }
        Ok(())
    }
}

/// The rewriter from `SNIP_*`, `SNIP_CONTEXT_*` and `SNIP_STORE*` variables. A bad
/// setting turns its part off, never the proxy: `warn` gets one line saying so (and
/// one when the store is unavailable: then only lossless rules apply).
pub fn rewriter_from_env(mut warn: impl FnMut(&str)) -> Rewriter {
    let lookup = |k: &str| std::env::var(k).ok();
    let config = snip_core::Config::from_lookup(lookup).unwrap_or_else(|e| {
        warn(&format!("{e}; tool results are forwarded uncompressed"));
        snip_core::Config {
            enabled: false,
            ..snip_core::Config::default()
        }
    });
    let context = ContextSettings::from_lookup(lookup).unwrap_or_else(|e| {
        warn(&format!("{e}; the conversation pass is off"));
        ContextSettings {
            enabled: false,
            ..ContextSettings::default()
        }
    });
    let store = snip_store::open_from_env();
    if let snip_store::StoreHandle::Unavailable(why) = &store {
        warn(&format!(
            "store unavailable ({why}); only lossless rules apply"
        ));
    }
    Rewriter::new(config, context, store)
}

fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Error::Runtime)
}

/// Binds `config.listen` and serves in the calling thread until the process ends;
/// `on_listen` is called with the bound address first.
///
/// # Errors
/// As [`Proxy::bind`], or [`Error::Runtime`]; once listening it does not return.
pub fn serve_forever(
    config: ProxyConfig,
    rewriter: Rewriter,
    on_listen: impl FnOnce(SocketAddr),
) -> Result<(), Error> {
    runtime()?.block_on(async move {
        let proxy = Proxy::bind(config, rewriter).await?;
        on_listen(proxy.local_addr());
        proxy.serve(std::future::pending()).await;
        Ok(())
    })
}

/// Binds `config.listen` and serves in a background thread for the rest of the
/// process; returns once it listens, with the bound address.
///
/// # Errors
/// As [`serve_forever`], when binding fails.
pub fn serve_in_background(config: ProxyConfig, rewriter: Rewriter) -> Result<SocketAddr, Error> {
    let (tx, rx) = std::sync::mpsc::channel();
    let started = tx.clone();
    std::thread::spawn(move || {
        let res = serve_forever(config, rewriter, move |addr| {
            let _ = started.send(Ok(addr));
        });
        if let Err(e) = res {
            let _ = tx.send(Err(e));
        }
    });
    rx.recv().unwrap_or_else(|_| {
        Err(Error::Runtime(std::io::Error::other(
            "the proxy thread ended before listening",
        )))
    })
}

/// A client `snip wrap` runs in front of a proxy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Client {
    /// Claude Code: `ANTHROPIC_BASE_URL`.
    Claude,
    /// Codex CLI: a `model_providers` entry with `wire_api = "responses"`, given as
    /// `-c` overrides ([`clients::codex_overrides`]).
    Codex,
    /// OpenCode: the anthropic and openai providers' `baseURL`, through
    /// `OPENCODE_CONFIG_CONTENT` ([`clients::opencode_config`], merged into the
    /// variable's current value).
    Opencode,
}

impl Client {
    /// The client's usual program name (`claude`, `codex`, `opencode`).
    pub fn program(self) -> &'static str {
        match self {
            Client::Claude => "claude",
            Client::Codex => "codex",
            Client::Opencode => "opencode",
        }
    }

    /// The command that runs `program` (the usual one when `None`) pointed at the
    /// proxy at `base` (`http://127.0.0.1:PORT`), then `args`.
    pub fn command(self, program: Option<OsString>, base: &str, args: &[OsString]) -> Command {
        let mut cmd = Command::new(program.unwrap_or_else(|| self.program().into()));
        match self {
            Client::Claude => {
                cmd.env("ANTHROPIC_BASE_URL", base);
            }
            Client::Codex => {
                cmd.args(clients::codex_overrides(base));
            }
            Client::Opencode => {
                let existing = std::env::var("OPENCODE_CONFIG_CONTENT").ok();
                cmd.env(
                    "OPENCODE_CONFIG_CONTENT",
                    clients::opencode_config(existing.as_deref(), base),
                );
            }
        }
        cmd.args(args);
        cmd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_specs() {
        let mut c = ProxyConfig::default();
        c.set_upstream("http://127.0.0.1:1").unwrap();
        c.set_upstream("anthropic=http://127.0.0.1:2/p/").unwrap();
        assert_eq!(c.anthropic.to_string(), "http://127.0.0.1:2/p");
        assert_eq!(c.openai.to_string(), "http://127.0.0.1:1");
        for bad in ["ftp://x", "gemini=http://x", "nothing"] {
            let mut c = ProxyConfig::default();
            assert!(c.set_upstream(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn each_client_is_pointed_at_the_proxy() {
        let base = "http://127.0.0.1:9";
        let args = [OsString::from("--x")];
        let claude = Client::Claude.command(None, base, &args);
        assert_eq!(claude.get_program(), "claude");
        assert!(claude
            .get_envs()
            .any(|(k, v)| k == "ANTHROPIC_BASE_URL" && v == Some(base.as_ref())));
        assert_eq!(claude.get_args().collect::<Vec<_>>(), ["--x"]);
        let codex = Client::Codex.command(Some("/bin/codex".into()), base, &args);
        assert_eq!(codex.get_program(), "/bin/codex");
        let codex_args: Vec<_> = codex.get_args().collect();
        assert_eq!(codex_args.len(), 3);
        assert!(codex_args[0]
            .to_string_lossy()
            .contains("http://127.0.0.1:9/v1"));
        assert_eq!(codex_args[2], "--x");
        let opencode = Client::Opencode.command(None, base, &[]);
        assert!(opencode
            .get_envs()
            .any(|(k, v)| k == "OPENCODE_CONFIG_CONTENT"
                && v.is_some_and(|v| v.to_string_lossy().contains("http://127.0.0.1:9/v1"))));
    }
}
