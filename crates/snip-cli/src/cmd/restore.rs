//! `snip restore`: get back what a marker says was removed.
//!
//! Prints the store's JSON response (see `docs/restore.md`) or, with `--raw`, only
//! the content's exact bytes. Exit status: 0 `ok`; 1 `not_found` or `expired`;
//! 2 `invalid` (and bad flags); 3 `too_large`; 4 `unavailable` or `error`. On any
//! status but `ok`, one line on stderr says what happened and what to do.
use anyhow::Result;
use snip_store::restore::pasted::{
    continue_command, parse_pasted_call, parse_pasted_marker, parse_range, pasted_call_id,
};
use snip_store::{RestoreMode, RestoreRequest, RestoreResponse, RestoreStatus};
use std::io::Write;
use std::process::ExitCode;

/// Arguments of `snip restore`.
#[derive(clap::Args, Debug, Default)]
#[command(group(clap::ArgGroup::new("mode").args(["bytes", "lines", "search", "full"])))]
pub struct Args {
    /// The store id from a marker (`sn_` + 24 hex), or the whole restore call copied
    /// from a marker: 'snip_restore(id="sn_…", mode="lines", start=3, end=9)', also
    /// as it appears inside a JSON string (id=\"sn_…\").
    #[arg(value_name = "ID|CALL")]
    pub id: String,
    /// Bytes A:B of the original, 0-based, half-open; either side may be left out
    /// (`:4096`, `100000:`). The default is the first page from byte 0.
    #[arg(long, value_name = "A:B")]
    pub bytes: Option<String>,
    /// Lines A:B of the original, 1-based, inclusive (`120:180`, `5000:`).
    #[arg(long, value_name = "A:B")]
    pub lines: Option<String>,
    /// Literal text to find; prints matching lines with their numbers and context.
    #[arg(long, value_name = "TEXT")]
    pub search: Option<String>,
    /// The whole original (only when it fits the response cap).
    #[arg(long)]
    pub full: bool,
    /// Scope to one value of a JSON original, as a JSON pointer (`/items/0/text`).
    #[arg(long, value_name = "POINTER")]
    pub field: Option<String>,
    /// Response cap in bytes of content (default SNIP_RECOVERY_MAX_BYTES; at most 65536).
    #[arg(long, value_name = "N")]
    pub max_bytes: Option<usize>,
    /// Lines of context around each search match (default 2, at most 20).
    #[arg(long, value_name = "N")]
    pub context: Option<usize>,
    /// `token`: a bytes page's ends move off the inside of a token (a run of
    /// non-blank bytes) of at most 1024 bytes, so no page splits one (the page may
    /// then hold up to 1024 bytes more on each side). Bytes pages only.
    #[arg(long, value_name = "token", value_parser = ["token"])]
    pub align: Option<String>,
    /// Print only the content (its exact bytes), not the JSON response.
    #[arg(long)]
    pub raw: bool,
}

