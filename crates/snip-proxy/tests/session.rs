//! The proxy's rewrite over whole sessions, through the library (`Rewriter`) with a
//! real store in a temporary directory:
//! - a rewritten body is the client's bytes with only the rewritten results replaced
//!   (escapes, number spellings, key order, whitespace elsewhere are the client's);
//! - on a scripted 100-call session, every request is a byte-for-byte extension of the
//!   previous one except at a release, the same bytes as a fresh rewriter sends (what
//!   a rewriter remembers between requests changes nothing), and the estimated cost at
//!   Anthropic's cache prices is below sending the client's requests directly at every
//!   session length.
//!
//! `cargo test -p snip-proxy --test session -- --nocapture` prints the cost sweep that
//! docs/proxy.md quotes.

use serde_json::Value;
use snip_context::ContextSettings;
use snip_proxy::{Api, Rewriter};
use snip_store::{StoreHandle, StoreOptions};

fn rewriter(dir: &std::path::Path, context_enabled: bool) -> Rewriter {
    let d = dir.join("store").to_string_lossy().into_owned();
    let opts = StoreOptions::from_lookup(|k| (k == "SNIP_STORE_DIR").then(|| d.clone())).unwrap();
    let store = StoreHandle::open(&opts);
    assert!(store.store().is_some(), "the test store opens");
    // The newest 2 results kept whole: at the default prices a release must pay for
    // itself on the call that makes it, which a 100-call session reaches with a
    // small protected window (with the default 6 it would wait longer).
    let context = ContextSettings {
        enabled: context_enabled,
        keep_last: 2,
        ..ContextSettings::default()
    };
    // With the pass on, results reach it whole (per-result compression off): at the
    // default prices a release must pay for itself on the call that makes it, and a
    // summary is a small enough share only of a large result.
    let config = snip_core::Config {
        enabled: !context_enabled,
        ..snip_core::Config::default()
    };
    Rewriter::new(config, context, store)
}

