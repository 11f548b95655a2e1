//! A diff over its own budget (`SNIP_DIFF_MAX_BYTES`), shortened by whole hunks.
//!
//! **What it does.** Splits a unified or combined diff (one patch, `git show`, `git log
//! -p`, a mailbox of patches) into segments: commit headers and other text outside
//! hunks, file headers (`diff …`, `index …`, `--- …`, `+++ …`) and hunks (a `@@`/`@@@`
//! header and its body, ended by its counts). Commit headers and other text are always
//! kept. Then, in this order and while the estimated output fits the budget: each
//! file's header with its first hunk, hunks with salient content (conflict markers,
//! error words), the remaining hunks. What is left out becomes one marker per run of
//! consecutive elided segments, naming each file and each hunk header with its `+N -M`
//! counts and quoting the restore call for the run's exact bytes. When the output with
//! such markers is over the budget, every marker takes the first shorter form with
//! which it fits (each file with its hunk count and summed `+N -M`; the first three
//! files and `and K more files (+A -B)`; counts only), the hunks kept chosen again
//! against the markers' exact sizes; counts only when commit headers alone are over it.
//!
//! **Guarantee.** Every kept byte is at its place, unchanged (escapes included): kept
//! lines are byte-identical, kept hunks are complete (their `@@` counts match), and a
//! file section whose header and hunks are kept applies as it did. Normal and context
//! diffs, which have no `@@` hunks, are never shortened.

use crate::marker::{Marker, Recovery, RestoreCall};
use crate::rule::RuleId;
use std::fmt::Write as _;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Commit headers and any text outside files and hunks: always kept.
    Other,
    /// A file's header lines.
    FileHead,
    Hunk,
}

#[derive(Debug)]
struct Seg {
    kind: Kind,
    /// Byte range, half-open.
    start: usize,
    end: usize,
    /// Line range, 0-based, inclusive.
    first: usize,
    last: usize,
    /// The file it belongs to (index into `files`), for file headers and hunks.
    file: usize,
    /// A hunk's header, `@@ … @@` (or `@@@ … @@@`), without the text after it.
    label: String,
    plus: u64,
    minus: u64,
    salient: bool,
}

struct File {
    name: String,
    head: Option<usize>,
    hunks: Vec<usize>,
}

/// How a hunk's end is found.
enum Body {
    /// Unified: old and new lines still to come.
    Counts { old: u64, new: u64 },
    /// Combined (`@@@`): every line that starts with ` `, `+`, `-` or `\`.
    Prefixed,
}

/// What shortening produced.
pub(crate) struct Shortened {
    pub output: Vec<u8>,
    pub hunks_elided: u64,
    pub files_elided: u64,
}

/// `@@ -a[,b] +c[,d] @@`: the old and new line counts.
fn unified_counts(t: &[u8]) -> Option<(u64, u64)> {
    let s = std::str::from_utf8(t.strip_prefix(b"@@ -")?).ok()?;
    let (ranges, _) = s.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let count = |r: &str| -> Option<u64> {
        match r.split_once(',') {
            Some((a, b)) => {
                a.parse::<u64>().ok()?;
                b.parse().ok()
            }
            None => r.parse::<u64>().ok().map(|_| 1),
        }
    };
    Some((count(old)?, count(new)?))
}

/// The `@@ … @@` part of a hunk header (what a marker names).
fn hunk_label(t: &[u8]) -> String {
    let at = if t.starts_with(b"@@@") { 3 } else { 2 };
    let close = &t[..at];
    let end = memchr::memmem::find(&t[at..], close).map_or(t.len(), |i| at + i + at);
    String::from_utf8_lossy(&t[..end]).into_owned()
}