/// Runs `snip restore`.
pub fn run(args: Args) -> Result<ExitCode> {
    let mut store = None;
    let (req, resp) = match request(&args) {
        Ok(req) => {
            let resp = match crate::common::existing_store() {
                Ok(s) => {
                    let resp = s.restore(&req);
                    store = Some(s);
                    resp
                }
                Err(dir) => RestoreResponse::no_store(&req, &dir),
            };
            (req, resp)
        }
        // A pasted call that cannot be read (an unknown argument, a bad mode) is the
        // protocol's `invalid` answer, as the MCP tool gives it; a bad flag is a usage
        // error (stderr only).
        Err(RequestError::Call(e)) => {
            let id = pasted_call_id(&args.id);
            let req = RestoreRequest {
                id: id.clone(),
                ..Default::default()
            };
            (
                req,
                RestoreResponse::malformed(&id, format!("malformed restore request: {e}")),
            )
        }
        Err(RequestError::Json(resp)) => (
            RestoreRequest {
                id: resp.id.clone(),
                ..Default::default()
            },
            *resp,
        ),
        Err(RequestError::Flag(e)) => {
            eprintln!("snip restore: {e:#}");
            return Ok(ExitCode::from(2));
        }
    };
    let mut out = std::io::stdout().lock();
    if args.raw {
        let mut ends_line = true;
        let content = resp.content_bytes();
        if let Some(bytes) = &content {
            out.write_all(bytes)?;
            ends_line = bytes.last().is_none_or(|&b| b == b'\n');
        }
        out.flush()?;
        // A lines page that stops inside a line longer than the cap continues with
        // the rest of that line, byte for byte, then every byte up to the requested
        // range's end: a bytes request, so following the chain reads each byte once.
        let rest_of_line = match (&store, &content) {
            (Some(s), Some(bytes)) if resp.status == RestoreStatus::Ok => {
                cut_line_rest(s, &req, &resp, bytes)
            }
            _ => None,
        };
        // The content alone would hide a caveat the note carries (a line longer than
        // the response cap is cut, and the note says where the rest is).
        let mut caveat = resp
            .note
            .strip_prefix(snip_store::restore::UNTRUSTED_NOTE)
            .map(str::trim)
            .unwrap_or_default()
            .to_string();
        if rest_of_line.is_some() {
            // The continue command below says where the rest is, as a command.
            caveat = without_cut_sentence(&caveat, resp.start.unwrap_or(0));
        }
        let next = match &rest_of_line {
            Some(bytes_req) => bytes_req.start.map(|b| (bytes_req, b)),
            None => resp.next.map(|n| (&req, n)),
        };
        let notes = resp.status == RestoreStatus::Ok && (!caveat.is_empty() || next.is_some());
        // In one merged stream (an agent's terminal), a note must not join the
        // original's last line (docs/restore.md, "snip restore").
        if notes && !ends_line && stdout_is_stderr() {
            eprintln!();
        }
        if resp.status == RestoreStatus::Ok && !caveat.is_empty() {
            eprintln!("snip restore: {caveat}");
        }
        // A search that found nothing prints no content: say so, or a raw reader sees
        // the same silence as an empty original.
        if resp.status == RestoreStatus::Ok
            && req.mode == RestoreMode::Search
            && resp.total_matches == Some(0)
        {
            eprintln!(
                "snip restore: no match for {:?} in {} (the search is literal and case-sensitive)",
                req.query.as_deref().unwrap_or_default(),
                req.id
            );
        }
        if let (RestoreStatus::Ok, Some((from, next))) = (resp.status, next) {
            eprintln!(
                "snip restore: more follows; continue with {}",
                continue_command(from, next, snip_hosts::claude_code::shell_quote)
            );
        }
    } else {
        serde_json::to_writer(&mut out, &resp)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    if resp.status != RestoreStatus::Ok {
        eprintln!("snip restore: {}: {}", resp.status.name(), resp.note);
    }
    Ok(ExitCode::from(resp.status.exit_code()))
}

/// When `resp` is a `lines` page cut inside a line (one line longer than the cap),
/// the `bytes` request for the rest of the requested lines, from the byte after the
/// page: `[byte_end, end of line req.end)`, open-ended when the range runs to the
/// last line. `None` when the page ends at a line end or the scope's end.
fn cut_line_rest(
    store: &snip_store::StoreHandle,
    req: &RestoreRequest,
    resp: &RestoreResponse,
    content: &[u8],
) -> Option<RestoreRequest> {
    if req.mode != RestoreMode::Lines || content.last().is_none_or(|&b| b == b'\n') {
        return None;
    }
    let cut = resp.byte_end?;
    let scope = resp.scope_bytes.or(resp.total_bytes)?;
    if cut >= scope {
        return None;
    }
    let total_lines = resp.total_lines?;
    // The range's end in bytes: where the line after `req.end` starts.
    let end = match req.end {
        Some(e) if e < total_lines => {
            let probe = RestoreRequest {
                start: Some(e + 1),
                end: Some(e + 1),
                max_bytes: Some(snip_store::options::RECOVERY_MIN_BYTES),
                ..req.clone()
            };
            let r = store.restore(&probe);
            Some(r.byte_start.filter(|_| r.status == RestoreStatus::Ok)?)
        }
        _ => None,
    };
    Some(RestoreRequest {
        mode: RestoreMode::Bytes,
        start: Some(cut),
        end,
        ..req.clone()
    })
}

/// `caveat` without the sentence saying line `line` was cut at the response cap.
fn without_cut_sentence(caveat: &str, line: u64) -> String {
    let head = format!("Line {line} is longer than the response cap");
    let Some(at) = caveat.find(&head) else {
        return caveat.to_string();
    };
    let tail = &caveat[at..];
    let len = tail
        .find("end=")
        .and_then(|e| tail[e..].find('.').map(|d| e + d + 1));
    let rest = len.map_or("", |l| &tail[l..]);
    format!("{} {}", caveat[..at].trim_end(), rest.trim_start())
        .trim()
        .to_string()
}

/// Whether stdout and stderr are the same file (`2>&1`, a terminal tool's one pipe).
fn stdout_is_stderr() -> bool {
    use rustix::fs::fstat;
    match (fstat(std::io::stdout()), fstat(std::io::stderr())) {
        (Ok(a), Ok(b)) => (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino),
        _ => false,
    }
}

/// Why the arguments make no request: a pasted call or JSON request that cannot be
/// read, or a flag.
enum RequestError {
    Call(anyhow::Error),
    Json(Box<RestoreResponse>),
    Flag(anyhow::Error),
}

/// The request the flags describe.
fn request(args: &Args) -> std::result::Result<RestoreRequest, RequestError> {
    let arg = args.id.trim_start();
    let req = if arg.starts_with('{') {
        // The JSON request (the MCP tool's arguments), read by the one parser.
        RestoreRequest::from_json(arg).map_err(RequestError::Json)?
    } else if snip_core::marker::strip_call_name(arg).is_some() {
        parse_pasted_call(&args.id).map_err(|e| RequestError::Call(anyhow::Error::msg(e)))?
    } else if arg.starts_with("[snip: ") {
        // A whole marker line, pasted: the call it quotes.
        parse_pasted_marker(arg).map_err(|e| RequestError::Call(anyhow::Error::msg(e)))?
    } else if let Some(name) = call_name(arg) {
        return Err(RequestError::Call(anyhow::anyhow!(
            "{name:?} is not the restore tool: paste the call a marker quotes, \
             snip_restore(id=\"sn_…\", …) (or a host's name for it ending in _snip_restore)"
        )));
    } else {
        RestoreRequest {
            id: args.id.clone(),
            ..Default::default()
        }
    };
    with_flags(req, args).map_err(RequestError::Flag)
}

/// The tool name of something shaped like a call, `name(…`: a name of ASCII
/// letters, digits, `_`, `-` and `.` right before a `(`.
fn call_name(arg: &str) -> Option<&str> {
    let (name, _) = arg.split_once('(')?;
    let ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    ok.then_some(name)
}

/// `req` with the flags' settings over it.
fn with_flags(mut req: RestoreRequest, args: &Args) -> Result<RestoreRequest> {
    if let Some(r) = &args.bytes {
        let (a, b) = parse_range(r, "--bytes").map_err(anyhow::Error::msg)?;
        (req.mode, req.start, req.end) = (RestoreMode::Bytes, a, b);
    } else if let Some(r) = &args.lines {
        let (a, b) = parse_range(r, "--lines").map_err(anyhow::Error::msg)?;
        (req.mode, req.start, req.end) = (RestoreMode::Lines, a, b);
    } else if let Some(q) = &args.search {
        (req.mode, req.query, req.start, req.end) =
            (RestoreMode::Search, Some(q.clone()), None, None);
    } else if args.full {
        (req.mode, req.start, req.end) = (RestoreMode::Full, None, None);
    }
    if args.field.is_some() {
        req.field.clone_from(&args.field);
    }
    if args.max_bytes.is_some() {
        req.max_bytes = args.max_bytes;
    }
    if args.context.is_some() {
        anyhow::ensure!(
            req.mode == RestoreMode::Search,
            "--context applies to a search only (--search TEXT, or a pasted search call)"
        );
        req.context = args.context;
    }
    if args.align.is_some() {
        anyhow::ensure!(
            req.mode == RestoreMode::Bytes,
            "--align applies to bytes pages only (--bytes A:B, or a pasted bytes call)"
        );
        req.align = Some(snip_store::Align::Token);
    }
    Ok(req)
}
