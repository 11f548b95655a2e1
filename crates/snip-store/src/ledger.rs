//! The savings ledger: one JSON line per rewrite, in `<store>/ledger.jsonl`.
//!
//! A row is appended under the store lock on a file opened `O_APPEND` and checked
//! like every store file (no symlink, owned by the user, mode 0600), so rows from many
//! processes never interleave; a write that fails part-way is cut back, so the file
//! holds whole rows only. When the file passes [`LEDGER_ROTATE_BYTES`] it is renamed
//! to `ledger.jsonl.1` (replacing the previous one) under the same lock.
//! Reading takes `ledger.jsonl.1` then `ledger.jsonl` and skips lines that do not
//! parse (counted in [`Stats::unreadable_rows`]); a row appended to one cut short by
//! a crash (no newline between them) is still read.

use crate::error::{IoContext, StoreError};
use crate::fsutil::{self, unix_ms};
use crate::store::Store;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::path::PathBuf;
use std::time::SystemTime;

/// How every row's JSON starts (`time_ms` is the first field of [`LedgerRow`]).
const ROW_START: &[u8] = b"{\"time_ms\":";

/// Size at which the ledger is rotated: 5 MiB.
pub const LEDGER_ROTATE_BYTES: u64 = 5 * 1024 * 1024;
/// Longest `source` kept in a row, in characters.
pub const MAX_SOURCE_CHARS: usize = 64;

/// One rewrite (or one call over budget that saved nothing).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerRow {
    /// When, in milliseconds since the Unix epoch (UTC).
    pub time_ms: u64,
    /// Which surface made the call, e.g. `filter`, `run`, `hook:claude-code`.
    pub source: String,
    /// Size of the tool output before, in bytes.
    pub before: u64,
    /// Size of what the model was given, in bytes (equal to `before` when nothing was
    /// saved).
    pub after: u64,
    /// Ids of the rules that changed something, in execution order.
    pub rules: Vec<String>,
    /// The store id of the original, when it was retained.
    pub id: Option<String>,
    /// Whether the original was retained (restorable when the row was written).
    pub retained: bool,
    /// Whether anything lossy (elision) happened.
    #[serde(default)]
    pub lossy: bool,
    /// Why the original was not retained, or why the call failed open, if so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The machine that wrote the row (shared store only: `SNIP_HOST`, else the host
    /// name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl LedgerRow {
    /// The row for one conversation pass that summarised `summarised` older tool
    /// results: bytes of the replaced originals before, of their summaries after.
    /// Each summary quotes its own id, so the row names none. Timestamped now.
    pub fn context_summary(source: &str, before: u64, after: u64, summarised: usize) -> Self {
        LedgerRow {
            time_ms: unix_ms(SystemTime::now()),
            source: source.to_string(),
            before,
            after,
            rules: vec!["context-summary".to_string()],
            id: None,
            retained: true,
            lossy: true,
            note: Some(format!("{summarised} tool results summarised")),
            host: None,
        }
    }

    /// The row for one input too long to hold in memory, compressed as a stream:
    /// `after` bytes written, the input's size from `summary`; the original is not
    /// kept. Timestamped now.
    pub fn streamed(source: &str, after: u64, summary: &snip_core::stream::StreamSummary) -> Self {
        LedgerRow {
            time_ms: unix_ms(SystemTime::now()),
            source: source.to_string(),
            before: summary.bytes_in,
            after,
            rules: summary.rules.iter().map(|r| r.to_string()).collect(),
            id: None,
            retained: false,
            lossy: summary.lossy,
            note: Some("streamed: too long to keep in memory, the original is not kept".into()),
            host: None,
        }
    }

    /// The row for one [`snip_core::compress`] call, timestamped now.
    pub fn from_outcome(outcome: &snip_core::Outcome, source: &str) -> Self {
        let note = match (&outcome.failed_open, &outcome.retention) {
            (Some(why), _) => Some(format!("failed open: {why}")),
            (None, Some(snip_core::Retention::Failed { reason })) => {
                Some(format!("not retained: {reason}"))
            }
            _ => None,
        };
        LedgerRow {
            time_ms: unix_ms(SystemTime::now()),
            source: source.chars().take(MAX_SOURCE_CHARS).collect(),
            before: outcome.original_bytes as u64,
            after: outcome.output.len() as u64,
            rules: outcome.rules.iter().map(|r| r.id.to_string()).collect(),
            id: outcome.id().map(str::to_string),
            retained: outcome.id().is_some(),
            lossy: outcome.lossy,
            note,
            host: None,
        }
    }
}