/// A build log of `lines` lines with one error line: the per-result rules shrink it.
fn build_log_n(tag: &str, lines: usize) -> String {
    let mut s = String::new();
    for i in 0..lines {
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

/// A 1 500-line build log.
fn build_log(tag: &str) -> String {
    build_log_n(tag, 1500)
}

/// Every byte of `got` outside the tool results' content values equals `sent`: the
/// two bodies split at the same result values have equal pieces between them.
fn outside_results_equal(sent: &str, got: &str) {
    let spans = |t: &str| -> Vec<(usize, usize)> {
        // The results' content values are the only strings in these bodies that
        // follow `"content" :  ` inside a tool_result; find them by the key as written.
        let mut out = Vec::new();
        let mut from = 0;
        while let Some(i) = t[from..].find("\"content\" :  ") {
            let start = from + i + "\"content\" :  ".len();
            let mut de = serde_json::Deserializer::from_str(&t[start..]).into_iter::<Value>();
            de.next().unwrap().unwrap();
            let end = start + de.byte_offset();
            out.push((start, end));
            from = end;
        }
        out
    };
    let (a, b) = (spans(sent), spans(got));
    assert_eq!(a.len(), b.len());
    assert!(!a.is_empty());
    let (mut pa, mut pb) = (0, 0);
    for ((sa, ea), (sb, eb)) in a.iter().zip(&b) {
        assert_eq!(&sent[pa..*sa], &got[pb..*sb], "bytes between results");
        pa = *ea;
        pb = *eb;
    }
    assert_eq!(&sent[pa..], &got[pb..], "bytes after the last result");
}

#[test]
fn a_rewritten_body_keeps_every_client_byte_outside_the_rewritten_results() {
    let dir = tempfile::tempdir().unwrap();
    let rw = rewriter(dir.path(), false);
    let log = serde_json::to_string(&build_log("é")).unwrap();
    // Hand-written JSON: escapes serde_json would write differently (`\u00e9`, `\/`),
    // numbers in spellings it would normalise (`1.0e3`, `-0.0`, `2.50`), keys out of
    // alphabetical order, irregular whitespace and a trailing newline.
    let body = format!(
        "{{\n  \"zeta\": 1.0e3, \"model\" : \"claude-caf\\u00e9\",\n\t\"max_tokens\":1024,\n  \"temperature\": 2.50,\n  \"system\": [ {{\"type\":\"text\",\"text\":\"r\\u00e9sum\\u00e9 \\/ ok\",\"cache_control\":{{\"type\":\"ephemeral\"}}}} ],\n  \"messages\": [\n    {{\"role\":\"user\",\"content\":\"na\\u00efve \\ud83d\\ude00\"}},\n    {{\"role\":\"assistant\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Bash\",\"input\":{{\"n\":-0.0,\"x\":1E2}}}}]}},\n    {{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"t1\",\"content\" :  {log}}}]}},\n    {{\"role\":\"assistant\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"t2\",\"name\":\"Bash\",\"input\":{{}}}}]}},\n    {{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"t2\",\"content\" :  \"short \\u00e9 \\/ result\"}}]}}\n  ],\n  \"stream\" : true\n}}\n"
    );
    let parsed: Value = serde_json::from_str(&body).unwrap();
    assert_ne!(
        serde_json::to_string(&parsed).unwrap(),
        body,
        "the body is spelled differently from serde_json's output"
    );
    let out = rw.rewrite(Api::AnthropicMessages, body.as_bytes()).unwrap();
    assert_eq!(out.results_compressed, 1);
    let got = std::str::from_utf8(&out.body).unwrap();
    assert!(got.len() < body.len() / 2);
    outside_results_equal(&body, got);
    // The short result is kept in the client's spelling, escapes and all.
    assert!(got.contains("\"content\" :  \"short \\u00e9 \\/ result\""));
    let v: Value = serde_json::from_str(got).unwrap();
    let r = v["messages"][2]["content"][0]["content"].as_str().unwrap();
    assert!(r.contains("sn_") && r.contains("error[E0308]"));

    // The same for Chat Completions and Responses bodies.
    let chat = format!(
        "{{\"model\":\"m\\u00e9\", \"n\": 1.0e3, \"messages\":[{{\"role\":\"assistant\",\"tool_calls\":[{{\"id\":\"c1\",\"type\":\"function\",\"function\":{{\"name\":\"sh\",\"arguments\":\"{{}}\"}}}}]}},\n {{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\" :  {log}}}]}}"
    );
    let out = rw.rewrite(Api::OpenAiChat, chat.as_bytes()).unwrap();
    outside_results_equal(&chat, std::str::from_utf8(&out.body).unwrap());
    let responses = format!(
        "{{\"model\":\"m\\u00e9\", \"input\":[{{\"type\":\"function_call\",\"call_id\":\"c1\",\"name\":\"exec_command\",\"arguments\":\"{{}}\"}},\n {{\"type\":\"function_call_output\",\"call_id\":\"c1\",\"output\":{log}}}], \"top_p\": 1.0e0}}"
    );
    let out = rw
        .rewrite(Api::OpenAiResponses, responses.as_bytes())
        .unwrap();
    let got = std::str::from_utf8(&out.body).unwrap();
    let at = responses.find("\"output\":").unwrap() + "\"output\":".len();
    assert_eq!(&got[..at], &responses[..at]);
    let tail = &responses[at + log.len()..];
    assert!(
        got.ends_with(tail),
        "bytes after the output are the client's"
    );
}

/// One scripted session as a host sends it: request `n` carries the system prompt,
/// the tools and the first `n` tool calls with their results. Results rotate through a
/// 40-line file listing, a 150-line file read, a grep output and (every fifth call) an
/// 800-line build log. The body is written by hand, in the host's key order.
struct Session {
    head: String,
    messages: Vec<String>,
}

const TAIL: &str = "],\"stream\":true}";

impl Session {
    fn new() -> Self {
        let system = "You are a coding agent. ".repeat(200);
        let tools = (0..12)
            .map(|i| format!("{{\"name\":\"tool_{i}\",\"description\":\"{}\",\"input_schema\":{{\"type\":\"object\"}}}}", "Runs a thing. ".repeat(20)))
            .collect::<Vec<_>>()
            .join(",");
        Session {
            head: format!(
                "{{\"model\":\"claude-test\",\"max_tokens\":8192,\"system\":[{{\"type\":\"text\",\"text\":{},\"cache_control\":{{\"type\":\"ephemeral\"}}}}],\"tools\":[{tools}],\"messages\":[",
                serde_json::to_string(&system).unwrap()
            ),
            messages: vec!["{\"role\":\"user\",\"content\":\"Fix the failing build.\"}".into()],
        }
    }

    fn result(k: usize) -> String {
        match k % 5 {
            4 => build_log_n(&format!("step{k}"), 800),
            0 => (0..40)
                .map(|i| format!("src/module_{k}_{i}.rs\n"))
                .collect(),
            1 => (0..150)
                .map(|i| format!("{i:>4}  fn item_{k}_{i}(x: u32) -> u32 {{ x * {i} }}\n"))
                .collect(),
            2 => (0..30)
                .map(|i| format!("src/lib_{i}.rs:{}: let v{k} = compute({i});\n", i * 7))
                .collect(),
            _ => format!("ok: step {k} done\n"),
        }
    }

    fn push_call(&mut self, k: usize) {
        self.messages.push(format!(
            "{{\"role\":\"assistant\",\"content\":[{{\"type\":\"thinking\",\"thinking\":\"step {k}\",\"signature\":\"c2ln{k}\"}},{{\"type\":\"tool_use\",\"id\":\"toolu_{k}\",\"name\":\"Bash\",\"input\":{{\"command\":\"step {k}\"}}}}]}}"
        ));
        self.messages.push(format!(
            "{{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_{k}\",\"content\":{}}}]}}",
            serde_json::to_string(&Self::result(k)).unwrap()
        ));
    }

    fn body(&self) -> String {
        format!("{}{}{TAIL}", self.head, self.messages.join(","))
    }
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Input cost of a sequence of requests at Anthropic's cache prices, in units of the
/// base input price per byte: the longest common prefix with the previous request is
/// read from the cache (0.1×), the rest is written to it (1.25×).
fn cost(bodies: &[Vec<u8>]) -> Vec<f64> {
    let mut total = 0.0;
    let mut prev: &[u8] = &[];
    let mut out = Vec::new();
    for b in bodies {
        let cached = common_prefix(prev, b) as f64;
        total += 0.1 * cached + 1.25 * (b.len() as f64 - cached);
        out.push(total);
        prev = b;
    }
    out
}

#[test]
fn a_100_call_session_extends_its_prefix_between_releases_and_costs_less_than_direct() {
    const CALLS: usize = 100;
    let dir = tempfile::tempdir().unwrap();
    let rw = rewriter(dir.path(), true);
    let mut session = Session::new();
    let (mut direct, mut proxied) = (Vec::new(), Vec::new());
    let mut released = Vec::new();
    for k in 0..CALLS {
        session.push_call(k);
        let body = session.body().into_bytes();
        let t = std::time::Instant::now();
        let out = rw.rewrite(Api::AnthropicMessages, &body);
        if k % 20 == 19 {
            eprintln!(
                "request {k}: {} bytes, rewrite {:?}",
                body.len(),
                t.elapsed()
            );
        }
        released.push(out.as_ref().map_or(0, |o| o.summarised));
        proxied.push(out.map_or_else(|| body.clone(), |o| o.body));
        // What the rewriter remembers from earlier requests (its memos and the pass's
        // cache) never changes a byte: a fresh rewriter on the same store sends the
        // same request.
        if k % 10 == 9 {
            let cold = rewriter(dir.path(), true).rewrite(Api::AnthropicMessages, &body);
            assert!(
                cold.map_or_else(|| body.clone(), |o| o.body) == proxied[k],
                "request {k}: a fresh rewriter sends other bytes"
            );
        }
        direct.push(body);
    }
    // Every request valid JSON with its tool calls paired, thinking blocks intact, and
    // one cache_control block.
    for b in &proxied {
        let v: Value = serde_json::from_slice(b).unwrap();
        let msgs = v["messages"].as_array().unwrap();
        for (i, m) in msgs.iter().enumerate().skip(1).step_by(2) {
            let id = m["content"][1]["id"].as_str().unwrap();
            assert_eq!(msgs[i + 1]["content"][0]["tool_use_id"], id);
            assert_eq!(
                m["content"][0]["signature"],
                format!("c2ln{}", (i - 1) / 2).as_str()
            );
        }
        assert_eq!(
            String::from_utf8_lossy(b).matches("cache_control").count(),
            1
        );
    }
    // Releases happen, and between them each request extends the previous one: the
    // previous request up to the end of its last message is a prefix of the next.
    let releases: Vec<usize> = (1..CALLS)
        .filter(|&n| released[n] > released[n - 1])
        .collect();
    assert!(
        !releases.is_empty(),
        "older results are summarised: {released:?}"
    );
    assert!(released.windows(2).all(|w| w[1] >= w[0]), "never falls");
    for n in 1..CALLS {
        let prev = &proxied[n - 1][..proxied[n - 1].len() - TAIL.len()];
        let extends = proxied[n].starts_with(prev);
        if releases.contains(&n) {
            continue;
        }
        assert!(extends, "request {n} extends request {}", n - 1);
    }
    // Cost sweep: cumulative cost of the first N requests, proxy vs direct.
    let (cd, cp) = (cost(&direct), cost(&proxied));
    eprintln!(
        "releases at requests (0-based): {releases:?}; summarised at the end: {}",
        released[CALLS - 1]
    );
    eprintln!("| calls | direct (MB-equivalent) | through the proxy | proxy / direct |");
    for n in (10..=CALLS).step_by(10) {
        let (d, p) = (cd[n - 1], cp[n - 1]);
        eprintln!("| {n} | {:.2} | {:.2} | {:.3} |", d / 1e6, p / 1e6, p / d);
    }
    for n in 0..CALLS {
        assert!(
            cp[n] <= cd[n],
            "after {} calls: proxy {} > direct {}",
            n + 1,
            cp[n],
            cd[n]
        );
    }
    for n in (10..=CALLS).step_by(10) {
        assert!(
            cp[n - 1] < cd[n - 1],
            "after {n} calls: proxy not below direct"
        );
    }
}

/// A Responses session as Codex CLI sends one: request `n` is the instructions, a user
/// message and `n` pairs of `function_call` / `function_call_output` items (with a
/// reasoning item before each call). The pass reads the `input` items: older outputs
/// are summarised, every call stays paired with its output, only `output` values
/// change, and between releases each request extends the previous one.
#[test]
fn a_responses_session_gets_the_conversation_pass_on_its_input_items() {
    const CALLS: usize = 60;
    let dir = tempfile::tempdir().unwrap();
    let rw = rewriter(dir.path(), true);
    let head = format!(
        "{{\"model\":\"gpt-test\",\"instructions\":{},\"input\":[{{\"type\":\"message\",\"role\":\"user\",\"content\":[{{\"type\":\"input_text\",\"text\":\"Fix the build.\"}}]}}",
        serde_json::to_string(&"You are a coding agent. ".repeat(100)).unwrap()
    );
    const RTAIL: &str = "],\"stream\":true,\"store\":false}";
    let mut items = String::new();
    let (mut proxied, mut released) = (Vec::new(), Vec::new());
    for k in 0..CALLS {
        items.push_str(&format!(
            ",{{\"type\":\"reasoning\",\"id\":\"rs_{k}\",\"summary\":[],\"encrypted_content\":\"ZW5j{k}\"}},{{\"type\":\"function_call\",\"id\":\"fc_{k}\",\"call_id\":\"call_{k}\",\"name\":\"shell\",\"arguments\":\"{{\\\"command\\\":[\\\"make\\\",\\\"step{k}\\\"]}}\"}},{{\"type\":\"function_call_output\",\"call_id\":\"call_{k}\",\"output\":{}}}",
            serde_json::to_string(&build_log_n(&format!("step{k}"), 800)).unwrap()
        ));
        let body = format!("{head}{items}{RTAIL}").into_bytes();
        let out = rw.rewrite(Api::OpenAiResponses, &body);
        released.push(out.as_ref().map_or(0, |o| o.summarised));
        let got = out.map_or_else(|| body.clone(), |o| o.body);
        // Every item but the outputs is the client's: same count, same order, and each
        // non-output item byte-for-byte equal after a JSON round trip.
        let (sent, new): (Value, Value) = (
            serde_json::from_slice(&body).unwrap(),
            serde_json::from_slice(&got).unwrap(),
        );
        let (a, b) = (
            sent["input"].as_array().unwrap(),
            new["input"].as_array().unwrap(),
        );
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            if x["type"] == "function_call_output" {
                assert_eq!(x["call_id"], y["call_id"], "outputs stay paired");
                assert!(y["output"].is_string());
            } else {
                assert_eq!(x, y, "only function_call_output items change");
            }
        }
        assert_eq!(sent["instructions"], new["instructions"]);
        proxied.push(got);
    }
    assert!(released.windows(2).all(|w| w[1] >= w[0]), "never falls");
    let releases: Vec<usize> = (1..CALLS)
        .filter(|&n| released[n] > released[n - 1])
        .collect();
    assert!(
        !releases.is_empty(),
        "older outputs are summarised: {released:?}"
    );
    let last: Value = serde_json::from_slice(&proxied[CALLS - 1]).unwrap();
    let summaries = last["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["output"].as_str().is_some_and(|o| o.contains("sn_")))
        .count();
    assert!(summaries > 0, "a summary quotes a restore id");
    for n in 1..CALLS {
        if releases.contains(&n) {
            continue;
        }
        let prev = &proxied[n - 1][..proxied[n - 1].len() - RTAIL.len()];
        assert!(
            proxied[n].starts_with(prev),
            "request {n} extends request {}",
            n - 1
        );
    }
}
