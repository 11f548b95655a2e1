//! `snip restore`: get back what a marker says was removed.
//!
//! Prints the store's JSON response (see `docs/restore.md`) or, with `--raw`, only
//! the content's exact bytes. Exit status: 0 `ok`; 1 `not_found` or `expired`;
//! 2 `invalid` (and bad flags); 3 `too_large`; 4 `unavailable` or `error`. On any
//! status but `ok`, one line on stderr says what happened and what to do.
use anyhow::Result;
use snip_store::restore::pasted::{
    continue_command, parse_pasted_call, parse_range, pasted_call_id,
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
    let (req, resp) = match request(&args) {
        Ok(req) => {
            let resp = match crate::common::existing_store() {
                Ok(store) => store.restore(&req),
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
        Err(RequestError::Flag(e)) => {
            eprintln!("snip restore: {e:#}");
            return Ok(ExitCode::from(2));
        }
    };
    let mut out = std::io::stdout().lock();
    if args.raw {
        let mut ends_line = true;
        if let Some(bytes) = resp.content_bytes() {
            out.write_all(&bytes)?;
            ends_line = bytes.last().is_none_or(|&b| b == b'\n');
        }
        out.flush()?;
        // The content alone would hide a caveat the note carries (a line longer than
        // the response cap is cut, and the note says where the rest is).
        let caveat = resp
            .note
            .strip_prefix(snip_store::restore::UNTRUSTED_NOTE)
            .map(str::trim)
            .unwrap_or_default();
        let notes = resp.status == RestoreStatus::Ok && (!caveat.is_empty() || resp.next.is_some());
        // In one merged stream (an agent's terminal), a note must not join the
        // original's last line (docs/restore.md, "snip restore").
        if notes && !ends_line && stdout_is_stderr() {
            eprintln!();
        }
        if resp.status == RestoreStatus::Ok && !caveat.is_empty() {
            eprintln!("snip restore: {caveat}");
        }
        if let (RestoreStatus::Ok, Some(next)) = (resp.status, resp.next) {
            eprintln!(
                "snip restore: more follows; continue with {}",
                continue_command(&req, next, snip_hosts::claude_code::shell_quote)
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

/// Whether stdout and stderr are the same file (`2>&1`, a terminal tool's one pipe).
fn stdout_is_stderr() -> bool {
    use rustix::fs::fstat;
    match (fstat(std::io::stdout()), fstat(std::io::stderr())) {
        (Ok(a), Ok(b)) => (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino),
        _ => false,
    }
}

/// Why the arguments make no request: a pasted call that cannot be read, or a flag.
enum RequestError {
    Call(anyhow::Error),
    Flag(anyhow::Error),
}

/// The request the flags describe.
fn request(args: &Args) -> std::result::Result<RestoreRequest, RequestError> {
    let req = if snip_core::marker::strip_call_name(args.id.trim_start()).is_some() {
        parse_pasted_call(&args.id).map_err(|e| RequestError::Call(anyhow::Error::msg(e)))?
    } else {
        RestoreRequest {
            id: args.id.clone(),
            ..Default::default()
        }
    };
    with_flags(req, args).map_err(RequestError::Flag)
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