/// A file's name from its `diff --git a/x b/y`, `diff --cc x` or `+++ b/y` line.
fn file_name(t: &[u8]) -> Option<String> {
    let s = String::from_utf8_lossy(t);
    if let Some(r) = s.strip_prefix("diff --git ") {
        return Some(match r.rfind(" b/") {
            Some(i) => r[i + 3..].to_string(),
            None => r.to_string(),
        });
    }
    for p in ["diff --cc ", "diff --combined "] {
        if let Some(r) = s.strip_prefix(p) {
            return Some(r.to_string());
        }
    }
    if let Some(r) = s.strip_prefix("+++ ") {
        let r = r.split('\t').next().unwrap_or(r);
        return Some(r.strip_prefix("b/").unwrap_or(r).to_string());
    }
    None
}

/// Splits `input` into segments and files.
fn segments(input: &[u8]) -> (Vec<Seg>, Vec<File>) {
    let mut segs: Vec<Seg> = Vec::new();
    let mut files: Vec<File> = Vec::new();
    let mut body: Option<Body> = None;
    let mut pos = 0;
    let mut line_no = 0;
    let mut stripped = Vec::new();
    while pos < input.len() {
        let end = memchr::memchr(b'\n', &input[pos..]).map_or(input.len(), |i| pos + i + 1);
        let raw = &input[pos..end];
        let raw = raw.strip_suffix(b"\n").unwrap_or(raw);
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let t: &[u8] = if memchr::memchr(0x1b, raw).is_some() {
            stripped.clear();
            crate::escape::strip_into(raw, &mut stripped);
            &stripped
        } else {
            raw
        };
        // Inside a hunk: does this line belong to it?
        let mut in_hunk = false;
        if let Some(b) = &mut body {
            match b {
                Body::Counts { old, new } => {
                    let c = t.first().copied();
                    if *old == 0 && *new == 0 {
                        in_hunk = c == Some(b'\\');
                    } else {
                        in_hunk = true;
                        match c {
                            Some(b'+') => *new = new.saturating_sub(1),
                            Some(b'-') => *old = old.saturating_sub(1),
                            Some(b'\\') => {}
                            Some(b' ') | None => {
                                *old = old.saturating_sub(1);
                                *new = new.saturating_sub(1);
                            }
                            _ => in_hunk = false,
                        }
                    }
                }
                Body::Prefixed => {
                    in_hunk = matches!(t.first(), Some(b' ' | b'+' | b'-' | b'\\'))
                        && !t.starts_with(b"--- ")
                        && !t.starts_with(b"+++ ");
                }
            }
        }
        if in_hunk {
            let s = segs.last_mut().expect("a hunk is open");
            s.end = end;
            s.last = line_no;
            let marks = if t.starts_with(b"++") || t.starts_with(b"+ ") || t.starts_with(b" +") {
                // Combined: a column of `+` (and `-`) per parent.
                (
                    t.iter().take(2).any(|&c| c == b'+'),
                    t.iter().take(2).any(|&c| c == b'-'),
                )
            } else {
                (t.first() == Some(&b'+'), t.first() == Some(&b'-'))
            };
            s.plus += u64::from(marks.0);
            s.minus += u64::from(marks.1);
            if !s.salient
                && (t.windows(7).any(|w| w == b"<<<<<<<" || w == b">>>>>>>")
                    || crate::salience::salience(t) > 0)
            {
                s.salient = true;
            }
        } else {
            body = None;
            let hunk = t.starts_with(b"@@ -") || t.starts_with(b"@@@ -");
            let file_line = t.starts_with(b"diff ")
                || (t.starts_with(b"--- ")
                    && !segs.last().is_some_and(|s| s.kind == Kind::FileHead));
            let commit = t.starts_with(b"commit ") || t.starts_with(b"From ");
            let file = files.len().saturating_sub(1);
            if hunk {
                body = Some(match unified_counts(t) {
                    Some((old, new)) if !t.starts_with(b"@@@") => Body::Counts { old, new },
                    _ => Body::Prefixed,
                });
                let idx = segs.len();
                if files.is_empty() {
                    files.push(File {
                        name: String::new(),
                        head: None,
                        hunks: Vec::new(),
                    });
                }
                let file = files.len() - 1;
                files[file].hunks.push(idx);
                segs.push(Seg {
                    kind: Kind::Hunk,
                    start: pos,
                    end,
                    first: line_no,
                    last: line_no,
                    file,
                    label: hunk_label(t),
                    plus: 0,
                    minus: 0,
                    salient: false,
                });
            } else if file_line {
                files.push(File {
                    name: file_name(t).unwrap_or_default(),
                    head: Some(segs.len()),
                    hunks: Vec::new(),
                });
                segs.push(Seg {
                    kind: Kind::FileHead,
                    start: pos,
                    end,
                    first: line_no,
                    last: line_no,
                    file: files.len() - 1,
                    label: String::new(),
                    plus: 0,
                    minus: 0,
                    salient: false,
                });
            } else {
                let last_kind = segs.last().map(|s| s.kind);
                // A file header goes on until its first hunk, or a commit line.
                let continues = match last_kind {
                    Some(Kind::FileHead) => !commit,
                    Some(Kind::Other) => true,
                    _ => false,
                };
                if continues {
                    let s = segs.last_mut().expect("checked");
                    s.end = end;
                    s.last = line_no;
                    if s.kind == Kind::FileHead && t.starts_with(b"+++ ") {
                        if let Some(n) = file_name(t) {
                            if files[file].name.is_empty() || !raw.starts_with(b"diff ") {
                                files[file].name = n;
                            }
                        }
                    }
                } else {
                    segs.push(Seg {
                        kind: Kind::Other,
                        start: pos,
                        end,
                        first: line_no,
                        last: line_no,
                        file: usize::MAX,
                        label: String::new(),
                        plus: 0,
                        minus: 0,
                        salient: false,
                    });
                }
            }
        }
        pos = end;
        line_no += 1;
    }
    (segs, files)
}