/// Per-source totals in [`Stats`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SourceStats {
    /// Rows from this source.
    pub rewrites: u64,
    /// Bytes before, summed.
    pub bytes_before: u64,
    /// Bytes after, summed.
    pub bytes_after: u64,
}

/// An honest summary of ledger rows.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Stats {
    /// The lower time bound applied, in ms since the epoch, if any.
    pub since_ms: Option<u64>,
    /// Rows counted: every rewrite, including those that saved nothing.
    pub rewrites: u64,
    /// Rows whose output is smaller than their input.
    pub saved_some: u64,
    /// Rows whose output is not smaller than their input (saved nothing).
    pub saved_nothing: u64,
    /// Rows with a lossy elision.
    pub lossy: u64,
    /// Distinct originals (store ids) the counted rows retained: the same original
    /// rewritten many times counts once.
    pub retained: u64,
    /// Of those, the originals still in the store and within their TTL now.
    pub recoverable: u64,
    /// Bytes before, summed over rows.
    pub bytes_before: u64,
    /// Bytes after, summed over rows.
    pub bytes_after: u64,
    /// `bytes_before - bytes_after`: negative if output grew.
    pub bytes_saved: i64,
    /// `100 * bytes_saved / bytes_before` (0 when nothing was recorded); not rounded.
    pub percent_saved: f64,
    /// Time of the first and last row counted, in ms since the epoch.
    pub first_ms: Option<u64>,
    /// See `first_ms`.
    pub last_ms: Option<u64>,
    /// Totals per source.
    pub by_source: BTreeMap<String, SourceStats>,
    /// Rows each rule changed something in.
    pub by_rule: BTreeMap<String, u64>,
    /// Ledger lines that did not parse (skipped).
    pub unreadable_rows: u64,
}

impl Stats {
    /// Summarizes `rows`; `recoverable(id)` says whether an id can be restored now.
    pub fn from_rows(
        rows: &[LedgerRow],
        since_ms: Option<u64>,
        recoverable: impl Fn(&str) -> bool,
    ) -> Stats {
        let mut s = Stats {
            since_ms,
            ..Stats::default()
        };
        let mut ids = std::collections::BTreeSet::new();
        for r in rows {
            s.rewrites += 1;
            if r.after < r.before {
                s.saved_some += 1;
            } else {
                s.saved_nothing += 1;
            }
            s.lossy += u64::from(r.lossy);
            if let (true, Some(id)) = (r.retained, r.id.as_deref()) {
                ids.insert(id);
            }
            s.bytes_before += r.before;
            s.bytes_after += r.after;
            s.first_ms = Some(s.first_ms.map_or(r.time_ms, |f| f.min(r.time_ms)));
            s.last_ms = Some(s.last_ms.map_or(r.time_ms, |l| l.max(r.time_ms)));
            let e = s.by_source.entry(r.source.clone()).or_default();
            e.rewrites += 1;
            e.bytes_before += r.before;
            e.bytes_after += r.after;
            for rule in &r.rules {
                *s.by_rule.entry(rule.clone()).or_default() += 1;
            }
        }
        s.retained = ids.len() as u64;
        s.recoverable = ids.into_iter().filter(|id| recoverable(id)).count() as u64;
        s.bytes_saved = s.bytes_before as i64 - s.bytes_after as i64;
        s.percent_saved = if s.bytes_before == 0 {
            0.0
        } else {
            100.0 * s.bytes_saved as f64 / s.bytes_before as f64
        };
        s
    }
}

impl Store {
    fn ledger_path(&self) -> PathBuf {
        self.dir().join("ledger.jsonl")
    }

    /// Appends `row` to the ledger. Never fails loudly: errors are dropped (use
    /// [`Store::try_record`] to see them).
    pub fn record(&self, row: &LedgerRow) {
        if self.hold_row(row) {
            return; // appended by `Store::write_pending`
        }
        let _ = self.try_record(row);
    }

