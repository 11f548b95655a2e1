//! The proxy's overhead, measured (not a test): added latency per request, proxy vs
//! direct to the same loopback upstream, on 50 KB and 1 MB request bodies (median
//! and p99), time to the first streamed byte, and the proxy process's peak RSS while
//! 16 streams run side by side.
//!
//! ```text
//! cargo run --release -p snip-proxy --example proxy_bench
//! ```
//!
//! The proxy runs as a child process (this program, started again with `--serve`),
//! with its store in a temporary directory; the upstream and the client run here.
//!
//! `proxy_bench --rewrite N` times only the proxy's work on a request body, in this
//! process (no HTTP): `Rewriter::rewrite` on the 1 MB session body, N times after 5
//! warm-up calls, then on a session growing by one call per request (the shape a host
//! sends). It prints the median and mean wall time per call (ms) and the CPU time per
//! call (user + system, ms): the loop to run under a profiler.

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use std::io::BufRead as _;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

type Client = hyper_util::client::legacy::Client<
    hyper_util::client::legacy::connect::HttpConnector,
    Full<Bytes>,
>;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--serve") {
        serve(&args[2], &args[3]);
        return;
    }
    if args.get(1).map(String::as_str) == Some("--rewrite") {
        let n = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(100);
        rewrite_in_process(n);
        return;
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(measure());
}

/// Child mode: a proxy in front of `upstream`, store in `store_dir`; prints its port.
fn serve(upstream: &str, store_dir: &str) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let rewriter = rewriter(store_dir);
        let up = snip_proxy::Upstream::parse(upstream).unwrap();
        let config = snip_proxy::ProxyConfig {
            anthropic: up.clone(),
            openai: up,
            ..Default::default()
        };
        let proxy = snip_proxy::Proxy::bind(config, rewriter).await.unwrap();
        println!("{}", proxy.local_addr().port());
        proxy.serve(std::future::pending()).await;
    });
}

/// A rewriter with the default settings, its store in `store_dir`.
fn rewriter(store_dir: &str) -> snip_proxy::Rewriter {
    let dir = store_dir.to_string();
    let opts =
        snip_store::StoreOptions::from_lookup(|k| (k == "SNIP_STORE_DIR").then(|| dir.clone()))
            .unwrap();
    snip_proxy::Rewriter::new(
        snip_core::Config::default(),
        snip_context::ContextSettings::default(),
        snip_store::StoreHandle::open(&opts),
    )
}

/// `--rewrite N`: the rewrite alone, in this process (see the module's docs).
fn rewrite_in_process(n: usize) {
    let store = tempfile::tempdir().unwrap();
    let rewriter = rewriter(&store.path().join("store").to_string_lossy());
    let api = snip_proxy::Api::AnthropicMessages;
    // Each body is made just before its call (a copy at most: its CPU time is counted
    // too, and is small beside the rewrite's).
    let report = |name: &str, bodies: &mut dyn Iterator<Item = Bytes>| {
        for b in (&mut *bodies).take(5) {
            rewriter.rewrite(api, &b);
        }
        let cpu0 = cpu_ms(std::process::id());
        let mut t = Vec::with_capacity(n);
        let mut last = 0;
        for b in (&mut *bodies).take(n) {
            let t0 = Instant::now();
            let out = rewriter.rewrite(api, &b);
            t.push(t0.elapsed());
            assert!(out.is_some(), "the body was not rewritten");
            last = b.len();
        }
        let cpu = (cpu_ms(std::process::id()) - cpu0) / n as f64;
        let mean = t.iter().sum::<Duration>().as_secs_f64() * 1000.0 / n as f64;
        println!(
            "{name:<34} median {:>7.3} ms   mean {mean:>7.3} ms   CPU {cpu:>7.3} ms/call   ({n} calls, {last} bytes last)",
            pct(&mut t, 0.5),
        );
    };
    let same = request(1_000_000, true);
    report(
        "1 MB session, the same body",
        &mut std::iter::repeat_n(same, n + 5),
    );
    // A session growing by one call per request, from 1 MB on.
    let mut calls = 0;
    messages(true, |i, total| {
        calls = i;
        total < 1_000_000
    });
    report(
        "1 MB session, growing by one call",
        &mut growing_bodies(calls, n + 5),
    );
}

type UpBody = http_body_util::combinators::UnsyncBoxBody<Bytes, std::io::Error>;