/// Room a marker takes besides its list of names, bytes (the counts, the rule, the
/// ranges and a restore call with a store id).
const MARKER_OVERHEAD: usize = 260;

/// What a segment adds to a marker's list when it is elided, bytes.
fn label_bytes(s: &Seg, files: &[File]) -> usize {
    // As [`render`] writes them: ` @@ … @@ +N -M`, and `; name (header)`.
    let digits = |n: u64| n.checked_ilog10().unwrap_or(0) as usize + 1;
    match s.kind {
        Kind::Hunk => s.label.len() + 5 + digits(s.plus) + digits(s.minus),
        Kind::FileHead => files[s.file].name.len() + 11,
        Kind::Other => 0,
    }
}

/// `input` (a diff over `budget` bytes) shortened by whole hunks, with markers quoting
/// the store id `id`; `None` when it has no hunks to leave out, or the result would not
/// be shorter.
///
/// Markers name every hunk header ([`Detail::Hunks`]) when the output then fits the
/// budget. Otherwise they degrade, the whole output at once, to the first form with
/// which it fits: each file with its counts, the first files and a count of the rest,
/// counts only; each time the hunks kept are chosen again against the markers' exact
/// sizes. When none fits (commit headers alone over the budget), counts only.
pub(crate) fn shorten(input: &[u8], budget: usize, id: &str) -> Option<Shortened> {
    let (segs, files) = segments(input);
    if !segs.iter().any(|s| s.kind == Kind::Hunk) {
        return None;
    }
    let units = units(&segs, &files);
    let keep = select_estimated(&segs, &files, &units, budget);
    let mut out = render(input, &segs, &files, &keep, Detail::Hunks, id);
    if out.output.len() > budget {
        for detail in [Detail::Files, Detail::FirstFiles, Detail::Counts] {
            let keep = select_exact(&segs, &files, &units, budget, detail, id);
            out = render(input, &segs, &files, &keep, detail, id);
            if out.output.len() <= budget {
                break;
            }
        }
    }
    (out.output.len() < input.len()).then_some(out)
}

