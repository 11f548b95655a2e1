//! Responses through the proxy: streamed chunk by chunk, statuses and headers as they
//! came, resets and disconnects propagated, requests the proxy refuses.

mod common;

use common::*;
use http_body_util::BodyExt as _;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

#[tokio::test]
async fn sse_chunks_arrive_one_by_one_as_the_upstream_sends_them() {
    let s = setup().await;
    let resp = send(
        &s,
        "POST",
        "/v1/messages",
        &[("x-test-mode", "sse"), ("x-api-key", "k")],
        "{}",
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let mut body = resp.into_body();
    let mut got = Vec::new();
    let mut times = Vec::new();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame.unwrap().into_data() {
            times.push(Instant::now());
            got.push(String::from_utf8(data.to_vec()).unwrap());
        }
    }
    assert_eq!(
        got, SSE_CHUNKS,
        "each chunk arrives whole and alone, unchanged"
    );
    for w in times.windows(2) {
        let gap = w[1] - w[0];
        assert!(
            gap >= SSE_GAP / 2,
            "chunks are not held back and batched: {gap:?}"
        );
    }
}

#[tokio::test]
async fn many_concurrent_streams() {
    let s = setup().await;
    let mut tasks = Vec::new();
    for _ in 0..32 {
        let (proxy, up) = (s.proxy, s.upstream_addr);
        tasks.push(tokio::spawn(async move {
            let s2 = Setup {
                proxy,
                upstream_addr: up,
                upstream: Default::default(),
                store_dir: tempfile::tempdir().unwrap(),
            };
            let resp = send(&s2, "POST", "/v1/messages", &[("x-test-mode", "sse")], "{}").await;
            resp.into_body().collect().await.unwrap().to_bytes()
        }));
    }
    let started = Instant::now();
    for t in tasks {
        assert_eq!(t.await.unwrap(), SSE_CHUNKS.concat().as_bytes());
    }
    // Four chunks 150 ms apart: streamed side by side, not one after another.
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn error_statuses_and_headers_pass_through() {
    let s = setup().await;
    let resp = send(
        &s,
        "POST",
        "/v1/chat/completions",
        &[("x-test-mode", "ratelimit")],
        "{}",
    )
    .await;
    assert_eq!(resp.status(), 429);
    assert_eq!(resp.headers()["retry-after"], "7");
    assert_eq!(resp.headers()["x-upstream"], "yes");
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(
        &body[..],
        br#"{"type":"error","error":{"type":"rate_limit_error"}}"#
    );
}

#[tokio::test]
async fn an_upstream_reset_mid_stream_reaches_the_client() {
    let s = setup().await;
    let resp = send(
        &s,
        "POST",
        "/v1/messages",
        &[("x-test-mode", "reset")],
        "{}",
    )
    .await;
    assert_eq!(resp.status(), 200);
    let mut body = resp.into_body();
    let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
    assert_eq!(&first[..], SSE_CHUNKS[0].as_bytes());
    let mut ended_with_error = false;
    while let Some(f) = body.frame().await {
        if f.is_err() {
            ended_with_error = true;
            break;
        }
    }
    assert!(
        ended_with_error,
        "the stream must not look complete to the client"
    );
}

#[tokio::test]
async fn a_client_disconnect_cancels_the_upstream_request() {
    let s = setup().await;
    let mut sock = tokio::net::TcpStream::connect(s.proxy).await.unwrap();
    sock.write_all(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-test-mode: forever\r\ncontent-length: 2\r\n\r\n{}")
        .await
        .unwrap();
    let mut buf = [0u8; 256];
    let n = tokio::time::timeout(Duration::from_secs(5), sock.read(&mut buf))
        .await
        .expect("the response head arrives while the stream goes on")
        .unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
    drop(sock);
    let deadline = Instant::now() + Duration::from_secs(5);
    while s.upstream.cancelled.load(Ordering::SeqCst) == 0 {
        assert!(
            Instant::now() < deadline,
            "the upstream stream was never cancelled"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_client_that_half_closes_after_its_request_gets_the_answer() {
    let s = setup().await;
    let log = long_log("h");
    let body = serde_json::to_vec(&serde_json::json!({
        "model": "m",
        "messages": [
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": log}]}
        ]
    }))
    .unwrap();
    for rewritten in [false, true] {
        let (path, payload) = if rewritten {
            ("/v1/messages", body.clone())
        } else {
            ("/v1/models", Vec::new())
        };
        let mut req = format!(
            "POST {path} HTTP/1.1\r\nhost: x\r\nx-api-key: k\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            payload.len()
        )
        .into_bytes();
        req.extend_from_slice(&payload);
        let mut sock = tokio::net::TcpStream::connect(s.proxy).await.unwrap();
        sock.write_all(&req).await.unwrap();
        sock.shutdown().await.unwrap(); // the write side only: SHUT_WR
        let mut got = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), sock.read_to_end(&mut got))
            .await
            .expect("the answer arrives after the client's half-close")
            .unwrap();
        let got = String::from_utf8_lossy(&got);
        assert!(got.starts_with("HTTP/1.1 200"), "{rewritten}: {got:.200}");
        assert!(got.ends_with(r#"{"ok":true}"#), "{rewritten}: {got:.200}");
        let up = last(&s);
        assert_eq!(up.target, path);
        if rewritten {
            assert!(up.body.len() < body.len() / 2, "the result was compressed");
        }
    }
}

/// Sends raw bytes and returns the status line.
async fn raw(s: &Setup, request: &[u8]) -> String {
    let mut sock = tokio::net::TcpStream::connect(s.proxy).await.unwrap();
    sock.write_all(request).await.unwrap();
    let mut buf = vec![0u8; 1024];
    let n = sock.read(&mut buf).await.unwrap();
    String::from_utf8_lossy(&buf[..n])
        .lines()
        .next()
        .unwrap_or("")
        .to_string()
}

#[tokio::test]
async fn connect_and_absolute_uris_are_refused() {
    let s = setup().await;
    let connect = raw(
        &s,
        b"CONNECT example.com:443 HTTP/1.1\r\nhost: example.com:443\r\n\r\n",
    )
    .await;
    assert!(connect.starts_with("HTTP/1.1 405"), "{connect}");
    let absolute = raw(
        &s,
        b"GET http://example.com/v1/models HTTP/1.1\r\nhost: example.com\r\n\r\n",
    )
    .await;
    assert!(absolute.starts_with("HTTP/1.1 400"), "{absolute}");
    assert!(
        s.upstream.requests.lock().unwrap().is_empty(),
        "nothing was forwarded"
    );
}

#[tokio::test]
async fn a_non_loopback_listen_address_is_refused_unless_allowed() {
    let config = snip_proxy::ProxyConfig {
        listen: "0.0.0.0:0".parse().unwrap(),
        ..Default::default()
    };
    let rewriter = snip_proxy::Rewriter::new(
        snip_core::Config::default(),
        snip_context::ContextSettings::default(),
        snip_store::StoreHandle::Disabled,
    );
    let err = snip_proxy::Proxy::bind(config, rewriter)
        .await
        .err()
        .expect("refused");
    assert!(matches!(err, snip_proxy::Error::NotLoopback(_)), "{err}");
}

#[tokio::test]
async fn an_unreachable_upstream_answers_502() {
    let config = snip_proxy::ProxyConfig {
        anthropic: snip_proxy::Upstream::parse("http://127.0.0.1:1").unwrap(),
        ..Default::default()
    };
    let rewriter = snip_proxy::Rewriter::new(
        snip_core::Config::default(),
        snip_context::ContextSettings::default(),
        snip_store::StoreHandle::Disabled,
    );
    let proxy = snip_proxy::Proxy::bind(config, rewriter).await.unwrap();
    let addr = proxy.local_addr();
    tokio::spawn(proxy.serve(std::future::pending()));
    let req = hyper::Request::post(format!("http://{addr}/v1/messages"))
        .body(http_body_util::Full::new(bytes::Bytes::from_static(b"{}")))
        .unwrap();
    let resp = client().request(req).await.unwrap();
    assert_eq!(resp.status(), 502);
}

#[tokio::test]
async fn an_https_upstream_is_trusted_through_the_ca_file() {
    let (ca_pem, acceptor) = test_ca();
    let (up_addr, upstream) = start_upstream_with(Some(acceptor)).await;
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("test-ca.pem");
    std::fs::write(&ca_file, ca_pem).unwrap();
    let log = long_log("tls");
    let body = serde_json::to_vec(&serde_json::json!({
        "model": "m",
        "messages": [
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": log}]}
        ]
    }))
    .unwrap();
    let store = dir.path().join("store").to_string_lossy().into_owned();
    let opts =
        snip_store::StoreOptions::from_lookup(|k| (k == "SNIP_STORE_DIR").then(|| store.clone()))
            .unwrap();
    for (host, trusted) in [
        ("localhost", true),
        ("127.0.0.1", true),
        ("localhost", false),
    ] {
        let url = format!("https://{host}:{}", up_addr.port());
        let config = snip_proxy::ProxyConfig {
            anthropic: snip_proxy::Upstream::parse(&url).unwrap(),
            extra_ca: trusted.then(|| ca_file.clone()),
            ..Default::default()
        };
        let rewriter = snip_proxy::Rewriter::new(
            snip_core::Config::default(),
            snip_context::ContextSettings::default(),
            snip_store::StoreHandle::open(&opts),
        );
        let proxy = snip_proxy::Proxy::bind(config, rewriter).await.unwrap();
        let addr = proxy.local_addr();
        tokio::spawn(proxy.serve(std::future::pending()));
        let req = hyper::Request::post(format!("http://{addr}/v1/messages"))
            .header("x-api-key", "k")
            .body(http_body_util::Full::new(bytes::Bytes::from(body.clone())))
            .unwrap();
        let seen = upstream.requests.lock().unwrap().len();
        let resp = client().request(req).await.unwrap();
        let status = resp.status();
        let answer = resp.into_body().collect().await.unwrap().to_bytes();
        let answer = String::from_utf8_lossy(&answer);
        let now = upstream.requests.lock().unwrap().len();
        if trusted {
            assert_eq!(status, 200, "{url}: {answer}");
            assert_eq!(answer, r#"{"ok":true}"#);
            assert_eq!(now, seen + 1);
            let got = upstream.requests.lock().unwrap()[seen].clone();
            assert_eq!(got.headers["host"], format!("{host}:{}", up_addr.port()));
            assert!(got.body.len() < body.len() / 2, "compressed over TLS too");
        } else {
            // Without the CA file the test CA is unknown: the handshake fails and
            // nothing reaches the upstream.
            assert_eq!(status, 502, "{url}: {answer}");
            assert!(answer.contains("certificate"), "{answer}");
            assert_eq!(now, seen);
        }
    }
}

#[tokio::test]
async fn an_unusable_ca_file_is_an_error_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "no certificate here\n").unwrap();
    for path in [dir.path().join("missing.pem"), empty] {
        let config = snip_proxy::ProxyConfig {
            extra_ca: Some(path.clone()),
            ..Default::default()
        };
        let rewriter = snip_proxy::Rewriter::new(
            snip_core::Config::default(),
            snip_context::ContextSettings::default(),
            snip_store::StoreHandle::Disabled,
        );
        let err = snip_proxy::Proxy::bind(config, rewriter).await.err();
        assert!(
            matches!(err, Some(snip_proxy::Error::CaFile { .. })),
            "{path:?}: {err:?}"
        );
    }
}
