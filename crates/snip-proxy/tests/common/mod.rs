//! A loopback upstream that records requests and answers by the `x-test-mode` header
//! (which the proxy passes through like every header), and a proxy in front of it.
#![allow(dead_code)]

use bytes::Bytes;
use http_body::{Body, Frame};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::{HeaderMap, Request, Response};
use hyper_util::rt::TokioIo;
use snip_context::ContextSettings;
use snip_proxy::{Proxy, ProxyConfig, Rewriter, Upstream};
use snip_store::{StoreHandle, StoreOptions};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::mpsc;

/// One request as the upstream received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub target: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

#[derive(Clone, Default)]
pub struct Upstream_ {
    pub requests: Arc<Mutex<Vec<Recorded>>>,
    /// Streaming bodies dropped before they ended (the connection went away).
    pub cancelled: Arc<AtomicUsize>,
}

/// A streaming body fed by a channel; counts itself cancelled when dropped early.
struct ChannelBody {
    rx: mpsc::Receiver<Result<Bytes, std::io::Error>>,
    done: bool,
    cancelled: Arc<AtomicUsize>,
}

impl Body for ChannelBody {
    type Data = Bytes;
    type Error = std::io::Error;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(r)) => Poll::Ready(Some(r.map(Frame::data))),
            Poll::Ready(None) => {
                self.done = true;
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for ChannelBody {
    fn drop(&mut self) {
        if !self.done {
            self.cancelled.fetch_add(1, Ordering::SeqCst);
        }
    }
}

type TestBody = http_body_util::combinators::UnsyncBoxBody<Bytes, std::io::Error>;

/// The SSE chunks the `sse` mode sends, `SSE_GAP` apart.
pub const SSE_CHUNKS: [&str; 4] = [
    "event: message_start\ndata: {\"type\":\"message_start\"}\n\n",
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"Hel\"}}\n\n",
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"lo\"}}\n\n",
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
];
pub const SSE_GAP: Duration = Duration::from_millis(150);

async fn answer(
    up: Upstream_,
    req: Request<Incoming>,
) -> Result<Response<TestBody>, std::io::Error> {
    let (parts, body) = req.into_parts();
    let body = body
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let mode = parts
        .headers
        .get("x-test-mode")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("json")
        .to_string();
    up.requests.lock().unwrap().push(Recorded {
        method: parts.method.to_string(),
        target: parts.uri.to_string(),
        headers: parts.headers.clone(),
        body,
    });
    let streaming = |gap: Duration, chunks: Vec<&'static str>, then_fail: bool, forever: bool| {
        let (tx, rx) = mpsc::channel(4);
        tokio::spawn(async move {
            for c in chunks {
                if tx.send(Ok(Bytes::from_static(c.as_bytes()))).await.is_err() {
                    return;
                }
                tokio::time::sleep(gap).await;
            }
            if forever {
                loop {
                    let ping = Ok(Bytes::from_static(b": ping\n\n"));
                    if tx.send(ping).await.is_err() {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
            if then_fail {
                let _ = tx.send(Err(std::io::Error::other("reset"))).await;
            }
        });
        ChannelBody {
            rx,
            done: false,
            cancelled: up.cancelled.clone(),
        }
        .boxed_unsync()
    };
    let (status, ctype, body) = match mode.as_str() {
        "sse" => (
            200,
            "text/event-stream",
            streaming(SSE_GAP, SSE_CHUNKS.to_vec(), false, false),
        ),
        "reset" => (
            200,
            "text/event-stream",
            streaming(Duration::ZERO, SSE_CHUNKS[..1].to_vec(), true, false),
        ),
        "forever" => (
            200,
            "text/event-stream",
            streaming(Duration::ZERO, SSE_CHUNKS[..1].to_vec(), false, true),
        ),
        "ratelimit" => (
            429,
            "application/json",
            Full::new(Bytes::from_static(
                br#"{"type":"error","error":{"type":"rate_limit_error"}}"#,
            ))
            .map_err(|n| match n {})
            .boxed_unsync(),
        ),
        _ => (
            200,
            "application/json",
            Full::new(Bytes::from_static(br#"{"ok":true}"#))
                .map_err(|n| match n {})
                .boxed_unsync(),
        ),
    };
    let mut resp = Response::new(body);
    *resp.status_mut() = hyper::StatusCode::from_u16(status).unwrap();
    resp.headers_mut()
        .insert("content-type", ctype.parse().unwrap());
    resp.headers_mut()
        .insert("x-upstream", "yes".parse().unwrap());
    resp.headers_mut()
        .insert("retry-after", "7".parse().unwrap());
    Ok(resp)
}

/// Starts the upstream on a free loopback port.
pub async fn start_upstream() -> (SocketAddr, Upstream_) {
    start_upstream_with(None).await
}

/// Starts the upstream on a free loopback port, over TLS with `tls` when given.
pub async fn start_upstream_with(
    tls: Option<tokio_rustls::TlsAcceptor>,
) -> (SocketAddr, Upstream_) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let up = Upstream_::default();
    let state = up.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let state = state.clone();
            let tls = tls.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req| answer(state.clone(), req));
                let http = hyper::server::conn::http1::Builder::new();
                match tls {
                    None => {
                        let _ = http.serve_connection(TokioIo::new(stream), svc).await;
                    }
                    Some(tls) => {
                        // A client that does not trust the certificate fails the
                        // handshake: nothing to serve.
                        if let Ok(stream) = tls.accept(stream).await {
                            let _ = http.serve_connection(TokioIo::new(stream), svc).await;
                        }
                    }
                }
            });
        }
    });
    (addr, up)
}