    /// Appends `row` to the ledger, rotating it past 5 MiB.
    ///
    /// Whole rows or none: the append is made under the store lock, and when the
    /// write fails part-way (a full disk, a file-size limit) the file is cut back to
    /// its length before it, so a half-written row never reaches the file to swallow
    /// the next one. A file left without its final newline (by a writer killed
    /// mid-row, or an older version) gets one before the row, so the new row stays
    /// whole and on its own line.
    ///
    /// # Errors
    /// [`StoreError::Io`] when the ledger cannot be opened or written (nothing of
    /// the row is left in it), [`StoreError::Refused`] when the ledger or the lock is
    /// not a private file of this user.
    pub fn try_record(&self, row: &LedgerRow) -> Result<(), StoreError> {
        if let Some(r) = self.shared() {
            return r.record(row);
        }
        let path = self.ledger_path();
        let mut line = serde_json::to_vec(row)
            .map_err(|e| StoreError::io("encode a row for", &path, std::io::Error::other(e)))?;
        line.push(b'\n');
        let _lock = self.lock()?;
        let (mut f, before) = fsutil::open_rw_create_len(&path, true)?;
        if before > 0 && !ends_with_newline(&f, before) {
            line.insert(0, b'\n');
        }
        if let Err(e) = f.write_all(&line) {
            // Cut back whatever part of the row reached the file.
            let _ = f.set_len(before);
            return Err(StoreError::io("append to", &path, e));
        }
        let size = before + line.len() as u64;
        drop(f);
        if size > LEDGER_ROTATE_BYTES {
            std::fs::rename(&path, self.dir().join("ledger.jsonl.1")).ctx("rotate", &path)?;
        }
        Ok(())
    }

    /// The ledger rows written at or after `since` (all rows when `None`), oldest
    /// first, with the number of lines that did not parse.
    pub fn ledger_rows(&self, since: Option<SystemTime>) -> (Vec<LedgerRow>, u64) {
        if self.has_pending() {
            let _ = self.flush(); // rows held by write-behind first
        }
        let since_ms = since.map(unix_ms).unwrap_or(0);
        if let Some(r) = self.shared() {
            // Unreachable: no rows, one counted as unreadable.
            return r.ledger_rows(since_ms).unwrap_or((Vec::new(), 1));
        }
        let mut rows = Vec::new();
        let mut bad = 0;
        for name in ["ledger.jsonl.1", "ledger.jsonl"] {
            let path = self.dir().join(name);
            let f = match fsutil::open_private_file(&path) {
                Ok(f) => f,
                Err(StoreError::Io { cause, .. }) if cause.kind() == ErrorKind::NotFound => {
                    continue
                }
                Err(_) => {
                    bad += 1;
                    continue;
                }
            };
            for line in BufReader::new(f).split(b'\n') {
                let Ok(line) = line else {
                    bad += 1;
                    break;
                };
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                let row = match serde_json::from_slice::<LedgerRow>(&line) {
                    Ok(r) => r,
                    Err(_) => {
                        bad += 1;
                        // A row cut short by a crash has no newline: the next row was
                        // appended to it. Rows start with `{"time_ms":`; the last such
                        // start may be a whole row.
                        match memchr::memmem::rfind(&line, ROW_START)
                            .filter(|&k| k > 0)
                            .and_then(|k| serde_json::from_slice::<LedgerRow>(&line[k..]).ok())
                        {
                            Some(r) => r,
                            None => continue,
                        }
                    }
                };
                if row.time_ms >= since_ms {
                    rows.push(row);
                }
            }
        }
        (rows, bad)
    }

    /// The ledger rows written at or after `since` (all rows when `None`).
    pub fn ledger(&self, since: Option<SystemTime>) -> Vec<LedgerRow> {
        self.ledger_rows(since).0
    }

    /// The summary of the ledger since `since`, checking which originals are still
    /// recoverable.
    pub fn stats(&self, since: Option<SystemTime>) -> Stats {
        let (rows, bad) = self.ledger_rows(since);
        let mut s = Stats::from_rows(&rows, since.map(unix_ms), |id| self.contains(id));
        s.unreadable_rows = bad;
        s
    }
}

/// Whether the byte at `len - 1` of `f` is a newline (`true` when it cannot be read:
/// an extra newline would only add a blank line, which readers skip).
fn ends_with_newline(f: &std::fs::File, len: u64) -> bool {
    use std::os::unix::fs::FileExt;
    let mut b = [0u8; 1];
    match f.read_at(&mut b, len - 1) {
        Ok(1) => b[0] == b'\n',
        _ => true,
    }
}

