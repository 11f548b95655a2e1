//! `snip bench context`: what the conversation pass saves over long sessions, priced
//! at the providers' real cache prices.
//!
//! Two session families are built from the real captures bundled with the binary
//! (`fixtures/corpus/`, through `snip-bench`), each from a seeded SplitMix64 so every
//! run builds the same bytes:
//! - `bench`: the earlier fixed session shape (terminal captures as Hermes-style JSON
//!   envelopes cut at 30,000 bytes, `read_file` windows, short chat turns);
//! - `realistic`: the tools agents use — `terminal` (captures, Hermes's 50,000-char
//!   cap and notice), `read_file` with offsets over real files (with re-reads),
//!   `search_files`, `patch` (a unified diff of real lines), a few `snip_restore`
//!   calls — and assistant text of hundreds to thousands of chars per turn.
//!
//! Every policy rewrites every call's request. Tokens are counted with o200k_base on
//! each message's text (content, tool names and arguments) plus 4 per message, not
//! on the request's JSON. The cached part of a call is the run of leading messages
//! equal to the previous call's (what a provider's prefix cache can reuse), priced by
//! [`Provider`]. Calls are assumed to come less than 5 minutes apart (no expiry).

use anyhow::Result;
use serde::Serialize;
use serde_json::{json, Value};
use sha2::{Digest as _, Sha256};
use snip_context::{compress_request, ContextSettings, FormatChoice};
use std::collections::HashMap;
use std::process::ExitCode;

/// Arguments of `snip bench context`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Seeds per family (1, 2, …).
    #[arg(long, default_value_t = 5)]
    pub seeds: u64,
    /// Session lengths in API calls, comma-separated (each session is the first calls
    /// of the longest one).
    #[arg(long, value_delimiter = ',', default_values_t = [30, 60, 100, 150, 200, 300])]
    pub lengths: Vec<usize>,
    /// Also measure the pass (on per-result-compressed results) at keep_last 3, 4, 8
    /// and 12, and with 10 or 100 expected calls instead of the learned number: the
    /// sweep the defaults were chosen from.
    #[arg(long)]
    pub sweep: bool,
    /// Print Markdown tables.
    #[arg(long, conflicts_with = "json")]
    pub markdown: bool,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

impl Default for Args {
    fn default() -> Self {
        Args {
            seeds: 5,
            lengths: vec![30, 60, 100, 150, 200, 300],
            sweep: false,
            markdown: false,
            json: false,
        }
    }
}

/// A provider's price table, in dollars per million tokens.
#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct Provider {
    name: &'static str,
    /// Uncached input.
    input: f64,
    /// Input written to the cache (Anthropic bills it above plain input; OpenAI has no
    /// write price: uncached input is plain input).
    write: f64,
    /// Input read from the cache.
    read: f64,
    /// The shortest prefix the provider caches, in tokens.
    min_cached: u64,
    /// Cached prefixes are counted in steps of this many tokens (OpenAI: 128).
    step: u64,
}

/// The price tables the bench reports.
pub(crate) const PROVIDERS: [Provider; 3] = [
    // Claude Sonnet 4.x: $3 input, 5-minute cache write 1.25×, cache read 0.1×;
    // 1,024-token minimum. The host marks the end of each request as a breakpoint,
    // so everything not read from the cache is written to it.
    Provider {
        name: "anthropic (sonnet: $3 in, $3.75 write, $0.30 read)",
        input: 3.0,
        write: 3.75,
        read: 0.30,
        min_cached: 1024,
        step: 1,
    },
    // The same with 1-hour cache entries: writes at 2×.
    Provider {
        name: "anthropic-1h (sonnet, 1-hour entries: $3 in, $6 write, $0.30 read)",
        input: 3.0,
        write: 6.0,
        read: 0.30,
        min_cached: 1024,
        step: 1,
    },
    // GPT-4.1: $2 input, cached input $0.50, no write premium; automatic caching
    // from 1,024 tokens in 128-token steps.
    Provider {
        name: "openai (gpt-4.1: $2 in, no write premium, $0.50 cached)",
        input: 2.0,
        write: 2.0,
        read: 0.50,
        min_cached: 1024,
        step: 128,
    },
];

/// Runs the benchmark and prints its tables.
pub fn run(args: Args) -> Result<ExitCode> {
    anyhow::ensure!(args.seeds >= 1, "--seeds must be at least 1");
    anyhow::ensure!(
        !args.lengths.is_empty() && args.lengths.iter().all(|l| *l >= 2),
        "--lengths must be numbers of at least 2"
    );
    let report = sweep(&args).map_err(|e| anyhow::anyhow!(e))?;
    let text = if args.json {
        serde_json::to_string_pretty(&report)?
    } else {
        report.render(args.markdown)
    };
    crate::cli::print(text + "\n")?;
    Ok(ExitCode::SUCCESS)
}

// ---------------------------------------------------------------------------------
// The sessions

/// [`snip_core::util::SplitMix64`]: the same numbers on every machine.
struct Rng(snip_core::util::SplitMix64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i + 1));
        }
    }
}

/// A capture the session can use: its command, exit status and text.
struct Source {
    file: &'static str,
    command: String,
    exit_code: i64,
    text: String,
}

/// The captures joined with their manifest's `command` and `exit_code` columns.
fn sources() -> Result<Vec<Source>, String> {
    Ok(snip_bench::captures::all()?
        .into_iter()
        .map(|c| Source {
            file: c.file.file,
            command: c.manifest.command,
            exit_code: i64::from(c.manifest.exit_code),
            // Hosts decode tool output as UTF-8 before sending it.
            text: String::from_utf8_lossy(c.file.bytes).into_owned(),
        })
        .collect())
}

/// Files whose lines `read_file` windows come from: the text of a real file
/// (`HISTORY.md`) and real source code (the `requests` diff).
const READ_FILES: &[(&str, &str)] = &[
    ("cat-unix2dos-crlf-notty.txt", "HISTORY.md"),
    ("git-diff-requests-notty.txt", "requests/adapters.py"),
];