/// A test CA made now and a certificate it signs for `localhost` and 127.0.0.1:
/// (the CA's PEM, a TLS acceptor serving the certificate).
pub fn test_ca() -> (String, tokio_rustls::TlsAcceptor) {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    let key = KeyPair::generate().unwrap();
    let params = CertificateParams::new(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    let cert = params.signed_by(&key, &ca).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            rustls_pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )
        .unwrap();
    (ca.pem(), tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

pub struct Setup {
    pub proxy: SocketAddr,
    pub upstream_addr: SocketAddr,
    pub upstream: Upstream_,
    pub store_dir: tempfile::TempDir,
}

/// An upstream and a proxy in front of it (both providers), with a store in a
/// temporary directory and the given context settings (`SNIP_CONTEXT_*` pairs).
pub async fn setup_with(context: &[(&str, &str)], max_rewrite_bytes: usize) -> Setup {
    let (up_addr, upstream) = start_upstream().await;
    let store_dir = tempfile::tempdir().unwrap();
    let dir = store_dir
        .path()
        .join("store")
        .to_string_lossy()
        .into_owned();
    let opts = StoreOptions::from_lookup(|k| (k == "SNIP_STORE_DIR").then(|| dir.clone())).unwrap();
    let store = StoreHandle::open(&opts);
    assert!(store.store().is_some(), "the test store opens");
    let pairs: Vec<(String, String)> = context
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let settings = ContextSettings::from_lookup(|k| {
        pairs.iter().find(|(a, _)| a == k).map(|(_, b)| b.clone())
    })
    .unwrap();
    let rewriter = Rewriter::new(snip_core::Config::default(), settings, store);
    let url = format!("http://{up_addr}");
    let config = ProxyConfig {
        anthropic: Upstream::parse(&url).unwrap(),
        openai: Upstream::parse(&url).unwrap(),
        max_rewrite_bytes,
        ..ProxyConfig::default()
    };
    let proxy = Proxy::bind(config, rewriter).await.unwrap();
    let addr = proxy.local_addr();
    tokio::spawn(proxy.serve(std::future::pending()));
    Setup {
        proxy: addr,
        upstream_addr: up_addr,
        upstream,
        store_dir,
    }
}

impl Setup {
    /// The `Host` the upstream should see.
    pub fn upstream_authority(&self) -> String {
        self.upstream_addr.to_string()
    }
}

/// Default settings: the conversation pass off (so only per-result rules act).
pub async fn setup() -> Setup {
    setup_with(
        &[("SNIP_CONTEXT_ENABLED", "0")],
        snip_proxy::DEFAULT_MAX_REWRITE_BYTES,
    )
    .await
}

pub type Client = hyper_util::client::legacy::Client<
    hyper_util::client::legacy::connect::HttpConnector,
    Full<Bytes>,
>;

pub fn client() -> Client {
    hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new()).build_http()
}

/// Sends `body` to the proxy at `path` with `headers`; returns the response.
pub async fn send(
    s: &Setup,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: impl Into<Bytes>,
) -> Response<Incoming> {
    let mut b = Request::builder()
        .method(method)
        .uri(format!("http://{}{path}", s.proxy));
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    client()
        .request(b.body(Full::new(body.into())).unwrap())
        .await
        .unwrap()
}

/// The last request the upstream received.
pub fn last(s: &Setup) -> Recorded {
    s.upstream
        .requests
        .lock()
        .unwrap()
        .last()
        .cloned()
        .expect("a request reached the upstream")
}

/// A tool output the per-result rules shrink: a long build log (over the default
/// 24 KiB budget) with an error in the middle.
pub fn long_log(tag: &str) -> String {
    let mut s = String::new();
    for i in 0..1500 {
        s.push_str(&format!(
            "[{tag}] compiling module_{i} ... ok (elapsed {}ms)\n",
            i % 97
        ));
        if i == 700 {
            s.push_str("error[E0308]: mismatched types in module_700\n");
        }
    }
    s
}