impl Stats {
    /// The text report `snip stats` prints: rewrites, bytes before and after (exact
    /// counts, a percentage never rounded to zero when it is not zero, a loss shown as
    /// negative), what is still recoverable, per source and per rule. `dir` is the
    /// store's directory and `since` the span asked for (as the user wrote it).
    pub fn render(&self, dir: &str, since: Option<&str>) -> String {
        let s = self;
        let mut out = String::new();
        let span = since.map(|d| format!(", last {d}")).unwrap_or_default();
        let _ = writeln!(out, "snip savings ({dir}{span})");
        if s.rewrites == 0 {
            let _ = writeln!(out, "  no rewrites recorded");
            return out;
        }
        let _ = writeln!(
            out,
            "  rewrites      {} ({} smaller, {} saved nothing)",
            thousands(s.rewrites),
            thousands(s.saved_some),
            thousands(s.saved_nothing)
        );
        let change = if s.bytes_saved >= 0 {
            format!("saved {}", thousands(s.bytes_saved as u64))
        } else {
            format!("grew by {}", thousands(s.bytes_saved.unsigned_abs()))
        };
        let _ = writeln!(
            out,
            "  bytes         {} -> {} ({change}, {})",
            thousands(s.bytes_before),
            thousands(s.bytes_after),
            percent(s.percent_saved)
        );
        let _ = writeln!(
            out,
            "  recoverable   {} of {} retained originals still in the store ({} lossy rewrites)",
            thousands(s.recoverable),
            thousands(s.retained),
            thousands(s.lossy)
        );
        for (src, t) in &s.by_source {
            let _ = writeln!(
                out,
                "  {src:<13} {} rewrites, {} -> {} bytes",
                thousands(t.rewrites),
                thousands(t.bytes_before),
                thousands(t.bytes_after)
            );
        }
        if !s.by_rule.is_empty() {
            let rules: Vec<String> = s.by_rule.iter().map(|(r, n)| format!("{r} {n}")).collect();
            let _ = writeln!(out, "  rules         {}", rules.join(", "));
        }
        if s.unreadable_rows > 0 {
            let _ = writeln!(
                out,
                "  ({} unreadable ledger lines skipped)",
                s.unreadable_rows
            );
        }
        out
    }
}

/// `p` with as many decimals as it takes (up to 6) not to show a non-zero value as
/// zero; negative stays negative.
fn percent(p: f64) -> String {
    if p == 0.0 {
        return "0%".into();
    }
    for d in 1..=6 {
        let s = format!("{p:.d$}");
        if s.trim_start_matches('-')
            .bytes()
            .any(|b| (b'1'..=b'9').contains(&b))
        {
            return format!("{s}%");
        }
    }
    format!("{p:e}%")
}

/// `1234567` → `1,234,567`.
use snip_core::util::group_digits as thousands;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_never_rounds_a_non_zero_to_zero() {
        assert_eq!(percent(0.0), "0%");
        assert_eq!(percent(81.04), "81.0%");
        assert_eq!(percent(0.004), "0.004%");
        assert_eq!(percent(-0.004), "-0.004%");
        assert_eq!(percent(-12.5), "-12.5%");
    }

    fn row(before: u64, after: u64, retained: bool) -> LedgerRow {
        LedgerRow {
            time_ms: 1000 + before,
            source: "test".into(),
            before,
            after,
            rules: vec!["ansi-strip".into()],
            id: retained.then(|| "sn_000000000000000000000000".into()),
            retained,
            lossy: false,
            note: None,
            host: None,
        }
    }

    #[test]
    fn stats_count_rewrites_that_saved_nothing_and_losses() {
        let rows = [row(100, 40, true), row(50, 50, false), row(10, 12, false)];
        let s = Stats::from_rows(&rows, None, |_| true);
        assert_eq!(s.rewrites, 3);
        assert_eq!(s.saved_some, 1);
        assert_eq!(s.saved_nothing, 2);
        assert_eq!(s.bytes_before, 160);
        assert_eq!(s.bytes_after, 102);
        assert_eq!(s.bytes_saved, 58);
        assert_eq!(s.retained, 1);
        assert_eq!(s.recoverable, 1);
        // The same original rewritten again is one retained original.
        let again = Stats::from_rows(&[row(100, 40, true), row(100, 40, true)], None, |_| false);
        assert_eq!(
            (again.rewrites, again.retained, again.recoverable),
            (2, 1, 0)
        );
        let loss = Stats::from_rows(&[row(10, 12, false)], None, |_| true);
        assert_eq!(loss.bytes_saved, -2);
        assert!(loss.percent_saved < 0.0);
    }
}
