//! The bundled real captures (`fixtures/corpus/`), embedded in the binary, with the
//! clue and exit status their `MANIFEST.tsv` names.
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

macro_rules! capture {
    ($file:literal, $kind:expr) => {
        CaptureFile {
            file: $file,
            kind: $kind,
            bytes: include_bytes!(concat!("../../../fixtures/corpus/", $file)),
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

/// The corpus manifest, embedded verbatim.
pub const MANIFEST_TSV: &str = include_str!("../../../fixtures/corpus/MANIFEST.tsv");

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

/// Every embedded capture joined with its manifest row, in manifest order.
///
/// # Errors
/// When the embedded manifest does not parse, or names a file that is not embedded (or
/// the other way round) — which a test rules out for the committed corpus.
pub fn all() -> Result<Vec<Capture>, String> {
    let rows = parse_manifest(MANIFEST_TSV)?;
    if rows.len() != FILES.len() {
        return Err(format!(
            "manifest lists {} captures, {} are embedded",
            rows.len(),
            FILES.len()
        ));
    }
    rows.into_iter()
        .map(|row| {
            let file = FILES
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