/// Units to keep, in priority order: a file's header with its first hunk, salient
/// hunks, then the other hunks, each in input order.
fn units(segs: &[Seg], files: &[File]) -> Vec<Vec<usize>> {
    let mut units: Vec<Vec<usize>> = Vec::new();
    for f in files {
        let mut u: Vec<usize> = f.head.into_iter().collect();
        u.extend(f.hunks.first());
        units.push(u);
    }
    for (i, s) in segs.iter().enumerate() {
        if s.kind == Kind::Hunk && s.salient {
            units.push(vec![i]);
        }
    }
    for f in files {
        units.extend(f.hunks.iter().skip(1).map(|&h| vec![h]));
    }
    units
}

/// The segments of unit `u` not kept yet, with its file's header when a hunk would be
/// kept without it (a hunk is kept only with its file's header), in input order.
fn unit_segments(u: &[usize], segs: &[Seg], files: &[File], keep: &[bool]) -> Vec<usize> {
    let mut new: Vec<usize> = u.iter().copied().filter(|&i| !keep[i]).collect();
    if new.is_empty() {
        return new;
    }
    if let Some(h) = files[segs[new[0]].file]
        .head
        .filter(|&h| !keep[h] && !new.contains(&h))
    {
        if segs[new[0]].kind == Kind::Hunk {
            new.insert(0, h);
        }
    }
    new.sort_unstable();
    new
}

/// The segments kept with markers naming every hunk header, chosen against an
/// estimate of the markers' sizes ([`MARKER_OVERHEAD`], [`label_bytes`]).
fn select_estimated(
    segs: &[Seg],
    files: &[File],
    units: &[Vec<usize>],
    budget: usize,
) -> Vec<bool> {
    let mut keep: Vec<bool> = segs.iter().map(|s| s.kind == Kind::Other).collect();
    let mut kept: usize = segs
        .iter()
        .filter(|s| s.kind == Kind::Other)
        .map(|s| s.end - s.start)
        .sum();
    let mut labels: usize = segs.iter().map(|s| label_bytes(s, files)).sum();
    let mut runs = runs_of(&keep);
    for u in units {
        let new = unit_segments(u, segs, files, &keep);
        if new.is_empty() {
            continue;
        }
        let bytes: usize = new.iter().map(|&i| segs[i].end - segs[i].start).sum();
        let freed: usize = new.iter().map(|&i| label_bytes(&segs[i], files)).sum();
        let estimate = kept + bytes + labels - freed + (runs + new.len()) * MARKER_OVERHEAD;
        if estimate > budget {
            continue;
        }
        for &i in &new {
            keep[i] = true;
        }
        kept += bytes;
        labels -= freed;
        runs = runs_of(&keep);
    }
    keep
}

/// The segments kept with markers of `detail`: a unit is kept when the output, its
/// markers at their exact sizes, still fits the budget with it.
fn select_exact(
    segs: &[Seg],
    files: &[File],
    units: &[Vec<usize>],
    budget: usize,
    detail: Detail,
    id: &str,
) -> Vec<bool> {
    let mut keep: Vec<bool> = segs.iter().map(|s| s.kind == Kind::Other).collect();
    let marker = |run: &[Seg]| run_marker(run, files, detail, id).len() + 1;
    let bytes = |r: std::ops::Range<usize>| segs[r.end - 1].end - segs[r.start].start;
    // A run is elided only where its marker is shorter than it: else it is kept (its
    // hunks have their file's header in it or kept before it).
    let cost = |r: std::ops::Range<usize>| -> (usize, bool) {
        let (m, b) = (marker(&segs[r.clone()]), bytes(r));
        if b <= m {
            (b, true)
        } else {
            (m, false)
        }
    };
    let mut total = 0;
    let mut i = 0;
    while i < segs.len() {
        if keep[i] {
            total += segs[i].end - segs[i].start;
            i += 1;
            continue;
        }
        let from = i;
        while i < segs.len() && !keep[i] {
            i += 1;
        }
        let (c, kept) = cost(from..i);
        total += c;
        if kept {
            keep[from..i].fill(true);
        }
    }
    for u in units {
        let new = unit_segments(u, segs, files, &keep);
        let (Some(&first), Some(&last)) = (new.first(), new.last()) else {
            continue;
        };
        // The run of elided segments around the unit, and its pieces once it is kept.
        let mut a = first;
        while a > 0 && !keep[a - 1] {
            a -= 1;
        }
        let mut b = first + 1;
        while b < segs.len() && !keep[b] {
            b += 1;
        }
        if b <= last {
            continue;
        }
        let mut pieces = Vec::new();
        let mut p = a;
        for &k in &new {
            if p < k {
                pieces.push(p..k);
            }
            p = k + 1;
        }
        if p < b {
            pieces.push(p..b);
        }
        let mut after = 0;
        let mut kept_pieces = Vec::new();
        for r in pieces {
            let (c, kept) = cost(r.clone());
            after += c;
            if kept {
                kept_pieces.push(r);
            }
        }
        let unit: usize = new.iter().map(|&k| segs[k].end - segs[k].start).sum();
        let with = (total + unit + after).saturating_sub(cost(a..b).0);
        if with > budget {
            continue;
        }
        for &k in &new {
            keep[k] = true;
        }
        for r in kept_pieces {
            keep[r].fill(true);
        }
        total = with;
    }
    keep
}

