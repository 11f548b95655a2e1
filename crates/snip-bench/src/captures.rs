//! The bundled real captures, embedded in the binary, with the clue and exit status
//! their `MANIFEST.tsv` names. Two sets, reported apart so that the first one's figures
//! stay comparable over time:
//! - [`Set::Old`]: the 26 captures of `fixtures/corpus/`, the ones the rules were tuned
//!   on;
//! - [`Set::New`]: the captures of `fixtures/corpus-new/` (made by
//!   `scripts/capture-corpus.sh`), a check of how well the rules generalise. Their
//!   manifest has a `known_failures` column: the checks each capture fails today.
//!
//! `MANIFEST.tsv` is plain TSV without quoting (fields contain `"`): lines are split on
//! tabs and the columns are found by their header names.

use crate::Kind;

/// One embedded capture file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CaptureFile {
    /// File name under `fixtures/corpus/`.
    pub file: &'static str,
    /// How the output is judged: `Json` must stay valid JSON, `Diff` byte-identical.
    pub kind: Kind,
    /// The exact bytes the tool returned (`\r` and ANSI escapes intact).
    pub bytes: &'static [u8],
}

/// Which set of captures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Set {
    /// `fixtures/corpus/`: the 26 captures the rules were tuned on.
    Old,
    /// `fixtures/corpus-new/`: captures the rules were not tuned on.
    New,
}

impl Set {
    /// The set's embedded files, in manifest order.
    pub fn files(self) -> &'static [CaptureFile] {
        match self {
            Set::Old => FILES,
            Set::New => NEW_FILES,
        }
    }

    /// The set's embedded manifest.
    pub fn manifest(self) -> &'static str {
        match self {
            Set::Old => MANIFEST_TSV,
            Set::New => NEW_MANIFEST_TSV,
        }
    }
}

macro_rules! capture {
    ($file:literal, $kind:expr) => {
        capture!("corpus", $file, $kind)
    };
    ($dir:literal, $file:literal, $kind:expr) => {
        CaptureFile {
            file: $file,
            kind: $kind,
            bytes: include_bytes!(concat!("../../../fixtures/", $dir, "/", $file)),
        }
    };
}

/// Every capture of `fixtures/corpus/`, in manifest order.
pub const FILES: &[CaptureFile] = &[
    capture!("apt-install-ffmpeg-tty.txt", Kind::Text),
    capture!("cargo-build-tty.txt", Kind::Text),
    capture!("cargo-metadata-json-notty.txt", Kind::Json),
    capture!("cargo-test-fail-notty.txt", Kind::Text),
    capture!("cat-unix2dos-crlf-notty.txt", Kind::Text),
    capture!("curl-download-tty.txt", Kind::Text),
    capture!("dd-status-progress-tty.txt", Kind::Text),
    capture!("git-clone-progress-tty.txt", Kind::Text),
    capture!("git-diff-requests-notty.txt", Kind::Diff),
    capture!("http-server-access-log-notty.txt", Kind::Text),
    capture!("ls-laR-site-packages-notty.txt", Kind::Text),
    capture!("npm-install-postinstall-fail-tty.txt", Kind::Text),
    capture!("npm-install-tty.txt", Kind::Text),
    capture!("pip-download-tty.txt", Kind::Text),
    capture!("pip-inspect-json-notty.txt", Kind::Json),
    capture!("pip-install-tty.txt", Kind::Text),
    capture!("progress-with-errors-tty.txt", Kind::Text),
    capture!("pytest-2000-one-fail-tty.txt", Kind::Text),
    capture!("python-traceback-deep-recursion-notty.txt", Kind::Text),
    capture!("rich-progress-tty.txt", Kind::Text),
    capture!("rsync-progress-tty.txt", Kind::Text),
    capture!("rustc-error-flood-tty.txt", Kind::Text),
    capture!("tqdm-interleaved-tty.txt", Kind::Text),
    capture!("tqdm-single-notty.txt", Kind::Text),
    capture!("tqdm-single-tty.txt", Kind::Text),
    capture!("tqdm-unicode-tty.txt", Kind::Text),
];