/// The upstream: reads the body; `x-sse: N` answers N chunks of 1 KiB, 10 ms apart;
/// otherwise a small JSON.
async fn answer(req: Request<Incoming>) -> Result<Response<UpBody>, std::io::Error> {
    let chunks: usize = req
        .headers()
        .get("x-sse")
        .and_then(|v| v.to_str().ok()?.parse().ok())
        .unwrap_or(0);
    let _ = req.into_body().collect().await;
    if chunks == 0 {
        let b = Full::new(Bytes::from_static(b"{\"ok\":true}"))
            .map_err(|n| match n {})
            .boxed_unsync();
        return Ok(Response::new(b));
    }
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(2);
    tokio::spawn(async move {
        let chunk = Bytes::from(format!("data: {}\n\n", "x".repeat(1016)));
        for _ in 0..chunks {
            if tx.send(chunk.clone()).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
    let body = http_body_util::StreamBody::new(Chunks(rx)).boxed_unsync();
    Ok(Response::new(body))
}

struct Chunks(tokio::sync::mpsc::Receiver<Bytes>);
impl futures_core::Stream for Chunks {
    type Item = Result<http_body::Frame<Bytes>, std::io::Error>;
    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        self.0
            .poll_recv(cx)
            .map(|o| o.map(|b| Ok(http_body::Frame::data(b))))
    }
}

async fn start_upstream() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((s, _)) = listener.accept().await else {
                continue;
            };
            let _ = s.set_nodelay(true);
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(s), hyper::service::service_fn(answer))
                    .await;
            });
        }
    });
    addr
}

/// An Anthropic request of about `size` bytes. Without `tools`: user and assistant
/// text only, so the proxy reads the whole body, finds nothing to rewrite and forwards
/// it as it came (the cost every request pays). With `tools`: a session of tool calls
/// whose results are 1.2 KB file listings, every tenth a 40 KB build log; the proxy
/// compresses the logs and the conversation pass summarises the older results.
fn request(size: usize, tools: bool) -> Bytes {
    body(&messages(tools, |_, total| total < size))
}

/// The messages of [`request`]'s body, adding calls while `more(calls so far, bytes so
/// far)`.
fn messages(tools: bool, mut more: impl FnMut(usize, usize) -> bool) -> Vec<serde_json::Value> {
    let mut messages = vec![serde_json::json!({"role": "user", "content": "go"})];
    let mut i = 0;
    let mut total = 0;
    while more(i, total) {
        let text: String = if tools && i % 10 == 9 {
            (0..1000)
                .map(|l| format!("[{i}] compiling module_{l} ... ok (elapsed {}ms)\n", l % 97))
                .collect()
        } else {
            (0..40)
                .map(|l| format!("src/module_{i}/file_{l}.rs  {} bytes\n", l * 37))
                .collect()
        };
        total += text.len() + 200;
        let id = format!("toolu_{i}");
        if tools {
            messages.push(serde_json::json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": id, "name": "Bash", "input": {"command": format!("ls src/module_{i}")}}]}));
            messages.push(serde_json::json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "content": text}]}));
        } else {
            messages.push(serde_json::json!({"role": "assistant", "content": "Looking."}));
            messages.push(serde_json::json!({"role": "user", "content": text}));
        }
        i += 1;
    }
    messages
}

/// An Anthropic request body with these messages.
fn body(messages: &[serde_json::Value]) -> Bytes {
    let req = serde_json::json!({
        "model": "m", "max_tokens": 100,
        "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
        "messages": messages,
    });
    Bytes::from(serde_json::to_vec(&req).unwrap())
}

/// The bodies of a session growing by one tool call per request: `count` bodies, the
/// first with `calls` calls. Assembled from each message's JSON, written once.
fn growing_bodies(calls: usize, count: usize) -> impl Iterator<Item = Bytes> {
    let all = messages(true, |i, _| i < calls + count);
    let pieces: Vec<String> = all.iter().map(|m| m.to_string()).collect();
    (0..count).map(move |k| {
        // The first message, then an (assistant, user) pair per call.
        let n = 1 + 2 * (calls + k);
        let mut b = String::from("{\"model\":\"m\",\"max_tokens\":100,\"system\":[{\"type\":\"text\",\"text\":\"sys\",\"cache_control\":{\"type\":\"ephemeral\"}}],\"messages\":[");
        b.push_str(&pieces[..n].join(","));
        b.push_str("]}");
        Bytes::from(b)
    })
}

