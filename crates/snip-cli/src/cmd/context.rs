//! `snip context`: the conversation pass over one request read from stdin.
//!
//! Reads a chat request (OpenAI chat completions, OpenAI Responses or Anthropic
//! messages, or a bare messages array) as JSON, replaces older tool results by one-line summaries (see
//! `docs/context.md`), keeps each replaced original in the store, and prints the
//! request to send. Settings come from `SNIP_CONTEXT_*`, the store from `SNIP_STORE*`.
//!
//! Fails open: input that is not JSON, a request of an unknown shape, bad settings or
//! an unavailable store leave the request as it came, byte for byte (with a warning on
//! stderr for bad settings and an unavailable store).
use anyhow::{Context as _, Result};
use snip_context::{compress_request, ContextReport, ContextSettings, Format, FormatChoice};
use snip_store::{LedgerRow, StoreHandle};
use std::io::{Read, Write};
use std::process::ExitCode;

/// The request format, as given on the command line.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FormatArg {
    /// Detect it from the messages' tool shapes.
    #[default]
    Auto,
    /// OpenAI chat completions (`role: "tool"`, assistant `tool_calls`).
    Openai,
    /// Anthropic messages (`tool_use` / `tool_result` blocks).
    Anthropic,
    /// OpenAI Responses (`input` items: `function_call` / `function_call_output`).
    Responses,
}

impl From<FormatArg> for FormatChoice {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Auto => FormatChoice::Auto,
            FormatArg::Openai => FormatChoice::Fixed(Format::OpenAi),
            FormatArg::Anthropic => FormatChoice::Fixed(Format::Anthropic),
            FormatArg::Responses => FormatChoice::Fixed(Format::Responses),
        }
    }
}

/// Arguments of `snip context`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// Request format.
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    pub format: FormatArg,
    /// Also print what the pass did, as one JSON line on stderr.
    #[arg(long)]
    pub report: bool,
}

/// The ledger `source` of rows written by this command.
const LEDGER_SOURCE: &str = "context";

/// Reads the request from stdin and prints the request to send on stdout.
pub fn run(args: Args) -> Result<ExitCode> {
    let mut input = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut input)
        .context("read the request from stdin")?;
    let (output, report) = transform(&input, args.format.into());
    let mut out = std::io::stdout().lock();
    out.write_all(output.as_deref().unwrap_or(&input))?;
    out.flush()?;
    if args.report {
        eprintln!("{}", serde_json::to_string(&report)?);
    }
    Ok(ExitCode::SUCCESS)
}

/// The transformed request bytes (`None`: send the input as it is) and the report.
fn transform(input: &[u8], format: FormatChoice) -> (Option<Vec<u8>>, ContextReport) {
    let skipped = |why: &str| ContextReport {
        skipped: Some(why.to_string()),
        ..ContextReport::default()
    };
    let settings = match ContextSettings::from_lookup(|k| std::env::var(k).ok()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("snip context: {e}; the request is passed through");
            return (None, skipped("bad settings"));
        }
    };
    if !settings.enabled {
        return (None, skipped("disabled"));
    }
    let Ok(request) = serde_json::from_slice::<serde_json::Value>(input) else {
        return (None, skipped("not JSON"));
    };
    let handle = snip_store::open_from_env();
    if let StoreHandle::Unavailable(why) = &handle {
        eprintln!("snip context: store unavailable ({why}); tool results are kept whole");
    }
    let mut put = |bytes: &[u8]| handle.store().and_then(|s| s.put(bytes).ok());
    let out = compress_request(&request, format, &settings, &mut put);
    if !out.changed {
        return (None, out.report);
    }
    let Ok(mut bytes) = serde_json::to_vec(&out.request) else {
        return (None, out.report);
    };
    if input.ends_with(b"\n") {
        bytes.push(b'\n');
    }
    if let Some(store) = handle.store() {
        store.record(&ledger_row(&out.report));
    }
    (Some(bytes), out.report)
}

/// One ledger row for a request whose older tool results were summarised: bytes of the
/// replaced originals before, bytes of their summaries after. One call replaces many
/// originals, so the row names no single id (each summary quotes its own).
fn ledger_row(r: &ContextReport) -> LedgerRow {
    LedgerRow::context_summary(
        LEDGER_SOURCE,
        r.original_bytes as u64,
        r.summary_bytes as u64,
        r.summarised,
    )
}