const SYSTEM_PROMPT: &str = "You are a coding agent working in the user's repository. \
Use the terminal tool to run commands and the read_file tool to read files. Keep changes \
small, run the tests after every change, and explain what you did in one short paragraph. \
Never guess at output you have not seen: run the command. When a command fails, read the \
error before trying again.";

const ASSISTANT_LINES: &[&str] = &[
    "Let me look at that.",
    "I'll run it and see what happens.",
    "Checking the output before changing anything.",
    "That points at the dependency step; reading more.",
    "Running the next step.",
    "The previous run gives a hint; verifying it.",
];

const ASSISTANT_REPLIES: &[&str] = &[
    "The step finished. The failure is in the checksum of record 213; next I will look at the fixture that produces it.",
    "Done: the dependency is installed and the build passes. The warning about the unused variable is still there.",
    "I found the cause: the test data was generated with the old format. I will regenerate it and rerun the suite.",
    "The download works now; the 404 came from the release URL, which has a different version.",
    "Summary so far: two fixes applied, one test still failing, no new warnings.",
];

const USER_LINES: &[&str] = &[
    "Go on.",
    "Can you check the tests again?",
    "What about the warning?",
    "OK, now look at the logs.",
    "Please also check the dependencies.",
    "Try the download again.",
    "Looks good. Next step?",
];

/// The session: every message ever sent, and how many of them each call sends.
pub(crate) struct Session {
    head: Value,
    messages: Vec<Value>,
    /// For call `i`, the number of leading `messages` it sends.
    lens: Vec<usize>,
    /// Tool results by tool: `(terminal, read_file)`.
    tools: (usize, usize),
}

impl Session {
    /// Builds `calls` calls, `tool_calls` of them answered by a tool call.
    pub(crate) fn build(
        calls: usize,
        tool_calls: usize,
        seed: u64,
        host_cap: usize,
    ) -> Result<Session, String> {
        let sources = sources()?;
        let mut rng = Rng(snip_core::util::SplitMix64(seed));
        // Which responses are tool calls: `tool_calls` of the first `calls - 1`.
        let mut plan: Vec<bool> = (0..calls - 1).map(|i| i < tool_calls).collect();
        rng.shuffle(&mut plan);
        // Terminal results walk the captures in a shuffled order, each once per round.
        let mut order: Vec<usize> = (0..sources.len()).collect();
        rng.shuffle(&mut order);
        let mut next_capture = 0;
        let head = json!({
            "model": "gpt-4o",
            "tools": [
                {"type": "function", "function": {"name": "terminal",
                    "description": "Run a shell command; returns its output and exit code.",
                    "parameters": {"type": "object", "properties": {
                        "command": {"type": "string"}}, "required": ["command"]}}},
                {"type": "function", "function": {"name": "read_file",
                    "description": "Read lines of a file.",
                    "parameters": {"type": "object", "properties": {
                        "path": {"type": "string"}, "offset": {"type": "integer"},
                        "limit": {"type": "integer"}}, "required": ["path"]}}}
            ]
        });
        let mut messages = vec![
            json!({"role": "system", "content": SYSTEM_PROMPT}),
            json!({"role": "user", "content": "The build of the ledger crate fails on CI and the downloads step is flaky. Please find out why and fix what you can."}),
        ];
        let mut lens = Vec::with_capacity(calls);
        let mut tools = (0, 0);
        for (i, &is_tool) in plan.iter().enumerate() {
            lens.push(messages.len());
            if !is_tool {
                let reply = ASSISTANT_REPLIES[rng.below(ASSISTANT_REPLIES.len())];
                messages.push(json!({"role": "assistant", "content": reply}));
                let user = USER_LINES[rng.below(USER_LINES.len())];
                messages.push(json!({"role": "user", "content": user}));
                continue;
            }
            let id = format!("call_{i:03}_{:08x}", rng.next() as u32);
            let say = ASSISTANT_LINES[rng.below(ASSISTANT_LINES.len())];
            // Two in five tool calls read a file; the others run a captured command.
            let (name, args, result) = if rng.below(5) < 2 {
                tools.1 += 1;
                let (file, path) = READ_FILES[rng.below(READ_FILES.len())];
                let src = sources.iter().find(|s| s.file == file).ok_or("missing")?;
                let lines: Vec<&str> = src.text.lines().collect();
                let limit = 60 + rng.below(180);
                let offset = rng.below(lines.len().saturating_sub(limit).max(1));
                let body: String = lines[offset..(offset + limit).min(lines.len())]
                    .iter()
                    .enumerate()
                    .map(|(n, l)| format!("{:>6}\t{}\n", offset + n + 1, l.trim_end_matches('\r')))
                    .collect();
                let args = json!({"path": path, "offset": offset + 1, "limit": limit});
                ("read_file", args, body)
            } else {
                tools.0 += 1;
                if next_capture == order.len() {
                    rng.shuffle(&mut order);
                    next_capture = 0;
                }
                let src = &sources[order[next_capture]];
                next_capture += 1;
                let output = host_capped(&src.text, host_cap);
                let envelope = json!({"output": output, "exit_code": src.exit_code, "error": null});
                (
                    "terminal",
                    json!({"command": src.command}),
                    envelope.to_string(),
                )
            };
            messages.push(json!({"role": "assistant", "content": say, "tool_calls": [
                {"id": id, "type": "function",
                 "function": {"name": name, "arguments": args.to_string()}}
            ]}));
            messages.push(json!({"role": "tool", "tool_call_id": id, "content": result}));
        }
        lens.push(messages.len());
        Ok(Session {
            head,
            messages,
            lens,
            tools,
        })
    }

    /// The request of call `i` (0-based), uncompressed.
    fn request(&self, i: usize) -> Value {
        let mut r = self.head.clone();
        r["messages"] = Value::Array(self.messages[..self.lens[i]].to_vec());
        r
    }
}

/// Keeps nothing, answers with [`bench_id`] (the figures must not depend on a store).
struct BenchRetain;

