//! `diff-protect` — diffs and patches are returned byte-identical.
//!
//! **What it does.** Recognises unified diffs (`diff --git`, `--- a/…` + `+++ b/…` +
//! `@@`), context diffs (`diff -c`) and normal diffs (plain `diff`, from the first
//! line), `git show`/`git log -p` output (`commit <sha>` with a diff), mailbox patches
//! (`From <sha>`), and gates the whole pipeline: the input is returned untouched.
//! Combined diffs (`git diff --cc`, `git show` of a merge, a merge's conflicts: `diff
//! --cc`/`--combined` headers, `@@@` hunks) are diffs too. Coloured diffs (`git diff
//! --color=always`, `diff --color=always` in the normal, context and unified formats)
//! and diffs of files that hold escapes are recognised with their escapes read past,
//! and returned untouched too, escapes included.
//!
//! **Why.** A model applies, reviews or quotes a diff; one elided hunk line corrupts it.
//!
//! **Example.** `diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n` → unchanged.
//!
//! **Options.** None.

pub(crate) mod hunks;

use crate::rule::{GateRun, Gated, RuleId};

/// How far into the input to look for a diff's head (bytes).
const HEAD: usize = 16 * 1024;

/// Whether `input` is a diff: a `diff --git`, `diff --cc` or `diff --combined` header,
/// a `---`/`+++` pair before a `@@` (unified) or `@@@` (combined) hunk, in its first
/// [`HEAD`] bytes, or a normal or context diff from its first lines; read without
/// escapes when it has some (a diff in colour, or a diff of files holding escapes).
pub(crate) fn is_diff(input: &[u8]) -> bool {
    let head = &input[..input.len().min(HEAD)];
    if shortened_diff(input, head.len()) {
        return true;
    }
    if memchr::memchr(0x1b, head).is_some() {
        // Escapes sit before a line's markers or inside its text, never inside a
        // marker: without one of them anywhere, no stripped line can start with one
        // (and most coloured output is not a diff: it is not stripped here).
        let may = memchr::memmem::find(head, b"diff --").is_some()
            || memchr::memmem::find(head, b"@@ -").is_some();
        if may && has_diff_header(&crate::escape::strip(head)) {
            return true;
        }
        // A normal or context diff shows itself in its first lines: strip only those.
        let first = first_lines(head, 4);
        return context_or_normal(&crate::escape::strip(first));
    }
    has_diff_header(head)
}

/// Whether a line starting in the first `head` bytes of `input` is this rule's own
/// marker (`[snip: … · diff-protect · …]`, read whole even where it runs past
/// `head`): a diff shortened by whole hunks may start with one (its first headers
/// elided), and is still a diff, so a second pass returns it as it is.
fn shortened_diff(input: &[u8], head: usize) -> bool {
    const START: &[u8] = b"[snip: ";
    let id = RuleId::DiffProtect.as_str();
    memchr::memmem::find_iter(&input[..head], START).any(|at| {
        if at > 0 && input[at - 1] != b'\n' {
            return false;
        }
        let end = memchr::memchr(b'\n', &input[at..]).map_or(input.len(), |i| at + i);
        let line = &input[at..end];
        memchr::memmem::find(line, id.as_bytes()).is_some()
            && std::str::from_utf8(line)
                .ok()
                .and_then(crate::marker::parse)
                .is_some_and(|m| m.rule == id)
    })
}

/// The first `n` lines of `b` (with their `\n`s), or all of it.
fn first_lines(b: &[u8], n: usize) -> &[u8] {
    let mut end = 0;
    for _ in 0..n {
        match memchr::memchr(b'\n', &b[end..]) {
            Some(i) => end += i + 1,
            None => return b,
        }
    }
    &b[..end]
}

/// A hunk header of a unified (`@@ -`) or combined (`@@@ -`, `git diff --cc`) diff.
fn hunk_head(line: &[u8]) -> bool {
    line.starts_with(b"@@ -") || line.starts_with(b"@@@ -")
}

fn has_diff_header(head: &[u8]) -> bool {
    // A `diff --git` (or combined: `diff --cc`, `diff --combined`) header at the start
    // of a line near the start (a log that only mentions one further down is not a
    // diff).
    for h in [&b"diff --git "[..], b"diff --cc ", b"diff --combined "] {
        if head.starts_with(h) || memchr::memmem::find(head, &[b"\n", h].concat()).is_some() {
            return true;
        }
    }
    if context_or_normal(head) {
        return true;
    }
    let has_hunk = hunk_head(head)
        || memchr::memmem::find(head, b"\n@@ -").is_some()
        || memchr::memmem::find(head, b"\n@@@ -").is_some();
    if !has_hunk {
        return false;
    }
    // A file header pair right before a hunk: "--- x\n+++ y\n@@ -" (or "@@@ -").
    let mut it = head.split(|&b| b == b'\n').peekable();
    let mut prev_minus = false;
    while let Some(line) = it.next() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if prev_minus && line.starts_with(b"+++ ") {
            if let Some(next) = it.peek() {
                if hunk_head(next) {
                    return true;
                }
            }
        }
        prev_minus = line.starts_with(b"--- ");
    }
    false
}

/// A normal diff (plain `diff`) or a context diff (`diff -c`), from the first line
/// (after an optional `diff …` line, as `diff -r` prints): a change command (`12c12`,
/// `5,7d4`, `3a4,6`) then a `< ` or `> ` line, or `*** old`, `--- new` and the hunk
/// separator `***************`. Only the first lines are read: a scan of the whole
/// head would cost every input as much as the unified check does.
fn context_or_normal(head: &[u8]) -> bool {
    let mut lines = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let mut first = lines.next().unwrap_or_default();
    if first.starts_with(b"diff ") {
        first = lines.next().unwrap_or_default();
    }
    let second = lines.next().unwrap_or_default();
    if change_command(first) {
        return second.starts_with(b"< ") || second.starts_with(b"> ");
    }
    first.starts_with(b"*** ")
        && second.starts_with(b"--- ")
        && lines.next() == Some(&b"***************"[..])
}

