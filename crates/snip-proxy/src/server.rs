//! The listener, the per-request handler and the upstream client.

use crate::body::{read_bounded, Read};
use crate::rewrite::{Api, Rewriter};
use crate::upstream::{Provider, Upstream};
use crate::{Error, ProxyConfig};
use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::{TokioExecutor, TokioIo};
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

type Body = UnsyncBoxBody<Bytes, hyper::Error>;
type HttpsClient = Client<hyper_rustls::HttpsConnector<HttpConnector>, Body>;

struct State {
    config: ProxyConfig,
    rewriter: Arc<Rewriter>,
    client: HttpsClient,
    rewrite_slots: Arc<Semaphore>,
}

/// A bound proxy, ready to [`serve`](Proxy::serve).
pub struct Proxy {
    listener: TcpListener,
    addr: SocketAddr,
    state: Arc<State>,
}

impl Proxy {
    /// Binds `config.listen` and sets up the upstream client. Must run inside a tokio
    /// runtime.
    ///
    /// # Errors
    /// [`Error::NotLoopback`] for a non-loopback address without `allow_remote`,
    /// [`Error::Bind`], [`Error::CaFile`] or [`Error::Tls`].
    pub async fn bind(config: ProxyConfig, rewriter: Rewriter) -> Result<Proxy, Error> {
        if !config.listen.ip().is_loopback() && !config.allow_remote {
            return Err(Error::NotLoopback(config.listen));
        }
        let client = client(&config)?;
        let listener = TcpListener::bind(config.listen)
            .await
            .map_err(|source| Error::Bind {
                addr: config.listen,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| Error::Bind {
            addr: config.listen,
            source,
        })?;
        let rewrite_slots = Arc::new(Semaphore::new(config.rewrite_slots.max(1)));
        Ok(Proxy {
            listener,
            addr,
            state: Arc::new(State {
                config,
                rewriter: Arc::new(rewriter),
                client,
                rewrite_slots,
            }),
        })
    }

    /// The address it listens on (with the port the OS chose for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Answers connections until `shutdown` completes. Connections already open are
    /// dropped with the returned future.
    pub async fn serve(self, shutdown: impl Future<Output = ()>) {
        let connections = Arc::new(Semaphore::new(self.state.config.max_connections.max(1)));
        tokio::pin!(shutdown);
        loop {
            let accepted = tokio::select! {
                _ = &mut shutdown => return,
                a = self.listener.accept() => a,
            };
            let Ok((stream, _)) = accepted else {
                // Out of descriptors or a connection reset before accept: try again
                // shortly rather than spin.
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            };
            let Ok(permit) = connections.clone().try_acquire_owned() else {
                continue; // over the connection bound: dropping closes it
            };
            let _ = stream.set_nodelay(true);
            let state = self.state.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req| handle(state.clone(), req));
                // A client may shut its write side once its request is sent
                // (`shutdown(SHUT_WR)`, `nc -N`) and wait for the answer: without
                // half-close, hyper would take that EOF as the end of the connection
                // and drop the request unanswered.
                let _ = hyper::server::conn::http1::Builder::new()
                    .half_close(true)
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
                drop(permit);
            });
        }
    }
}

/// The upstream client: HTTP/1.1 over rustls (bundled web roots plus the extra CA
/// file) or plain HTTP (for loopback test upstreams).
fn client(config: &ProxyConfig) -> Result<HttpsClient, Error> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if let Some(path) = &config.extra_ca {
        use rustls_pki_types::pem::PemObject as _;
        use rustls_pki_types::CertificateDer;
        let ca_err = |why: String| Error::CaFile {
            path: path.clone(),
            why,
        };
        let certs = CertificateDer::pem_file_iter(path)
            .map_err(|e| ca_err(e.to_string()))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| ca_err(e.to_string()))?;
        if certs.is_empty() {
            return Err(ca_err("no certificate in it".into()));
        }
        for c in certs {
            roots.add(c).map_err(|e| ca_err(e.to_string()))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Tls(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .build();
    Ok(Client::builder(TokioExecutor::new()).build(https))
}

/// The shape a route rewrites, from the method and path (query excluded).
fn api_of(method: &Method, path: &str) -> Option<Api> {
    if method != Method::POST {
        return None;
    }
    match path {
        "/v1/messages" => Some(Api::AnthropicMessages),
        "/v1/messages/count_tokens" => Some(Api::AnthropicCountTokens),
        "/v1/chat/completions" => Some(Api::OpenAiChat),
        "/v1/responses" => Some(Api::OpenAiResponses),
        _ => None,
    }
}

/// The provider a request goes to.
fn provider_of(api: Option<Api>, headers: &HeaderMap) -> Provider {
    match api {
        Some(Api::AnthropicMessages | Api::AnthropicCountTokens) => Provider::Anthropic,
        Some(Api::OpenAiChat | Api::OpenAiResponses) => Provider::OpenAi,
        None if path_is_anthropic(headers) => Provider::Anthropic,
        None => Provider::OpenAi,
    }
}

fn path_is_anthropic(headers: &HeaderMap) -> bool {
    headers.contains_key("anthropic-version") || headers.contains_key("x-api-key")
}

/// Hop-by-hop headers (RFC 9110 §7.6.1): they describe one connection, so they are
/// not forwarded; hyper sets the framing of each side itself.
fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|n| HeaderName::from_bytes(n.trim().as_bytes()).ok())
        .collect();
    for n in named {
        headers.remove(n);
    }
    for n in [
        header::CONNECTION,
        header::TRANSFER_ENCODING,
        header::TE,
        header::TRAILER,
        header::UPGRADE,
        header::PROXY_AUTHORIZATION,
        header::PROXY_AUTHENTICATE,
    ] {
        headers.remove(n);
    }
    headers.remove("keep-alive");
    headers.remove("proxy-connection");
}