impl snip_core::Retain for BenchRetain {
    fn retain(&mut self, original: &[u8]) -> snip_core::Retention {
        match bench_id(original) {
            Some(id) => snip_core::Retention::Retained { id },
            None => snip_core::Retention::Failed {
                reason: "no id".into(),
            },
        }
    }
}

impl Session {
    /// The same session with every tool result compressed by the core with the default
    /// configuration when it arrived: a terminal envelope's `output` field, a file
    /// window's text (JSON stays JSON: only the field's text changes).
    fn with_results_compressed(&self) -> Session {
        let config = snip_core::Config::default();
        let squeeze = |text: &str| -> String {
            let o = snip_core::compress(text.as_bytes(), &config, &mut BenchRetain);
            String::from_utf8_lossy(&o.output).into_owned()
        };
        let messages = self
            .messages
            .iter()
            .map(|m| {
                if m["role"] != "tool" {
                    return m.clone();
                }
                let content = m["content"].as_str().unwrap_or_default();
                let new = match serde_json::from_str::<Value>(content) {
                    Ok(mut envelope) if envelope["output"].is_string() => {
                        let out = squeeze(envelope["output"].as_str().unwrap_or_default());
                        envelope["output"] = Value::String(out);
                        envelope.to_string()
                    }
                    _ => squeeze(content),
                };
                let mut m = m.clone();
                m["content"] = Value::String(new);
                m
            })
            .collect();
        Session {
            head: self.head.clone(),
            messages,
            lens: self.lens.clone(),
            tools: self.tools,
        }
    }
}

/// A host's cap on one result: the first 40% and last 60% of `cap` bytes, cut at line
/// boundaries, with one line saying how much was cut.
fn host_capped(text: &str, cap: usize) -> String {
    if text.len() <= cap {
        return text.to_string();
    }
    let head_end = text[..floor_char(text, cap * 2 / 5)]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    let tail_from = floor_char(text, text.len() - cap * 3 / 5);
    let tail_start = text[tail_from..]
        .find('\n')
        .map_or(text.len(), |i| tail_from + i + 1);
    format!(
        "{}... [{} characters truncated] ...\n{}",
        &text[..head_end],
        text[head_end..tail_start].chars().count(),
        &text[tail_start..]
    )
}

fn floor_char(s: &str, i: usize) -> usize {
    snip_core::text::floor_char_boundary(s.as_bytes(), i)
}

/// Sentences assistant turns are made of (a turn is 1 to 12 of them).
const PROSE: &[&str] = &[
    "The failure comes from the fixture loader, which still expects the old header layout.",
    "I read the module around the call site to see how the value is built before it reaches the writer.",
    "Before changing anything I want the exact error, so I will run the failing test on its own.",
    "The search shows three other callers; two of them pass the path through unchanged, one normalises it first.",
    "That matches the traceback: the second frame is in the retry helper, and the timeout is never reset between attempts.",
    "I will patch the smallest place that fixes it and leave the public signature as it is.",
    "The patch applied cleanly; now the whole suite, since the helper is shared by the download path.",
    "The warning about the unused import is unrelated; I will leave it for a separate change.",
    "Reading the rest of the file to check nothing else depends on the old ordering of the fields.",
    "The tests pass locally now, except the network one, which needs the mirror and is skipped here.",
    "Summary so far: the loader fix is in, the checksum mismatch is explained, and one flaky test remains.",
    "I am going to look at how the configuration is parsed, because the default differs between the CLI and the library.",
    "This is the line that sets the budget; it reads the variable once at start-up, so a change needs a restart.",
    "The log shows the same request retried four times with the same payload, which points at the idempotency key.",
];

const USER_TURNS: &[&str] = &[
    "Go on.",
    "Can you check the tests again?",
    "What about the warning in the build output?",
    "Please look at the retry logic as well, it has been flaky on CI for a week.",
    "Looks good. Next step?",
    "Keep going, and tell me when the suite is green.",
];

/// The tools of the realistic family, as Hermes declares them (names and arguments).
fn realistic_head() -> Value {
    let f = |name: &str, desc: &str, props: Value| {
        json!({"type": "function", "function": {"name": name, "description": desc,
            "parameters": {"type": "object", "properties": props}}})
    };
    json!({"model": "agent-model", "tools": [
        f("terminal", "Run a shell command.", json!({"command": {"type": "string"}})),
        f("read_file", "Read a file with line numbers.", json!({"path": {"type": "string"},
            "offset": {"type": "integer"}, "limit": {"type": "integer"}})),
        f("search_files", "Search file contents.", json!({"pattern": {"type": "string"},
            "path": {"type": "string"}})),
        f("patch", "Replace text in a file.", json!({"path": {"type": "string"},
            "old_string": {"type": "string"}, "new_string": {"type": "string"}})),
        f("snip_restore", "Restore elided output.", json!({"id": {"type": "string"}}))
    ]})
}

/// A file the agent works on: a path and real lines (from the captures).
struct File {
    path: String,
    lines: Vec<String>,
}

fn realistic_files(sources: &[Source]) -> Vec<File> {
    sources
        .iter()
        .filter(|s| s.text.lines().count() >= 60)
        .map(|s| File {
            path: format!("src/{}", s.file.trim_end_matches(".txt").replace('-', "_")),
            lines: s
                .text
                .lines()
                .map(|l| snip_context::digest::plain_text(l.trim_end_matches('\r')))
                .collect(),
        })
        .collect()
}

