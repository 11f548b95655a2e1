//! `snip hook <host>`: host hooks. Each reads the host's payload on stdin and writes
//! the host's reply on stdout, failing open: on anything unexpected (bad JSON, unknown
//! tool, I/O error, even a panic) the Claude Code hook prints `{}` and exits 0, and
//! the OpenCode filter echoes its input unchanged.
use anyhow::Result;
use snip_hosts::claude_code;
use std::io::{Read as _, Write as _};
use std::process::ExitCode;

/// Arguments of `snip hook`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The host whose hook payload arrives on stdin.
    #[command(subcommand)]
    pub host: Host,
}

/// Hosts with a hook.
#[derive(clap::Subcommand, Debug)]
pub enum Host {
    /// Claude Code `PostToolUse` (and, with `--wrap-bash` installs, `PreToolUse`)
    /// payload on stdin → `hookSpecificOutput` JSON on stdout (`{}` for no change).
    ClaudeCode,
    /// OpenCode plugin filter: one tool output (raw text) on stdin → the text the
    /// model should see on stdout.
    Opencode {
        /// The OpenCode tool id (e.g. `bash`, `read`), recorded in the ledger as
        /// `opencode:<tool>`.
        #[arg(long, default_value = "tool")]
        tool: String,
        /// The file where OpenCode saved the whole output it cut (its bash tool's
        /// `metadata.outputPath`): compressed instead of the cut text on stdin when
        /// that text starts with OpenCode's notice naming this file and the file is a
        /// regular file of at most 32 MiB of UTF-8.
        #[arg(long, value_name = "PATH")]
        saved: Option<String>,
    },
}

/// Runs `snip hook`.
pub fn run(args: Args) -> Result<ExitCode> {
    match args.host {
        Host::ClaudeCode => claude_code_hook(),
        Host::Opencode { tool, saved } => opencode_filter(&tool, saved.as_deref()),
    }
}

/// Reads the payload, answers it, and always exits 0.
fn claude_code_hook() -> Result<ExitCode> {
    let mut input = Vec::with_capacity(crate::common::STDIN_CAPACITY);
    let reply = match std::io::stdin().lock().read_to_end(&mut input) {
        Ok(_) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let payload: serde_json::Value = match serde_json::from_slice(&input) {
                Ok(p) => p,
                Err(_) if has_lone_surrogate(&input) => {
                    not_handled(
                        "the hook payload holds a lone UTF-16 surrogate escape (\\ud800-\\udfff without its pair), which a reply cannot carry back exactly",
                    );
                    return None;
                }
                Err(e) => {
                    not_handled(&format!("the hook payload is not JSON ({e})"));
                    return None;
                }
            };
            // The payload's bytes are not kept while it is answered (the parsed
            // payload holds its text): one copy less at the peak (docs/contract.md,
            // memory bound), and its pages are free for the core's tables, so a
            // call maps fewer fresh pages (each costs microseconds in a process
            // this short).
            input = Vec::new();
            if let Some(why) = claude_code::not_a_payload(&payload) {
                not_handled(&why);
                return None;
            }
            let reply = claude_code::respond(&payload);
            claude_code::tell_once(reply, &payload)
        }))
        .ok()
        .flatten(),
        Err(_) => None,
    };
    drop(input);
    let mut json = Vec::with_capacity(4096);
    if reply.is_none_or(|v| serde_json::to_writer(&mut json, &v).is_err()) {
        json.clear();
        json.extend_from_slice(b"{}");
    }
    json.push(b'\n');
    let mut out = std::io::stdout().lock();
    // Nothing useful can be done if stdout is gone; the exit status stays 0.
    let _ = out.write_all(&json);
    let _ = out.flush();
    Ok(ExitCode::SUCCESS)
}

/// Whether `input` failed to parse because of a lone surrogate escape: valid JSON
/// (JavaScript's `JSON.stringify` writes one for an unpaired surrogate), but no
/// Rust string holds it. Tested by parsing again with every surrogate escape
/// (`\uD800`-`\uDFFF`, paired or not) replaced by an escape of the same length.
fn has_lone_surrogate(input: &[u8]) -> bool {
    let mut fixed = input.to_vec();
    let mut found = false;
    let mut i = 0;
    while i < fixed.len() {
        if fixed[i] != b'\\' {
            i += 1;
            continue;
        }
        // A backslash starts an escape; the byte after it is the escape's letter.
        let esc = &fixed[i + 1..];
        let surrogate = esc.len() >= 5
            && esc[0] == b'u'
            && esc[1].eq_ignore_ascii_case(&b'd')
            && matches!(esc[2].to_ascii_lowercase(), b'8'..=b'9' | b'a'..=b'f')
            && esc[3].is_ascii_hexdigit()
            && esc[4].is_ascii_hexdigit();
        if surrogate {
            fixed[i + 2..i + 6].copy_from_slice(b"fffd");
            found = true;
        }
        i += 2;
    }
    found && serde_json::from_slice::<serde_json::Value>(&fixed).is_ok()
}

/// One line on stderr for a payload snip cannot read (the reply stays `{}`, exit 0:
/// Claude Code shows a hook's stderr in its transcript view, not to the model).
fn not_handled(why: &str) {
    eprintln!("snip hook claude-code: {why}; no change made (replied {{}})");
}

/// Filters one OpenCode tool output (or, with `saved`, the whole output OpenCode cut;
/// see [`snip_hosts::opencode::saved_output`]). Invalid UTF-8, errors and panics echo
/// the input.
fn opencode_filter(tool: &str, saved: Option<&str>) -> Result<ExitCode> {
    let mut input = Vec::with_capacity(crate::common::STDIN_CAPACITY);
    std::io::stdin().lock().read_to_end(&mut input)?;
    let output = snip_hosts::opencode::filter(&input, tool, saved);
    let mut out = std::io::stdout().lock();
    out.write_all(output.as_deref().unwrap_or(&input))?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