/// A short JSON error answered by the proxy itself (never echoing the request).
fn local_error(status: StatusCode, message: &str) -> Response<Body> {
    let body = serde_json::json!({
        "type": "error",
        "error": { "type": "snip_proxy_error", "message": message }
    });
    let mut resp = Response::new(full(Bytes::from(body.to_string())));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

fn full(b: Bytes) -> Body {
    Full::new(b).map_err(|never| match never {}).boxed_unsync()
}

/// Whether a body is in an encoding other than identity (it is then never read).
fn encoded(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::CONTENT_ENCODING)
        .iter()
        .any(|v| !v.as_bytes().eq_ignore_ascii_case(b"identity"))
}

async fn handle(state: Arc<State>, req: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    if req.method() == Method::CONNECT {
        return Ok(local_error(
            StatusCode::METHOD_NOT_ALLOWED,
            "CONNECT is refused: this is a reverse proxy for its configured upstreams only",
        ));
    }
    if req.uri().scheme().is_some() || req.uri().authority().is_some() {
        return Ok(local_error(
            StatusCode::BAD_REQUEST,
            "absolute-form request targets are refused: this is not an open proxy",
        ));
    }
    let api = api_of(req.method(), req.uri().path());
    let provider = provider_of(api, req.headers());
    let upstream: &Upstream = match provider {
        Provider::Anthropic => &state.config.anthropic,
        Provider::OpenAi => &state.config.openai,
    };
    let pq = req
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_string();
    let Some(uri) = upstream.uri_for(&pq) else {
        return Ok(local_error(
            StatusCode::BAD_REQUEST,
            "unusable request path",
        ));
    };
    let (mut parts, body) = req.into_parts();
    strip_hop_by_hop(&mut parts.headers);
    if let Ok(host) = HeaderValue::from_str(upstream.authority()) {
        parts.headers.insert(header::HOST, host);
    }
    parts.uri = uri;
    parts.version = hyper::Version::HTTP_11;

    let body: Body = match api {
        Some(api) if !encoded(&parts.headers) => {
            match rewritten_body(&state, api, &mut parts.headers, body).await {
                Ok(b) => b,
                Err(_) => {
                    // The client broke off sending its body: nothing to forward.
                    return Ok(local_error(
                        StatusCode::BAD_REQUEST,
                        "request body unreadable",
                    ));
                }
            }
        }
        _ => body.boxed_unsync(),
    };
    let upstream_req = Request::from_parts(parts, body);
    match state.client.request(upstream_req).await {
        Ok(resp) => {
            let (mut parts, body) = resp.into_parts();
            strip_hop_by_hop(&mut parts.headers);
            Ok(Response::from_parts(parts, body.boxed_unsync()))
        }
        Err(e) => Ok(local_error(
            StatusCode::BAD_GATEWAY,
            &format!(
                "upstream {} unreachable: {}",
                provider.name(),
                error_chain(&e)
            ),
        )),
    }
}

/// An error and its sources on one line (no request content is in them).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

/// Reads the body (waiting for a rewrite slot), rewrites it on a blocking thread, and
/// returns the body to forward: the rewrite, or the original bytes, or (over the
/// bound) the original stream. Sets `content-length` for a rewrite.
async fn rewritten_body(
    state: &Arc<State>,
    api: Api,
    headers: &mut HeaderMap,
    body: Incoming,
) -> Result<Body, hyper::Error> {
    let max = state.config.max_rewrite_bytes;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return Ok(body.boxed_unsync());
    }
    let Ok(_slot) = state.rewrite_slots.clone().acquire_owned().await else {
        return Ok(body.boxed_unsync());
    };
    let bytes = match read_bounded(body, max).await? {
        Read::Whole(b) => b,
        Read::Over(stream) => return Ok(stream.boxed_unsync()),
    };
    let rewriter = state.rewriter.clone();
    let input = bytes.clone();
    let out = tokio::task::spawn_blocking(move || rewriter.rewrite(api, &input))
        .await
        .ok()
        .flatten();
    match out {
        Some(r) => {
            headers.insert(header::CONTENT_LENGTH, HeaderValue::from(r.body.len()));
            Ok(full(Bytes::from(r.body)))
        }
        None => Ok(full(bytes)),
    }
}