impl Session {
    /// The realistic family: `calls` API calls, nearly all answered by a tool call.
    pub(crate) fn realistic(calls: usize, seed: u64) -> Result<Session, String> {
        let sources = sources()?;
        let files = realistic_files(&sources);
        if files.is_empty() {
            return Err("no capture has 60 lines".into());
        }
        let mut rng = Rng(snip_core::util::SplitMix64(
            seed.wrapping_mul(0x9E37_79B9).wrapping_add(17),
        ));
        let mut order: Vec<usize> = (0..sources.len()).collect();
        rng.shuffle(&mut order);
        let mut next_capture = 0;
        let mut system = String::from(SYSTEM_PROMPT);
        while system.len() < 6_000 {
            system.push(' ');
            system.push_str(PROSE[rng.below(PROSE.len())]);
        }
        let mut messages = vec![
            json!({"role": "system", "content": system}),
            json!({"role": "user", "content": "The build of the ledger crate fails on CI and the downloads step is flaky. Please find out why and fix what you can, and run the tests when you are done."}),
        ];
        let mut lens = Vec::with_capacity(calls);
        let mut read: Vec<(usize, usize, usize)> = Vec::new();
        let mut tools = (0, 0);
        for i in 0..calls.saturating_sub(1) {
            lens.push(messages.len());
            let mut say = String::new();
            let span = if rng.below(4) == 0 { 12 } else { 4 };
            for _ in 0..1 + rng.below(span) {
                if !say.is_empty() {
                    say.push(' ');
                }
                say.push_str(PROSE[rng.below(PROSE.len())]);
            }
            let roll = rng.below(100);
            if roll < 5 {
                messages.push(json!({"role": "assistant", "content": say}));
                messages.push(
                    json!({"role": "user", "content": USER_TURNS[rng.below(USER_TURNS.len())]}),
                );
                continue;
            }
            let id = format!("call_{i:03}_{:08x}", rng.next() as u32);
            let (name, args, result) = if roll < 40 {
                tools.0 += 1;
                if next_capture == order.len() {
                    rng.shuffle(&mut order);
                    next_capture = 0;
                }
                let src = &sources[order[next_capture]];
                next_capture += 1;
                let output = hermes_capped(&src.text, 50_000);
                let envelope = json!({"output": output, "exit_code": src.exit_code, "error": null});
                (
                    "terminal",
                    json!({"command": src.command}),
                    envelope.to_string(),
                )
            } else if roll < 70 {
                tools.1 += 1;
                // One read in three goes back to a window read before.
                let (f, offset, limit) = if !read.is_empty() && rng.below(3) == 0 {
                    read[rng.below(read.len())]
                } else {
                    let f = rng.below(files.len());
                    let limit = 80 + rng.below(420);
                    let offset = 1 + rng.below(files[f].lines.len().saturating_sub(limit).max(1));
                    read.push((f, offset, limit));
                    (f, offset, limit)
                };
                let file = &files[f];
                let end = (offset - 1 + limit).min(file.lines.len());
                let content: String = (offset - 1..end)
                    .map(|n| format!("{:>6}|{}\n", n + 1, file.lines[n]))
                    .collect();
                let body = json!({"content": content, "total_lines": file.lines.len(),
                    "file_size": file.lines.iter().map(|l| l.len() + 1).sum::<usize>()});
                (
                    "read_file",
                    json!({"path": file.path, "offset": offset, "limit": limit}),
                    body.to_string(),
                )
            } else if roll < 85 {
                let f = &files[rng.below(files.len())];
                let line = &f.lines[rng.below(f.lines.len())];
                let word = line
                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                    .filter(|w| w.len() >= 4)
                    .max_by_key(|w| w.len())
                    .unwrap_or("error")
                    .to_string();
                let mut matches = Vec::new();
                for file in &files {
                    for (n, l) in file.lines.iter().enumerate() {
                        if l.contains(&word) && matches.len() < 50 {
                            matches.push(json!({"path": file.path, "line": n + 1, "content": l}));
                        }
                    }
                }
                let body = json!({"total_count": matches.len(), "matches": matches});
                (
                    "search_files",
                    json!({"pattern": word, "path": "."}),
                    body.to_string(),
                )
            } else if roll < 97 {
                let f = &files[rng.below(files.len())];
                let at = rng.below(f.lines.len().saturating_sub(8).max(1));
                let n = 1 + rng.below(6);
                let old: Vec<&str> = f.lines[at..(at + n).min(f.lines.len())]
                    .iter()
                    .map(String::as_str)
                    .collect();
                let new: Vec<String> = old.iter().map(|l| format!("{l} // fixed")).collect();
                let mut diff = format!(
                    "--- a/{0}\n+++ b/{0}\n@@ -{1},{2} +{1},{3} @@\n",
                    f.path,
                    at + 1,
                    old.len(),
                    new.len()
                );
                for l in &old {
                    diff.push_str(&format!("-{l}\n"));
                }
                for l in &new {
                    diff.push_str(&format!("+{l}\n"));
                }
                let body = json!({"success": true, "diff": diff, "files_modified": [f.path]});
                (
                    "patch",
                    json!({"path": f.path, "old_string": old.join("\n"), "new_string": new.join("\n")}),
                    body.to_string(),
                )
            } else {
                let src = &sources[rng.below(sources.len())];
                let start = floor_char(&src.text, rng.below(src.text.len().max(1)));
                let end = floor_char(
                    &src.text,
                    (start + 2_000 + rng.below(6_000)).min(src.text.len()),
                );
                let body = json!({"status": "ok", "content": &src.text[start..end], "start": start, "end": end});
                (
                    "snip_restore",
                    json!({"id": format!("sn_{:024x}", rng.next())}),
                    body.to_string(),
                )
            };
            messages.push(json!({"role": "assistant", "content": say, "tool_calls": [
                {"id": id, "type": "function",
                 "function": {"name": name, "arguments": args.to_string()}}
            ]}));
            messages.push(json!({"role": "tool", "tool_call_id": id, "content": result}));
        }
        lens.push(messages.len());
        Ok(Session {
            head: realistic_head(),
            messages,
            lens,
            tools,
        })
    }
}

/// Hermes's cap on one terminal output: the first 40% and last 60% of `cap` chars,
/// with its notice between them.
fn hermes_capped(text: &str, cap: usize) -> String {
    host_capped(text, cap)
}

/// A store stand-in with the real id shape (`sn_` + 24 hex) and deterministic ids
/// (SHA-256 of the original), so the figures are reproducible; the real store's ids
/// are keyed, hence different hex of the same length.
fn bench_id(original: &[u8]) -> Option<String> {
    let d = Sha256::digest(original);
    let mut id = String::from("sn_");
    for b in &d[..12] {
        id.push_str(&format!("{b:02x}"));
    }
    Some(id)
}