/// Runs of consecutive elided segments.
fn runs_of(keep: &[bool]) -> usize {
    let mut n = 0;
    let mut prev = true;
    for &k in keep {
        if !k && prev {
            n += 1;
        }
        prev = k;
    }
    n
}

fn render(
    input: &[u8],
    segs: &[Seg],
    files: &[File],
    keep: &[bool],
    detail: Detail,
    id: &str,
) -> Shortened {
    let mut out = Vec::with_capacity(input.len() / 2);
    let mut hunks_elided = 0;
    let mut files_elided = 0;
    let mut i = 0;
    while i < segs.len() {
        if keep[i] {
            out.extend_from_slice(&input[segs[i].start..segs[i].end]);
            i += 1;
            continue;
        }
        let from = i;
        while i < segs.len() && !keep[i] {
            i += 1;
        }
        let run = &segs[from..i];
        hunks_elided += run.iter().filter(|s| s.kind == Kind::Hunk).count() as u64;
        files_elided += run.iter().filter(|s| s.kind == Kind::FileHead).count() as u64;
        out.extend_from_slice(run_marker(run, files, detail, id).as_bytes());
        out.push(b'\n');
    }
    Shortened {
        output: out,
        hunks_elided,
        files_elided,
    }
}

/// How much a marker names of its run: every hunk header, then less as the output
/// would otherwise be over the budget (see [`shorten`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Detail {
    /// Each file, each hunk header with its `+N -M`.
    Hunks,
    /// Each file with its hunk count and summed `+N -M`, no hunk headers.
    Files,
    /// The first [`FIRST_FILES`] files so, then `and K more files (+A -B)`.
    FirstFiles,
    /// Counts only: `F files, +A -B`.
    Counts,
}

/// Files a [`Detail::FirstFiles`] marker names.
const FIRST_FILES: usize = 3;

/// One file of a run: its name, whether its header is in the run, its hunks in the
/// run and their summed added and removed lines.
struct RunFile<'a> {
    name: &'a str,
    header: bool,
    hunks: Vec<&'a Seg>,
    plus: u64,
    minus: u64,
}

impl RunFile<'_> {
    /// `name (header) 3 hunks +10 -2`.
    fn summary(&self, s: &mut String) {
        s.push_str(self.name);
        if self.header {
            s.push_str(" (header)");
        }
        if !self.hunks.is_empty() {
            let n = self.hunks.len();
            let _ = write!(
                s,
                " {n} hunk{} +{} -{}",
                if n == 1 { "" } else { "s" },
                self.plus,
                self.minus
            );
        }
    }
}

