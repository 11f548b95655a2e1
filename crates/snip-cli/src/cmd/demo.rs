//! `snip demo`: the main job on real captures bundled into the binary.
//!
//! For each capture: bytes before → after, the rules that fired, and a short excerpt of
//! what the model would read; then the totals. Originals go to the configured store
//! (so the restore calls printed in the markers work), tagged `demo` in the ledger.

use anyhow::Result;
use std::fmt::Write as _;
use std::process::ExitCode;

/// Arguments of `snip demo`.
#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// Lines of output excerpt shown per capture.
    #[arg(long, default_value_t = 6)]
    pub lines: usize,
    /// Show one capture (by name, e.g. `git-clone-progress-tty`) and print its whole output.
    #[arg(long)]
    pub only: Option<String>,
}

macro_rules! capture {
    ($name:literal, $what:literal) => {
        (
            $name,
            $what,
            include_bytes!(concat!("../../../../fixtures/corpus/", $name, ".txt")).as_slice(),
        )
    };
}

/// The bundled captures: (name, command, bytes). Real output of real programs.
pub const CAPTURES: &[(&str, &str, &[u8])] = &[
    capture!("tqdm-single-tty", "python tqdm_single.py (80 redraws)"),
    capture!(
        "git-clone-progress-tty",
        "git clone --progress (5,928 objects)"
    ),
    capture!("pip-download-tty", "pip download scipy pyarrow (rich bars)"),
    capture!(
        "rich-progress-tty",
        "rich Live: 4 bars + log lines between redraws"
    ),
    capture!(
        "apt-install-ffmpeg-tty",
        "apt install -y ffmpeg (status line, scroll region)"
    ),
    capture!(
        "pytest-2000-one-fail-tty",
        "pytest: 2,000 tests, one failure"
    ),
    capture!(
        "cargo-test-fail-notty",
        "cargo test: 1,400 ok lines, a panic in the middle"
    ),
    capture!(
        "python-traceback-deep-recursion-notty",
        "Python: 1,000-frame recursion traceback"
    ),
    capture!(
        "http-server-access-log-notty",
        "http.server log: 3,000 health checks"
    ),
    capture!(
        "cargo-metadata-json-notty",
        "cargo metadata: one 500 KB JSON line"
    ),
    capture!("git-diff-requests-notty", "git diff (never touched)"),
];

/// Runs the demo.
pub fn run(args: Args) -> Result<ExitCode> {
    let config = crate::common::core_config()?;
    let store = snip_store::open_from_env();
    let mut out = String::new();
    let (mut before, mut after) = (0usize, 0usize);
    let mut shown = 0;
    for (name, what, bytes) in CAPTURES {
        if args.only.as_deref().is_some_and(|o| o != *name) {
            continue;
        }
        shown += 1;
        let o = snip_store::compress_recorded(bytes, &config, &store, "demo");
        before += bytes.len();
        after += o.output.len();
        let pct = 100.0 * (1.0 - o.output.len() as f64 / bytes.len() as f64);
        let _ = writeln!(out, "── {name}: {what}");
        let _ = writeln!(
            out,
            "   {} → {} bytes ({pct:.1}% smaller)",
            group(bytes.len()),
            group(o.output.len())
        );
        let rules: Vec<String> = o
            .rules
            .iter()
            .map(|r| {
                let counts: Vec<String> = r
                    .counts
                    .iter()
                    .filter(|(_, v)| *v > 0)
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                format!("{} ({})", r.id, counts.join(", "))
            })
            .collect();
        let _ = writeln!(
            out,
            "   rules: {}",
            if rules.is_empty() {
                "none".into()
            } else {
                rules.join("; ")
            }
        );
        let _ = writeln!(out, "   before: {}", excerpt(bytes, 110));
        let text = String::from_utf8_lossy(&o.output);
        if args.only.is_some() {
            let _ = writeln!(out, "   after:\n{text}");
        } else {
            let _ = writeln!(out, "   after (last {} lines):", args.lines);
            let lines: Vec<&str> = text.lines().collect();
            for l in &lines[lines.len().saturating_sub(args.lines)..] {
                let _ = writeln!(out, "   │ {}", cut(l.trim_end_matches('\r'), 150));
            }
        }
        out.push('\n');
    }
    if shown == 0 {
        let names: Vec<&str> = CAPTURES.iter().map(|c| c.0).collect();
        anyhow::bail!(
            "no bundled capture named {:?}; try one of: {}",
            args.only.unwrap_or_default(),
            names.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "total: {} → {} bytes ({:.1}% smaller) over {shown} real captures",
        group(before),
        group(after),
        100.0 * (1.0 - after as f64 / before.max(1) as f64)
    );
    if let Some(s) = store.store() {
        let _ = writeln!(out, "originals kept in {}; get any elided part back with the restore call its marker quotes, e.g. `snip restore ID --lines A:B`", s.dir().display());
    }
    crate::common::print(out)?;
    Ok(ExitCode::SUCCESS)
}

/// The first `n` characters of a capture, with control bytes made visible.
fn excerpt(b: &[u8], n: usize) -> String {
    let s = String::from_utf8_lossy(&b[..b.len().min(4 * n)]);
    let mut out = String::new();
    for c in s.chars().take(n) {
        match c {
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            '\x1b' => out.push_str("\\e"),
            c if c.is_control() => out.push('·'),
            c => out.push(c),
        }
    }
    out.push('…');
    out
}

fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut t: String = s.chars().take(n).collect();
    t.push('…');
    t
}

/// `12345` → `12,345`.
fn group(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