// ---------------------------------------------------------------------------------
// Policies and measurement

/// How the requests of a session are rewritten.
#[derive(Debug, Clone)]
enum Policy {
    /// Sent as they are.
    None,
    /// Every result compressed by the core when it arrived; no conversation pass.
    PerResult,
    /// The conversation pass with these settings, on the host's results (or on
    /// per-result-compressed ones).
    Pass {
        settings: ContextSettings,
        per_result: bool,
    },
    /// Anthropic's `clear_tool_uses_20250919` at its documented defaults: when a
    /// request exceeds 100,000 input tokens, every tool result but the newest 3 is
    /// replaced by a placeholder (tool inputs kept).
    ClearToolUses { trigger: u64, keep: usize },
}

fn policies(sweep: bool) -> Vec<(String, Policy)> {
    let new = ContextSettings::default();
    let old = ContextSettings {
        keep_last: 20,
        batch: Some(10),
        ..ContextSettings::default()
    };
    let one = ContextSettings {
        batch: Some(1),
        ..ContextSettings::default()
    };
    let mut v = vec![
        ("no compression".into(), Policy::None),
        ("per-result compression only".into(), Policy::PerResult),
        (
            format!("pass, new defaults (keep {})", new.keep_last),
            Policy::Pass {
                settings: new.clone(),
                per_result: false,
            },
        ),
        (
            "snip: per-result + pass, new defaults".into(),
            Policy::Pass {
                settings: new,
                per_result: true,
            },
        ),
        (
            "pass, old defaults (keep 20, batch 10)".into(),
            Policy::Pass {
                settings: old,
                per_result: false,
            },
        ),
        (
            format!("pass, keep {}, batch 1", one.keep_last),
            Policy::Pass {
                settings: one,
                per_result: false,
            },
        ),
        (
            "clear_tool_uses (100K trigger, keep 3)".into(),
            Policy::ClearToolUses {
                trigger: 100_000,
                keep: 3,
            },
        ),
    ];
    if sweep {
        let tuned = |label: String, settings: ContextSettings| {
            (
                label,
                Policy::Pass {
                    settings,
                    per_result: true,
                },
            )
        };
        for keep_last in [3, 4, 8, 12] {
            v.push(tuned(
                format!("sweep: per-result + pass, keep {keep_last}"),
                ContextSettings {
                    keep_last,
                    ..ContextSettings::default()
                },
            ));
        }
        for e in [10, 100] {
            v.push(tuned(
                format!("sweep: per-result + pass, {e} expected calls"),
                ContextSettings {
                    expected_calls: Some(e),
                    ..ContextSettings::default()
                },
            ));
        }
        v.push(tuned(
            "sweep: per-result + pass, keep 20, batch 10".into(),
            ContextSettings {
                keep_last: 20,
                batch: Some(10),
                ..ContextSettings::default()
            },
        ));
    }
    v
}

/// o200k_base counts of message texts, each distinct text counted once.
#[derive(Default)]
struct TokenCounter {
    memo: HashMap<String, u64>,
}

impl TokenCounter {
    /// Tokens of one message as the model reads it: its content text, tool names and
    /// arguments, plus 4 for the message's framing.
    fn message(&mut self, m: &Value) -> u64 {
        let mut text = String::new();
        match &m["content"] {
            Value::String(s) => text.push_str(s),
            Value::Array(parts) => {
                for p in parts {
                    if let Some(t) = p["text"].as_str() {
                        text.push_str(t);
                    }
                }
            }
            _ => {}
        }
        if let Some(calls) = m["tool_calls"].as_array() {
            for c in calls {
                text.push_str(c["function"]["name"].as_str().unwrap_or_default());
                text.push_str(c["function"]["arguments"].as_str().unwrap_or_default());
            }
        }
        if let Some(n) = self.memo.get(&text) {
            return n + 4;
        }
        let n = snip_bench::tokens::count(text.as_bytes());
        self.memo.insert(text, n);
        n + 4
    }
}

/// One call's figures: tokens sent and tokens in the run of leading messages equal to
/// the previous call's.
#[derive(Debug, Clone, Copy, Serialize)]
struct CallStat {
    tokens: u64,
    prefix_tokens: u64,
}

fn clear_tool_uses(request: &Value, tokens: u64, trigger: u64, keep: usize) -> Value {
    if tokens <= trigger {
        return request.clone();
    }
    let mut r = request.clone();
    if let Some(list) = r["messages"].as_array_mut() {
        let results: Vec<usize> = (0..list.len())
            .filter(|&i| list[i]["role"] == "tool")
            .collect();
        for &i in &results[..results.len().saturating_sub(keep)] {
            list[i]["content"] = Value::String("[cleared to save context]".into());
        }
    }
    r
}

/// Every call of `session` under `policy`.
fn measure(
    session: &Session,
    compressed: &Session,
    policy: &Policy,
    tokens: &mut TokenCounter,
) -> Vec<CallStat> {
    let mut prev: Vec<Value> = Vec::new();
    let mut out = Vec::with_capacity(session.lens.len());
    for i in 0..session.lens.len() {
        let request = match policy {
            Policy::None => session.request(i),
            Policy::PerResult => compressed.request(i),
            Policy::Pass {
                settings,
                per_result,
            } => {
                let raw = if *per_result {
                    compressed.request(i)
                } else {
                    session.request(i)
                };
                compress_request(&raw, FormatChoice::Auto, settings, &mut bench_id).request
            }
            Policy::ClearToolUses { trigger, keep } => {
                let raw = session.request(i);
                let full: u64 = raw["messages"]
                    .as_array()
                    .map_or(0, |l| l.iter().map(|m| tokens.message(m)).sum());
                clear_tool_uses(&raw, full, *trigger, *keep)
            }
        };
        let list = request["messages"].as_array().cloned().unwrap_or_default();
        let mut total = 0;
        let mut prefix = 0;
        let mut shared = true;
        for (j, m) in list.iter().enumerate() {
            let t = tokens.message(m);
            total += t;
            shared = shared && prev.get(j) == Some(m);
            if shared {
                prefix += t;
            }
        }
        out.push(CallStat {
            tokens: total,
            prefix_tokens: prefix,
        });
        prev = list;
    }
    out
}