/// The marker line (without its newline) for a run of consecutive elided segments.
fn run_marker(run: &[Seg], files: &[File], detail: Detail, id: &str) -> String {
    let (start, end) = (run[0].start, run[run.len() - 1].end);
    let hunks = run.iter().filter(|s| s.kind == Kind::Hunk).count() as u64;
    let heads = run.iter().filter(|s| s.kind == Kind::FileHead).count() as u64;
    // The run's files, each once, in input order.
    let mut by_file: Vec<RunFile<'_>> = Vec::new();
    let mut last_file = usize::MAX;
    for s in run {
        let new_file = s.file != last_file;
        last_file = s.file;
        if new_file {
            let name = files[s.file].name.as_str();
            by_file.push(RunFile {
                name: if name.is_empty() { "(unnamed)" } else { name },
                header: false,
                hunks: Vec::new(),
                plus: 0,
                minus: 0,
            });
        }
        let f = by_file.last_mut().expect("pushed");
        match s.kind {
            Kind::FileHead => f.header = true,
            Kind::Hunk => {
                f.hunks.push(s);
                f.plus += s.plus;
                f.minus += s.minus;
            }
            Kind::Other => {}
        }
    }
    let mut list = String::new();
    match detail {
        Detail::Hunks => {
            for (k, f) in by_file.iter().enumerate() {
                if k > 0 {
                    list.push_str("; ");
                }
                list.push_str(f.name);
                if f.header {
                    list.push_str(" (header)");
                }
                for (j, h) in f.hunks.iter().enumerate() {
                    if j > 0 {
                        list.push(',');
                    }
                    let _ = write!(list, " {} +{} -{}", h.label, h.plus, h.minus);
                }
            }
        }
        Detail::Files | Detail::FirstFiles => {
            let shown = if detail == Detail::Files || by_file.len() <= FIRST_FILES + 1 {
                by_file.len()
            } else {
                FIRST_FILES
            };
            for (k, f) in by_file[..shown].iter().enumerate() {
                if k > 0 {
                    list.push_str("; ");
                }
                f.summary(&mut list);
            }
            let rest = &by_file[shown..];
            if !rest.is_empty() {
                let plus: u64 = rest.iter().map(|f| f.plus).sum();
                let minus: u64 = rest.iter().map(|f| f.minus).sum();
                let _ = write!(list, "; and {} more files (+{plus} -{minus})", rest.len());
            }
        }
        Detail::Counts => {
            let plus: u64 = by_file.iter().map(|f| f.plus).sum();
            let minus: u64 = by_file.iter().map(|f| f.minus).sum();
            let n = by_file.len();
            let _ = write!(
                list,
                "{n} file{}, +{plus} -{minus}",
                if n == 1 { "" } else { "s" }
            );
        }
    }
    let files_word = match heads {
        0 => String::new(),
        1 => " and 1 file header".to_string(),
        n => format!(" and {n} file headers"),
    };
    let hunks_word = if hunks == 1 {
        "1 hunk".to_string()
    } else {
        format!("{hunks} hunks")
    };
    Marker {
        what: format!(
            "{hunks_word}{files_word} ({} bytes) elided: {list}",
            end - start
        ),
        rule: RuleId::DiffProtect,
        lines: Some((run[0].first as u64 + 1, run[run.len() - 1].last as u64 + 1)),
        bytes: Some((start as u64, end as u64)),
        recovery: Recovery::Elided(RestoreCall::Bytes {
            start: start as u64,
            end: end as u64,
        }),
    }
    .render(Some(id))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A diff of `files` files of two hunks each (`+1 -1`, then `+2 -1`).
    fn diff(files: usize) -> String {
        let mut d = String::new();
        for f in 0..files {
            d += &format!(
                "diff --git a/f{f}.rs b/f{f}.rs\nindex 1..2 100644\n--- a/f{f}.rs\n+++ b/f{f}.rs\n"
            );
            d += "@@ -1,3 +1,3 @@\n a\n-b\n+c\n d\n";
            d += "@@ -20,2 +20,3 @@\n x\n-y\n+z\n+w\n";
        }
        d
    }

    #[test]
    fn a_run_s_marker_in_each_form() {
        let d = diff(5);
        let (segs, files) = segments(d.as_bytes());
        let id = "sn_000000000000000000000000";
        let what = |detail| {
            let m = run_marker(&segs, &files, detail, id);
            crate::marker::parse(&m).unwrap().what
        };
        assert_eq!(
            what(Detail::Hunks),
            "10 hunks and 5 file headers (635 bytes) elided: f0.rs (header) @@ -1,3 +1,3 @@ +1 -1, @@ -20,2 +20,3 @@ +2 -1; f1.rs (header) @@ -1,3 +1,3 @@ +1 -1, @@ -20,2 +20,3 @@ +2 -1; f2.rs (header) @@ -1,3 +1,3 @@ +1 -1, @@ -20,2 +20,3 @@ +2 -1; f3.rs (header) @@ -1,3 +1,3 @@ +1 -1, @@ -20,2 +20,3 @@ +2 -1; f4.rs (header) @@ -1,3 +1,3 @@ +1 -1, @@ -20,2 +20,3 @@ +2 -1"
        );
        assert_eq!(
            what(Detail::Files),
            "10 hunks and 5 file headers (635 bytes) elided: f0.rs (header) 2 hunks +3 -2; f1.rs (header) 2 hunks +3 -2; f2.rs (header) 2 hunks +3 -2; f3.rs (header) 2 hunks +3 -2; f4.rs (header) 2 hunks +3 -2"
        );
        assert_eq!(
            what(Detail::FirstFiles),
            "10 hunks and 5 file headers (635 bytes) elided: f0.rs (header) 2 hunks +3 -2; f1.rs (header) 2 hunks +3 -2; f2.rs (header) 2 hunks +3 -2; and 2 more files (+6 -4)"
        );
        assert_eq!(
            what(Detail::Counts),
            "10 hunks and 5 file headers (635 bytes) elided: 5 files, +15 -10"
        );
        // A run of four files names them all: `and 1 more file` saves nothing.
        let (segs4, files4) = segments(diff(4).as_bytes());
        let m = run_marker(&segs4, &files4, Detail::FirstFiles, id);
        assert!(m.contains("f3.rs (header) 2 hunks +3 -2 ·"), "{m}");
    }

    #[test]
    fn markers_degrade_until_the_output_fits() {
        let d = diff(40);
        let id = "sn_000000000000000000000000";
        let marker_of = |budget| {
            let s = shorten(d.as_bytes(), budget, id).unwrap();
            let out = String::from_utf8(s.output).unwrap();
            let lines: Vec<String> = out.lines().map(str::to_string).collect();
            (out.len(), lines)
        };
        let names_hunks = |lines: &[String]| lines.iter().any(|l| l.contains(" @@ -"));
        // Room for one marker naming every hunk: that form.
        let (len, lines) = marker_of(3000);
        assert!(len <= 3000 && lines.len() == 1 && names_hunks(&lines));
        // Less room: each file with its counts, the first files kept whole.
        let (len, lines) = marker_of(2000);
        assert!(len <= 2000 && !names_hunks(&lines), "{lines:?}");
        assert!(lines[0].starts_with("diff --git a/f0.rs"));
        assert!(lines
            .iter()
            .any(|l| l.contains("; f6.rs (header) 2 hunks +3 -2; f7.rs")));
        // Less still: shorter forms, the output still fits.
        for budget in [1500, 900, 600] {
            let (len, lines) = marker_of(budget);
            assert!(len <= budget && !names_hunks(&lines), "{lines:?}");
        }
        // Counts only.
        let (len, lines) = marker_of(300);
        assert!(len <= 300 && lines.len() == 1);
        assert!(lines[0].starts_with(
            "[snip: 80 hunks and 40 file headers (5200 bytes) elided: 40 files, +120 -80 · diff-protect · lines 1-560 · bytes 0-5200 · "
        ));
    }
}
