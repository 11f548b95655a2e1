//! snip-proxy: a local HTTP/1.1 reverse proxy in front of the Anthropic Messages and
//! OpenAI Chat Completions / Responses APIs. On a request body it understands it
//! compresses tool results not yet compressed (the per-result rules of `snip-core`,
//! originals kept in the store) and runs the conversation pass (`snip-context`), then
//! forwards; everything else (headers, auth included, every other field, the response
//! and its stream) passes through as it came. Anything it cannot read or that fails is
//! forwarded byte for byte (fail open).
//!
//! Routes (path without the query; the query is forwarded as is):
//! - `POST /v1/messages`, `POST /v1/messages/count_tokens` → Anthropic, rewritten;
//! - `POST /v1/chat/completions`, `POST /v1/responses` → OpenAI, rewritten;
//! - any other origin-form path → the upstream of the provider its headers name
//!   (`anthropic-version` or `x-api-key` → Anthropic, otherwise OpenAI), untouched.
//!
//! Refused: `CONNECT` (405) and absolute-form request targets (400): the proxy only
//! ever talks to its configured upstreams.
//!
//! [`launch`] starts one from a program (what `snip proxy` and `snip wrap` do).
//!
//! ```
//! use snip_proxy::ProxyConfig;
//!
//! // `--upstream` specs: one URL for both providers, or one per provider.
//! let mut config = ProxyConfig::default();
//! config.set_upstream("http://127.0.0.1:8080").unwrap();
//! config.set_upstream("openai=http://127.0.0.1:9090/base").unwrap();
//! assert_eq!(config.anthropic.to_string(), "http://127.0.0.1:8080");
//! assert_eq!(config.openai.to_string(), "http://127.0.0.1:9090/base");
//! assert!(config.set_upstream("gemini=http://127.0.0.1:1").is_err());
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod body;
pub mod clients;
mod context_pass;
pub mod launch;
mod memo;
pub mod rewrite;
mod server;
mod splice;
pub mod upstream;

pub use launch::Client;
pub use memo::MEMO_MAX_BYTES;
pub use rewrite::{Api, Rewriter, Rewritten};
pub use server::Proxy;
pub use upstream::{Provider, Upstream};

use std::net::SocketAddr;
use std::path::PathBuf;

/// Errors of setting the proxy up (once running, it answers every request).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An upstream URL that is not `http://` or `https://` with a host.
    #[error("invalid upstream {url:?}: {why}")]
    Upstream {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        why: String,
    },
    /// The extra CA file could not be read or holds no PEM certificate.
    #[error("CA file {path}: {why}")]
    CaFile {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        why: String,
    },
    /// The TLS client could not be set up.
    #[error("TLS set-up: {0}")]
    Tls(String),
    /// Binding the listening socket failed.
    #[error("listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The OS error.
        source: std::io::Error,
    },
    /// A non-loopback listen address without [`ProxyConfig::allow_remote`].
    #[error("refusing to listen on {0}: not a loopback address (allow it explicitly)")]
    NotLoopback(SocketAddr),
    /// The async runtime the proxy serves on could not be started.
    #[error("start the async runtime: {0}")]
    Runtime(std::io::Error),
}

/// Largest request body (bytes) read into memory to be rewritten: 32 MiB, the
/// Messages API's own request limit. A longer body is streamed upstream untouched.
pub const DEFAULT_MAX_REWRITE_BYTES: usize = 32 << 20;

/// Request bodies read and rewritten at the same time, at most (each holds up to
/// `max_rewrite_bytes` plus its parsed form); other requests wait their turn before
/// their body is read. Responses stream without limit.
pub const DEFAULT_REWRITE_SLOTS: usize = 4;

/// Open client connections at most; a connection past it is closed at once.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;

/// Frozen settings of one proxy.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    /// Where to listen (port 0: any free port, see [`Proxy::local_addr`]).
    pub listen: SocketAddr,
    /// Whether a non-loopback `listen` is allowed (the caller warns).
    pub allow_remote: bool,
    /// Where Anthropic requests go (default `https://api.anthropic.com`).
    pub anthropic: Upstream,
    /// Where OpenAI requests go (default `https://api.openai.com`).
    pub openai: Upstream,
    /// A PEM file of extra CA certificates to trust for HTTPS upstreams, besides the
    /// bundled web roots.
    pub extra_ca: Option<PathBuf>,
    /// See [`DEFAULT_MAX_REWRITE_BYTES`].
    pub max_rewrite_bytes: usize,
    /// See [`DEFAULT_REWRITE_SLOTS`].
    pub rewrite_slots: usize,
    /// See [`DEFAULT_MAX_CONNECTIONS`].
    pub max_connections: usize,
}

impl Default for ProxyConfig {
    fn default() -> Self {
        ProxyConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            allow_remote: false,
            anthropic: Upstream::default_for(Provider::Anthropic),
            openai: Upstream::default_for(Provider::OpenAi),
            extra_ca: None,
            max_rewrite_bytes: DEFAULT_MAX_REWRITE_BYTES,
            rewrite_slots: DEFAULT_REWRITE_SLOTS,
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
}