async fn once(client: &Client, addr: SocketAddr, body: &Bytes, sse: usize) -> (Duration, Duration) {
    let req = Request::post(format!("http://{addr}/v1/messages"))
        .header("content-type", "application/json")
        .header("x-api-key", "k")
        .header("x-sse", sse.to_string())
        .body(Full::new(body.clone()))
        .unwrap();
    let t0 = Instant::now();
    let resp = client.request(req).await.unwrap();
    let mut body = resp.into_body();
    let mut first = None;
    while let Some(f) = body.frame().await {
        f.unwrap();
        first.get_or_insert_with(|| t0.elapsed());
    }
    (t0.elapsed(), first.unwrap_or_default())
}

/// CPU time (user + system, ms) the process `pid` has used so far, from
/// `/proc/PID/stat` (clock ticks of 10 ms): what the proxy itself spent, whatever else
/// the machine runs.
fn cpu_ms(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which is in parentheses): state is the 3rd.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) * 10.0
}

fn pct(v: &mut [Duration], p: f64) -> f64 {
    v.sort();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i].as_secs_f64() * 1000.0
}

async fn measure() {
    let upstream = start_upstream().await;
    let store = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .arg("--serve")
        .arg(format!("http://{upstream}"))
        .arg(store.path().join("store"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let proxy: SocketAddr = format!("127.0.0.1:{}", line.trim()).parse().unwrap();
    let client: Client =
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .build_http();

    println!("case                      direct ms median / p99   proxy ms median / p99   added median   proxy 1st request   proxy CPU ms/request");
    for (name, size, tools, n) in [
        ("50 KB, nothing rewritten", 50_000, false, 300),
        ("1 MB, nothing rewritten", 1_000_000, false, 60),
        ("50 KB session, rewritten", 50_000, true, 300),
        ("1 MB session, rewritten", 1_000_000, true, 60),
    ] {
        let body = request(size, tools);
        let mut first = Duration::ZERO;
        let (mut d, mut p) = (Vec::new(), Vec::new());
        let mut cpu0 = 0.0;
        for k in 0..n + 5 {
            if k == 5 {
                cpu0 = cpu_ms(child.id());
            }
            let a = once(&client, upstream, &body, 0).await.0;
            let b = once(&client, proxy, &body, 0).await.0;
            if k == 0 {
                first = b;
            }
            if k >= 5 {
                d.push(a);
                p.push(b);
            }
        }
        let cpu = (cpu_ms(child.id()) - cpu0) / n as f64;
        let (dm, d99, pm, p99) = (
            pct(&mut d, 0.5),
            pct(&mut d, 0.99),
            pct(&mut p, 0.5),
            pct(&mut p, 0.99),
        );
        println!(
            "{name:<25} {dm:>8.3} / {d99:<8.3}      {pm:>8.3} / {p99:<8.3}     {:>8.3}     {:>8.3}          {cpu:>8.3}   ({} bytes, {n} requests)",
            pm - dm,
            first.as_secs_f64() * 1000.0,
            body.len()
        );
    }

    let small = Bytes::from_static(b"{\"model\":\"m\",\"messages\":[]}");
    let (mut d, mut p) = (Vec::new(), Vec::new());
    for _ in 0..100 {
        d.push(once(&client, upstream, &small, 1).await.1);
        p.push(once(&client, proxy, &small, 1).await.1);
    }
    let (dm, pm) = (pct(&mut d, 0.5), pct(&mut p, 0.5));
    println!(
        "time to first streamed byte: direct {dm:.3} ms, proxy {pm:.3} ms (median of 100), added {:.3} ms (p99 {:.3} vs {:.3})",
        pm - dm,
        pct(&mut d, 0.99),
        pct(&mut p, 0.99)
    );

    // 16 streams side by side, each request a 1 MB session, each
    // response 300 chunks of 1 KiB 10 ms apart.
    let body = request(1_000_000, true);
    let t0 = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..16 {
        let (client, body) = (client.clone(), body.clone());
        tasks.push(tokio::spawn(async move {
            once(&client, proxy, &body, 300).await
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
    let hwm = status
        .lines()
        .find(|l| l.starts_with("VmHWM"))
        .unwrap_or("VmHWM: ?")
        .split_whitespace()
        .nth(1)
        .unwrap_or("?")
        .to_string();
    println!(
        "16 concurrent streams (1 MB requests, 300 x 1 KiB SSE chunks each): {:.2} s, proxy peak RSS {hwm} KiB",
        t0.elapsed().as_secs_f64()
    );
    let _ = child.kill();
    let _ = child.wait();
}