/// Cost in dollars of the first `n` calls at `p`'s prices.
fn cost(calls: &[CallStat], p: &Provider) -> f64 {
    calls
        .iter()
        .map(|c| {
            let mut cached = c.prefix_tokens / p.step * p.step;
            if cached < p.min_cached {
                cached = 0;
            }
            let fresh = c.tokens - cached;
            (cached as f64 * p.read + fresh as f64 * p.write) / 1e6
        })
        .sum()
}

// ---------------------------------------------------------------------------------
// The sweep and its report

#[derive(Debug, Serialize)]
struct Cell {
    family: &'static str,
    seed: u64,
    calls: usize,
    policy: String,
    tokens: u64,
    cached_tokens: u64,
    /// Largest request of the session, in tokens.
    peak_tokens: u64,
    /// Cost per provider, dollars, in the order of `providers`.
    cost: Vec<f64>,
}

#[derive(Debug, Serialize)]
struct Report {
    providers: Vec<Provider>,
    policies: Vec<String>,
    lengths: Vec<usize>,
    seeds: u64,
    cells: Vec<Cell>,
}

fn sweep(args: &Args) -> Result<Report, String> {
    sweep_with(args, policies(args.sweep))
}

/// The sweep over `pol` (the first policy is the baseline ratios are taken to).
fn sweep_with(args: &Args, pol: Vec<(String, Policy)>) -> Result<Report, String> {
    sweep_families(args, pol, &["bench", "realistic"])
}