/// Every capture of `fixtures/corpus-new/`, in manifest order.
pub const NEW_FILES: &[CaptureFile] = &[
    capture!(
        "corpus-new",
        "apt-get-install-simulate-notty.txt",
        Kind::Text
    ),
    capture!("corpus-new", "bootstrap-min-css-notty.txt", Kind::Text),
    capture!("corpus-new", "cargo-clippy-warnings-tty.txt", Kind::Text),
    capture!("corpus-new", "cargo-lock-cat-notty.txt", Kind::Text),
    capture!("corpus-new", "cargo-tree-snip-notty.txt", Kind::Text),
    capture!("corpus-new", "csv-record-rich-notty.txt", Kind::Text),
    capture!("corpus-new", "curl-verbose-404-tty.txt", Kind::Text),
    capture!("corpus-new", "curl-verbose-listing-notty.txt", Kind::Text),
    capture!("corpus-new", "dpkg-l-notty.txt", Kind::Text),
    capture!("corpus-new", "du-node-modules-notty.txt", Kind::Text),
    capture!("corpus-new", "eslint-express-notty.txt", Kind::Text),
    capture!("corpus-new", "find-node-modules-dts-notty.txt", Kind::Text),
    capture!("corpus-new", "git-blame-lib-notty.txt", Kind::Text),
    capture!("corpus-new", "git-diff-small-tty.txt", Kind::Diff),
    capture!("corpus-new", "git-log-p-snip-notty.txt", Kind::Diff),
    capture!("corpus-new", "git-log-stat-tty.txt", Kind::Text),
    capture!("corpus-new", "git-status-dirty-tty.txt", Kind::Text),
    capture!("corpus-new", "go-test-fail-notty.txt", Kind::Text),
    capture!("corpus-new", "go-test-fail-tty.txt", Kind::Text),
    capture!("corpus-new", "jest-fail-tty.txt", Kind::Text),
    capture!("corpus-new", "jest-verbose-fail-notty.txt", Kind::Text),
    capture!("corpus-new", "lodash-min-js-notty.txt", Kind::Text),
    capture!("corpus-new", "mypy-strict-requests-notty.txt", Kind::Text),
    capture!("corpus-new", "npm-install-eresolve-notty.txt", Kind::Text),
    capture!("corpus-new", "npm-ls-all-json-notty.txt", Kind::Json),
    capture!("corpus-new", "npm-ls-all-tty.txt", Kind::Text),
    capture!("corpus-new", "npm-view-express-json-notty.txt", Kind::Json),
    capture!("corpus-new", "npm-view-webpack-json-notty.txt", Kind::Json),
    capture!("corpus-new", "package-lock-cat-notty.txt", Kind::Json),
    capture!(
        "corpus-new",
        "pip-resolution-impossible-notty.txt",
        Kind::Text
    ),
    capture!("corpus-new", "pip-show-files-rich-notty.txt", Kind::Text),
    capture!("corpus-new", "pytest-params-fail-tty.txt", Kind::Text),
    capture!("corpus-new", "pytest-verbose-fail-notty.txt", Kind::Text),
    capture!(
        "corpus-new",
        "python-requests-connrefused-notty.txt",
        Kind::Text
    ),
    capture!("corpus-new", "ruff-check-requests-notty.txt", Kind::Text),
    capture!("corpus-new", "sqlite-box-tty.txt", Kind::Text),
    capture!("corpus-new", "sqlite-column-notty.txt", Kind::Text),
    capture!("corpus-new", "syslog-http-server-notty.txt", Kind::Text),
    capture!("corpus-new", "tree-express-tty.txt", Kind::Text),
    capture!("corpus-new", "tsc-checkjs-express-notty.txt", Kind::Text),
    capture!("corpus-new", "tsc-checkjs-express-tty.txt", Kind::Text),
    capture!("corpus-new", "vite-build-tty.txt", Kind::Text),
    capture!("corpus-new", "vitest-run-fail-tty.txt", Kind::Text),
    capture!("corpus-new", "vitest-verbose-fail-notty.txt", Kind::Text),
    capture!("corpus-new", "webpack-build-notty.txt", Kind::Text),
];

/// The corpus manifest, embedded verbatim.
pub const MANIFEST_TSV: &str = include_str!("../../../fixtures/corpus/MANIFEST.tsv");

/// The manifest of `fixtures/corpus-new/`, embedded verbatim.
pub const NEW_MANIFEST_TSV: &str = include_str!("../../../fixtures/corpus-new/MANIFEST.tsv");

/// One check a capture fails today, from the manifest's `known_failures` column.
///
/// The column holds `;`-separated entries `CHECK:CLASS` or `CHECK<=LIMIT:CLASS`, e.g.
/// `budget<=210000:json-object-members-never-elided`. `CHECK` is one of the check names
/// of `crates/snip-bench/tests/captures_new.rs` (`clue`, `json`, `diff`, `budget`,
/// `grew`, `idempotent`); `LIMIT` (bytes, for `budget`) is the largest output still
/// accepted, so that a further regression fails; `CLASS` names the failure class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownFailure {
    /// The check's name.
    pub check: String,
    /// For `budget`: the largest output in bytes still accepted.
    pub limit: Option<u64>,
    /// The failure class.
    pub class: String,
}