/// `N[,N]{a,c,d}N[,N]`, the change command of a normal diff.
fn change_command(l: &[u8]) -> bool {
    let range = |s: &[u8]| {
        let mut parts = s.splitn(2, |&b| b == b',');
        parts.all(|p| !p.is_empty() && p.iter().all(u8::is_ascii_digit))
    };
    match l.iter().position(|b| matches!(b, b'a' | b'c' | b'd')) {
        Some(k) => k > 0 && range(&l[..k]) && k + 1 < l.len() && range(&l[k + 1..]),
        None => false,
    }
}

/// The gate: a diff is returned as it is under its own budget (`diff_max_bytes`);
/// over it, it shortens by whole hunks only (every kept byte unchanged), or not at all.
pub(crate) fn gate(g: &mut GateRun<'_>) -> Gated {
    let input = g.input;
    if !is_diff(input) {
        return Gated::Continue;
    }
    let max = g.config.diff_max_bytes;
    if input.len() > max {
        let shortened = match g.retain() {
            crate::Retention::Retained { id } => hunks::shorten(input, max, id),
            _ => None,
        };
        if let Some(s) = shortened {
            return Gated::Done(crate::Outcome {
                changed: true,
                original_bytes: input.len(),
                rules: vec![report_shortened(&s)],
                output: s.output,
                retention: g.retention.take(),
                lossy: true,
                failed_open: None,
            });
        }
    }
    let mut o = g.unchanged();
    o.rules.push(report(input.len()));
    Gated::Done(o)
}

/// The receipt row: `protected_bytes`, the input's size (returned as it was).
pub(crate) fn report(protected_bytes: usize) -> crate::RuleReport {
    crate::RuleReport {
        id: crate::RuleId::DiffProtect,
        counts: vec![("protected_bytes", protected_bytes as u64)],
    }
}

/// The receipt row of a diff shortened by whole hunks ([`hunks::shorten`]).
pub(crate) fn report_shortened(s: &hunks::Shortened) -> crate::RuleReport {
    crate::RuleReport {
        id: crate::RuleId::DiffProtect,
        counts: vec![
            ("hunks_elided", s.hunks_elided),
            ("file_headers_elided", s.files_elided),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_diffs_and_not_logs() {
        assert!(is_diff(
            b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"
        ));
        assert!(is_diff(
            b"--- old.txt\n+++ new.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
        ));
        assert!(is_diff(
            b"commit 0123abc\nAuthor: x\n\n    msg\n\ndiff --git a/f b/f\n"
        ));
        assert!(!is_diff(b"--- summary ---\nall good\n"));
        // `git diff --color=always`.
        assert!(is_diff(
            b"\x1b[1mdiff --git a/x b/x\x1b[m\n\x1b[1m--- a/x\x1b[m\n\x1b[1m+++ b/x\x1b[m\n\x1b[36m@@ -1 +1 @@\x1b[m\n\x1b[31m-a\x1b[m\n\x1b[32m+b\x1b[m\n"
        ));
        assert!(is_diff(
            b"\x1b[1m--- old.txt\x1b[0m\n\x1b[1m+++ new.txt\x1b[0m\n\x1b[36m@@ -1 +1 @@\x1b[0m\n-a\n+b\n"
        ));
        assert!(!is_diff(b"\x1b[31merror\x1b[0m: x\n@@ not a hunk\n"));
        assert!(!is_diff(b"error: x\n@@ not a hunk\n"));
        // Plain `diff` and `diff -c`.
        assert!(is_diff(b"5c5\n< 5\n---\n> x\n15c15\n< 15\n---\n> 1x\n"));
        assert!(is_diff(b"2,3d1\n< b\n< c\n"));
        assert!(is_diff(b"diff -r old/f new/f\n0a1,2\n> new line\n"));
        assert!(is_diff(
            b"*** a.txt\t2026-01-01\n--- b.txt\t2026-01-01\n***************\n*** 1,3 ****\n"
        ));
        assert!(!is_diff(b"5c5 is not a diff\n< nor this\n"));
        assert!(!is_diff(b"12 ok\n> prompt\n"));
        assert!(!is_diff(b"*** Error in `./a.out': double free\n--- x\n"));
        // Combined diffs, and normal/context diffs in colour or holding escapes.
        assert!(is_diff(
            b"diff --cc f\nindex 1,2..3\n--- a/f\n+++ b/f\n@@@ -1,1 -1,1 +1,2 @@@\n"
        ));
        assert!(is_diff(
            b"--- a/f\n+++ b/f\n@@@ -1,1 -1,1 +1,2 @@@\n++<<<<<<< HEAD\n"
        ));
        assert!(is_diff(b"\x1b[36m2c2\x1b[0m\n\x1b[31m< b\x1b[0m\n---\n"));
        assert!(is_diff(b"2c2\n< \x1b[31mb\x1b[0m\n---\n> c\n"));
        assert!(is_diff(
            b"\x1b[1m*** a\x1b[0m\n\x1b[1m--- b\x1b[0m\n***************\n\x1b[36m*** 1 ****\x1b[0m\n"
        ));
        assert!(!is_diff(b"\x1b[32m12 ok\x1b[0m\n> prompt\n"));
        assert!(!is_diff(b"\x1b[1mdiff --stat\x1b[0m\n 3 files changed\n"));
    }
}