/// [`sweep_with`] on some of the families.
fn sweep_families(
    args: &Args,
    pol: Vec<(String, Policy)>,
    families: &[&'static str],
) -> Result<Report, String> {
    let max = *args.lengths.iter().max().unwrap_or(&2);
    let mut tokens = TokenCounter::default();
    let mut cells = Vec::new();
    for &family in families {
        for seed in 1..=args.seeds {
            let session = match family {
                "bench" => Session::build(max, max * 45 / 100, seed, 30_000)?,
                _ => Session::realistic(max, seed)?,
            };
            let compressed = session.with_results_compressed();
            for (name, p) in &pol {
                let calls = measure(&session, &compressed, p, &mut tokens);
                for &l in &args.lengths {
                    let c = &calls[..l.min(calls.len())];
                    cells.push(Cell {
                        family,
                        seed,
                        calls: l,
                        policy: name.clone(),
                        tokens: c.iter().map(|x| x.tokens).sum(),
                        cached_tokens: c.iter().map(|x| x.prefix_tokens).sum(),
                        peak_tokens: c.iter().map(|x| x.tokens).max().unwrap_or(0),
                        cost: PROVIDERS.iter().map(|p| cost(c, p)).collect(),
                    });
                }
            }
        }
    }
    Ok(Report {
        providers: PROVIDERS.to_vec(),
        policies: pol.into_iter().map(|(n, _)| n).collect(),
        lengths: args.lengths.clone(),
        seeds: args.seeds,
        cells,
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

impl Report {
    fn cell(&self, family: &str, seed: u64, calls: usize, policy: &str) -> Option<&Cell> {
        self.cells.iter().find(|c| {
            c.family == family && c.seed == seed && c.calls == calls && c.policy == policy
        })
    }

    /// Per seed and length, `policy`'s figure relative to no compression (1.0 = same).
    fn ratios(&self, family: &str, policy: &str, f: impl Fn(&Cell) -> f64) -> Vec<(usize, f64)> {
        let mut out = Vec::new();
        for &l in &self.lengths {
            for seed in 1..=self.seeds {
                if let (Some(c), Some(base)) = (
                    self.cell(family, seed, l, policy),
                    self.cell(family, seed, l, &self.policies[0]),
                ) {
                    let b = f(base);
                    if b > 0.0 {
                        out.push((l, f(c) / b));
                    }
                }
            }
        }
        out
    }

    fn render(&self, markdown: bool) -> String {
        let mut s = format!(
            "snip bench context: {} seeds per family, sessions of {} API calls; o200k_base tokens of message text (+4 per message); cached = leading messages equal to the previous call's; no cache expiry (calls < 5 min apart)\n",
            self.seeds,
            self.lengths.iter().map(|l| l.to_string()).collect::<Vec<_>>().join(", ")
        );
        for p in &self.providers {
            s.push_str(&format!(
                "price table: {} — per MTok: input ${:.2}, cache write ${:.2}, cache read ${:.2}; cached from {} tokens\n",
                p.name, p.input, p.write, p.read, p.min_cached
            ));
        }
        for family in ["bench", "realistic"] {
            let over: Vec<String> = self
                .lengths
                .iter()
                .filter(|&&l| {
                    (1..=self.seeds).any(|seed| {
                        self.cell(family, seed, l, &self.policies[0])
                            .is_some_and(|c| c.peak_tokens > 200_000)
                    })
                })
                .map(|l| l.to_string())
                .collect();
            s.push_str(&format!(
                "\nfamily {family}: medians over seeds and lengths (worst = the highest ratio to no compression over every seed and length); uncompressed requests pass 200K tokens at {} calls\n\n",
                if over.is_empty() { "no length".to_string() } else { over.join(", ") }
            ));
            let mut head = vec![
                "policy".to_string(),
                "input tokens vs none".into(),
                "worst".into(),
                "cache-hit share".into(),
            ];
            for p in &self.providers {
                let short = p.name.split(' ').next().unwrap_or(p.name);
                head.push(format!("{short} cost vs none"));
                head.push(format!("{short} worst"));
                head.push(format!("{short} pays from"));
            }
            let body: Vec<Vec<String>> = self
                .policies
                .iter()
                .map(|pol| {
                    let t = self.ratios(family, pol, |c| c.tokens as f64);
                    let hit = median(
                        self.cells
                            .iter()
                            .filter(|c| c.family == family && &c.policy == pol)
                            .map(|c| c.cached_tokens as f64 / c.tokens.max(1) as f64)
                            .collect(),
                    );
                    let mut row = vec![
                        pol.clone(),
                        rel(median(t.iter().map(|x| x.1).collect())),
                        rel(t.iter().map(|x| x.1).fold(f64::MIN, f64::max)),
                        format!("{:.1}%", hit * 100.0),
                    ];
                    for (k, _) in self.providers.iter().enumerate() {
                        let c = self.ratios(family, pol, |c| c.cost[k]);
                        row.push(rel(median(c.iter().map(|x| x.1).collect())));
                        row.push(rel(c.iter().map(|x| x.1).fold(f64::MIN, f64::max)));
                        // The shortest length from which every seed costs less than none.
                        let pays = self.lengths.iter().find(|&&l| {
                            self.lengths
                                .iter()
                                .filter(|&&m| m >= l)
                                .all(|&m| c.iter().filter(|x| x.0 == m).all(|x| x.1 < 1.0))
                        });
                        row.push(pays.map_or("never".to_string(), |l| format!("{l} calls")));
                    }
                    row
                })
                .collect();
            let head: Vec<&str> = head.iter().map(String::as_str).collect();
            s.push_str(&table(&head, &body, markdown));
            // Per length, median over seeds, for the new defaults and the baselines.
            s.push_str(&format!(
                "\nfamily {family}: median cost per session length, dollars ({})\n\n",
                self.providers[0].name
            ));
            let mut head = vec!["policy".to_string()];
            head.extend(self.lengths.iter().map(|l| format!("{l} calls")));
            let body: Vec<Vec<String>> = self
                .policies
                .iter()
                .map(|pol| {
                    let mut row = vec![pol.clone()];
                    for &l in &self.lengths {
                        let v: Vec<f64> = (1..=self.seeds)
                            .filter_map(|seed| self.cell(family, seed, l, pol))
                            .map(|c| c.cost[0])
                            .collect();
                        row.push(format!("${:.2}", median(v)));
                    }
                    row
                })
                .collect();
            let head: Vec<&str> = head.iter().map(String::as_str).collect();
            s.push_str(&table(&head, &body, markdown));
        }
        s
    }
}

/// A ratio to no compression as a signed percentage: 0.42 → `-58.0%`.
fn rel(r: f64) -> String {
    let v = (r - 1.0) * 100.0;
    if v.abs() < 0.05 {
        "0.0%".to_string()
    } else {
        format!("{v:+.1}%")
    }
}

/// An aligned text table (first column left, others right) or a Markdown table.
fn table(head: &[&str], body: &[Vec<String>], markdown: bool) -> String {
    let mut s = String::new();
    if markdown {
        s.push_str(&format!("| {} |\n", head.join(" | ")));
        let rule: Vec<&str> = (0..head.len())
            .map(|i| if i == 0 { "---" } else { "---:" })
            .collect();
        s.push_str(&format!("| {} |\n", rule.join(" | ")));
        for row in body {
            s.push_str(&format!("| {} |\n", row.join(" | ")));
        }
        return s;
    }
    let widths: Vec<usize> = (0..head.len())
        .map(|i| {
            body.iter()
                .map(|r| r[i].chars().count())
                .chain([head[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            let pad = widths[i] - c.chars().count();
            if i == 0 {
                l.push_str(c);
                l.push_str(&" ".repeat(pad));
            } else {
                l.push_str("  ");
                l.push_str(&" ".repeat(pad));
                l.push_str(c);
            }
        }
        l.trim_end().to_string() + "\n"
    };
    s.push_str(&line(head.to_vec()));
    for row in body {
        s.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_reproducible_and_shaped_as_documented() {
        let a = Session::realistic(80, 3).unwrap();
        let b = Session::realistic(80, 3).unwrap();
        assert_eq!(a.messages, b.messages);
        assert_eq!(a.lens.len(), 80);
        assert!(a.lens.windows(2).all(|w| w[0] < w[1]));
        let names: Vec<&str> = a
            .messages
            .iter()
            .filter_map(|m| m["tool_calls"][0]["function"]["name"].as_str())
            .collect();
        for tool in ["terminal", "read_file", "search_files", "patch"] {
            assert!(names.contains(&tool), "{tool} missing");
        }
        // Assistant turns of realistic length.
        let says: Vec<usize> = a
            .messages
            .iter()
            .filter(|m| m["role"] == "assistant")
            .map(|m| m["content"].as_str().unwrap_or_default().len())
            .collect();
        assert!(says.iter().any(|&n| n >= 1_000) && says.iter().all(|&n| n >= 50));
        assert_ne!(a.messages, Session::realistic(80, 4).unwrap().messages);
        let c = Session::build(100, 45, 6, 30_000).unwrap();
        assert_eq!(c.tools.0 + c.tools.1, 45);
    }

    #[test]
    fn host_cap_keeps_head_and_tail_lines() {
        let text: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let capped = host_capped(&text, 1000);
        assert!(capped.len() <= 1100);
        assert!(capped.starts_with("line 0\n"));
        assert!(capped.ends_with("line 999\n"));
        assert!(capped.contains("characters truncated"));
        assert_eq!(host_capped("short", 1000), "short");
    }

    #[test]
    fn prices_follow_the_tables() {
        let calls = [
            CallStat {
                tokens: 10_000,
                prefix_tokens: 0,
            },
            CallStat {
                tokens: 12_000,
                prefix_tokens: 10_000,
            },
            CallStat {
                tokens: 12_500,
                prefix_tokens: 500,
            },
        ];
        let [a, _, o] = PROVIDERS;
        // Anthropic: 10,000 + 2,000 + 12,500 written at 1.25×, 10,000 read at 0.1×
        // (the 500-token prefix is under the minimum).
        let want = (24_500.0 * 3.75 + 10_000.0 * 0.30) / 1e6;
        assert!((cost(&calls, &a) - want).abs() < 1e-9);
        // OpenAI: cached counted in 128-token steps (9,984), the rest at input price.
        let want = (9_984.0 * 0.50 + 24_516.0 * 2.0) / 1e6;
        assert!((cost(&calls, &o) - want).abs() < 1e-9);
    }

    #[test]
    fn clear_tool_uses_keeps_the_newest_results_over_its_trigger() {
        let s = Session::realistic(30, 1).unwrap();
        let r = s.request(29);
        assert_eq!(clear_tool_uses(&r, 10, 100, 3), r);
        let c = clear_tool_uses(&r, 1_000, 100, 3);
        let results: Vec<&Value> = c["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .collect();
        let kept = results
            .iter()
            .filter(|m| m["content"] != "[cleared to save context]")
            .count();
        assert_eq!(kept, 3);
    }

    #[test]
    fn the_pass_is_measured_on_message_text() {
        let s = Session::realistic(40, 2).unwrap();
        let compressed = s.with_results_compressed();
        let mut t = TokenCounter::default();
        let none = measure(&s, &compressed, &Policy::None, &mut t);
        // Without compression every call's prefix is the whole previous request.
        for w in none.windows(2) {
            assert_eq!(w[1].prefix_tokens, w[0].tokens);
        }
        let pass = measure(
            &s,
            &compressed,
            &Policy::Pass {
                // Cache reads priced as writes: a release pays at once, so this
                // 40-call session has some.
                settings: ContextSettings {
                    min_messages: 0,
                    cache_write_pct: 100,
                    cache_read_pct: 100,
                    ..ContextSettings::default()
                },
                per_result: false,
            },
            &mut t,
        );
        let sum = |v: &[CallStat]| v.iter().map(|c| c.tokens).sum::<u64>();
        assert!(sum(&pass) < sum(&none));
    }

    /// The pass never costs more than no compression, at any session length and with
    /// every price table: alone (on the host's results), and as hosts run it (after
    /// per-result compression, whose markers it credits to its ledger). Short
    /// sessions included: there the pass alone must do nothing.
    #[test]
    fn the_pass_never_costs_more_than_not_running_it() {
        let args = Args {
            seeds: 2,
            lengths: vec![5, 10, 20, 30, 50, 80, 100],
            ..Args::default()
        };
        let new = ContextSettings::default();
        let pol = vec![
            ("none".to_string(), Policy::None),
            ("per-result".to_string(), Policy::PerResult),
            (
                "pass".to_string(),
                Policy::Pass {
                    settings: new.clone(),
                    per_result: false,
                },
            ),
            (
                "per-result + pass".to_string(),
                Policy::Pass {
                    settings: new,
                    per_result: true,
                },
            ),
        ];
        let report = sweep_with(&args, pol).unwrap();
        let (mut released, mut released_after) = (0, 0);
        for family in ["bench", "realistic"] {
            for seed in 1..=args.seeds {
                for &l in &args.lengths {
                    let cell = |p: &str| report.cell(family, seed, l, p).unwrap();
                    let (none, per, pass, both) = (
                        cell("none"),
                        cell("per-result"),
                        cell("pass"),
                        cell("per-result + pass"),
                    );
                    for (k, p) in PROVIDERS.iter().enumerate() {
                        let at = format!("{family}, seed {seed}, {l} calls, {}", p.name);
                        assert!(
                            pass.cost[k] <= none.cost[k] + 1e-9,
                            "pass alone: {at}: {} > {}",
                            pass.cost[k],
                            none.cost[k]
                        );
                        assert!(
                            both.cost[k] <= none.cost[k] + 1e-9,
                            "per-result + pass: {at}: {} > {}",
                            both.cost[k],
                            none.cost[k]
                        );
                    }
                    if pass.tokens < none.tokens {
                        released += 1;
                    }
                    if both.tokens < per.tokens {
                        released_after += 1;
                    }
                }
            }
        }
        // The guarantee is not met by never releasing anything.
        assert!(released > 0 && released_after > 0);
    }

    /// The targets of `docs/context.md` on the realistic family: at the defaults, as
    /// hosts run the pass (after per-result compression), the median over seeds and
    /// lengths (30 to 300 calls, 5 seeds) sends at most half the tokens of no
    /// compression and costs less than no compression and than `clear_tool_uses`
    /// with every price table, and no seed at any length costs more than no
    /// compression. Ignored: it replays 5 sessions of 300 calls three ways, 113 s in a
    /// release build on a loaded 2-core machine and far longer in a debug one
    /// (`cargo test --release -p snip-bench --bin snip-bench targets -- --ignored`).
    #[test]
    #[ignore = "a benchmark: run in release"]
    fn targets_on_the_realistic_family() {
        let all = policies(false);
        let pick = |prefix: &str| {
            all.iter()
                .find(|(name, _)| name.starts_with(prefix))
                .cloned()
                .unwrap()
        };
        let pol = vec![
            pick("no compression"),
            pick("snip: per-result + pass"),
            pick("clear_tool_uses"),
        ];
        let report = sweep_families(&Args::default(), pol, &["realistic"]).unwrap();
        let (new, clear) = (&report.policies[1], &report.policies[2]);
        let t = report.ratios("realistic", new, |c| c.tokens as f64);
        assert_eq!(t.len(), 30);
        let tokens = median(t.iter().map(|x| x.1).collect());
        assert!(tokens <= 0.5, "tokens: {tokens}");
        for (k, p) in PROVIDERS.iter().enumerate() {
            let c = report.ratios("realistic", new, |c| c.cost[k]);
            let m = median(c.iter().map(|x| x.1).collect());
            assert!(m < 1.0, "{}: {m}", p.name);
            assert!(c.iter().all(|x| x.1 <= 1.0), "{}: {c:?}", p.name);
            let cl = report.ratios("realistic", clear, |c| c.cost[k]);
            let mc = median(cl.iter().map(|x| x.1).collect());
            assert!(m < mc, "{}: {m} vs clear_tool_uses {mc}", p.name);
        }
    }
}