/// Parses a `known_failures` cell (empty: none).
///
/// # Errors
/// A message naming the entry that does not parse.
pub fn parse_known_failures(cell: &str) -> Result<Vec<KnownFailure>, String> {
    cell.split(';')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(|e| {
            let (head, class) = e
                .split_once(':')
                .ok_or_else(|| format!("known failure `{e}` has no `:CLASS`"))?;
            let (check, limit) = match head.split_once("<=") {
                Some((c, l)) => (
                    c,
                    Some(
                        l.parse()
                            .map_err(|_| format!("known failure `{e}`: bad limit"))?,
                    ),
                ),
                None => (head, None),
            };
            if check.is_empty() || class.is_empty() {
                return Err(format!("known failure `{e}` is incomplete"));
            }
            Ok(KnownFailure {
                check: check.to_string(),
                limit,
                class: class.to_string(),
            })
        })
        .collect()
}

/// One manifest row: the columns the bench uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestRow {
    /// `file`: the capture's file name.
    pub file: String,
    /// `clue`: an exact substring that must stay visible (after ANSI stripping) or be
    /// recoverable.
    pub clue: String,
    /// `exit_code`: the command's exit status (negative: killed by that signal).
    pub exit_code: i32,
    /// `command`: the command line that produced the capture (empty when the manifest
    /// has no such column).
    pub command: String,
    /// `known_failures`: the checks this capture fails today (empty when the manifest
    /// has no such column).
    pub known_failures: Vec<KnownFailure>,
}

/// Parses `MANIFEST.tsv` (header line first; columns found by name).
///
/// # Errors
/// A message naming the missing column or the line that does not parse.
pub fn parse_manifest(tsv: &str) -> Result<Vec<ManifestRow>, String> {
    let mut lines = tsv.lines();
    let header: Vec<&str> = lines.next().ok_or("empty manifest")?.split('\t').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or_else(|| format!("manifest has no `{name}` column"))
    };
    let (file, clue, exit) = (col("file")?, col("clue")?, col("exit_code")?);
    let command = col("command").ok();
    let known = col("known_failures").ok();
    let mut rows = Vec::new();
    for (i, line) in lines.enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split('\t').collect();
        let get = |c: usize| {
            f.get(c)
                .copied()
                .ok_or_else(|| format!("manifest line {} has too few columns", i + 2))
        };
        rows.push(ManifestRow {
            file: get(file)?.to_string(),
            clue: get(clue)?.to_string(),
            exit_code: get(exit)?
                .trim()
                .parse()
                .map_err(|_| format!("manifest line {}: exit_code is not a number", i + 2))?,
            command: match command {
                Some(c) => get(c)?.to_string(),
                None => String::new(),
            },
            known_failures: match known {
                // A trailing empty cell may be dropped by editors: treat it as empty.
                Some(c) => parse_known_failures(f.get(c).copied().unwrap_or(""))
                    .map_err(|e| format!("manifest line {}: {e}", i + 2))?,
                None => Vec::new(),
            },
        });
    }
    Ok(rows)
}

/// One capture ready to bench: its bytes, kind and manifest row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    /// The embedded file.
    pub file: CaptureFile,
    /// Its manifest row.
    pub manifest: ManifestRow,
}

/// Every embedded capture of the old set joined with its manifest row, in manifest
/// order.
///
/// # Errors
/// When the embedded manifest does not parse, or names a file that is not embedded (or
/// the other way round) — which a test rules out for the committed corpus.
pub fn all() -> Result<Vec<Capture>, String> {
    of(Set::Old)
}

/// Every embedded capture of `set` joined with its manifest row, in manifest order.
///
/// # Errors
/// As [`all`].
pub fn of(set: Set) -> Result<Vec<Capture>, String> {
    let rows = parse_manifest(set.manifest())?;
    let files = set.files();
    if rows.len() != files.len() {
        return Err(format!(
            "manifest lists {} captures, {} are embedded",
            rows.len(),
            files.len()
        ));
    }
    rows.into_iter()
        .map(|row| {
            let file = files
                .iter()
                .find(|f| f.file == row.file)
                .ok_or_else(|| format!("capture {} is not embedded", row.file))?;
            Ok(Capture {
                file: *file,
                manifest: row,
            })
        })
        .collect()
}
