//! The four modes over a scope: `bytes` pages, `lines` pages, `search` pages (and
//! `full`, answered in `mod.rs`), each bounded by the response cap.

use super::lines::LineIndex;
use super::request::Align;
use super::response::{RestoreResponse, RestoreStatus, SearchMatch};
use super::{
    Ctx, DEFAULT_CONTEXT, MAX_CONTEXT, MAX_QUERY_BYTES, SEARCH_LINE_WINDOW, UNTRUSTED_NOTE,
};
use memchr::memmem;
use snip_core::text::floor_char_boundary;

impl Ctx<'_> {
    pub(super) fn bytes(
        &self,
        base: RestoreResponse,
        scope_len: u64,
        read: &dyn Fn(u64, u64) -> std::io::Result<Vec<u8>>,
    ) -> std::io::Result<RestoreResponse> {
        let start = self.req.start.unwrap_or(0);
        let end = self.req.end.unwrap_or(scope_len).min(scope_len);
        if start > scope_len {
            return Ok(self.fail(
                RestoreStatus::Invalid,
                format!("start {start} is past the end ({scope_len} bytes); bytes are 0-based, half-open"),
            ));
        }
        if start > end {
            return Ok(self.fail(
                RestoreStatus::Invalid,
                format!(
                    "start {start} is after end {end}; bytes are 0-based, half-open [start, end)"
                ),
            ));
        }
        // Read up to 3 bytes past the cut to see whether it splits a code point.
        let window_end = (start + self.cap as u64 + 3).min(scope_len);
        let win = read(start, window_end.max(start))?;
        let page_end = page_end(&win, start, end, self.cap);
        if self.req.align == Some(Align::Token) && page_end > start {
            // The page with up to TOKEN_MARGIN bytes on each side, to see whole tokens.
            let from = start.saturating_sub(TOKEN_MARGIN);
            let to = (page_end + TOKEN_MARGIN).min(scope_len);
            let buf = read(from, to)?;
            let (a, b) = whole_tokens(&buf, from, start, page_end, scope_len);
            let mut r = base.with_content(&buf[(a - from) as usize..(b - from) as usize]);
            r.start = Some(a);
            r.end = Some(b);
            r.next = (b < end).then_some(b);
            return Ok(r);
        }
        let mut r = base.with_content(&win[..(page_end - start) as usize]);
        r.start = Some(start);
        r.end = Some(page_end);
        r.next = (page_end < end).then_some(page_end);
        Ok(r)
    }

    pub(super) fn lines(
        &self,
        base: RestoreResponse,
        all: &[u8],
        idx: &LineIndex,
    ) -> RestoreResponse {
        let total = idx.count();
        let start = self.req.start.unwrap_or(1);
        let end = self.req.end.unwrap_or(total).min(total);
        if start == 0 {
            return self.fail(
                RestoreStatus::Invalid,
                "lines are 1-based: start must be at least 1",
            );
        }
        if total == 0 && start == 1 {
            let mut r = base.with_content(b"");
            r.start = Some(1);
            r.end = Some(0);
            r.byte_start = Some(0);
            r.byte_end = Some(0);
            return r;
        }
        if start > total {
            return self.fail(
                RestoreStatus::Invalid,
                format!("start line {start} is past the last line ({total})"),
            );
        }
        if self.req.end.is_some_and(|e| e < start) {
            return self.fail(
                RestoreStatus::Invalid,
                format!(
                    "end line {} is before start line {start}; lines are 1-based, inclusive",
                    self.req.end.unwrap_or(0)
                ),
            );
        }
        let byte_start = idx.start_of(start);
        let mut last = start;
        let mut byte_end = idx.line_end_from(byte_start);
        // Whole lines while they fit.
        while last < end {
            let next_end = idx.line_end_from(byte_end);
            if next_end - byte_start > self.cap as u64 {
                break;
            }
            last += 1;
            byte_end = next_end;
        }
        let mut note = None;
        if byte_end - byte_start > self.cap as u64 {
            // One line longer than the cap: its first part, cut on a code point.
            let win_end = (byte_start + self.cap as u64 + 3).min(all.len() as u64);
            let win = &all[byte_start as usize..win_end as usize];
            let cut = page_end(win, byte_start, byte_end, self.cap);
            note = Some(format!(
                " Line {start} is longer than the response cap: shown up to byte {cut}; the rest is mode=\"bytes\", start={cut}, end={byte_end}."
            ));
            byte_end = cut;
        }
        let mut r = base.with_content(&all[byte_start as usize..byte_end as usize]);
        r.start = Some(start);
        r.end = Some(last);
        r.next = (last < end).then_some(last + 1);
        r.byte_start = Some(byte_start);
        r.byte_end = Some(byte_end);
        if let Some(n) = note {
            r.note.push_str(&n);
        }
        r
    }

    pub(super) fn search(
        &self,
        base: RestoreResponse,
        all: &[u8],
        idx: &LineIndex,
    ) -> RestoreResponse {
        let query = match self.req.query.as_deref() {
            None | Some("") => {
                return self.fail(
                    RestoreStatus::Invalid,
                    "search needs a non-empty query (literal text)",
                )
            }
            Some(q) if q.len() > MAX_QUERY_BYTES => {
                return self.fail(
                    RestoreStatus::Invalid,
                    format!(
                        "query is {} bytes; search takes at most {MAX_QUERY_BYTES}",
                        q.len()
                    ),
                )
            }
            Some(q) => q.as_bytes(),
        };
        let context = self.req.context.unwrap_or(DEFAULT_CONTEXT).min(MAX_CONTEXT) as u64;
        let total = idx.count();
        let start = self.req.start.unwrap_or(1);
        let end = self.req.end.unwrap_or(total).min(total);
        if start == 0 || (start > total && total > 0) {
            return self.fail(
                RestoreStatus::Invalid,
                format!("start line {start} is outside lines 1..={total}"),
            );
        }
        // Every matching line in the range: (line, byte of first occurrence).
        let mut hits: Vec<SearchMatch> = Vec::new();
        if total > 0 && start <= end {
            let (from, to) = (idx.start_of(start) as usize, idx.end_of(end) as usize);
            let finder = memmem::Finder::new(query);
            let mut pos = from;
            while pos < to {
                let Some(i) = finder.find(&all[pos..to]) else {
                    break;
                };
                let at = pos + i;
                let line = idx.line_of(at as u64);
                hits.push(SearchMatch {
                    line,
                    byte: at as u64,
                });
                // One entry per line: go on after this line.
                pos = idx.line_end_from(at as u64) as usize;
            }
        }
        let mut r = base;
        r.start = Some(start);
        r.total_matches = Some(hits.len() as u64);
        let mut out = String::new();
        let mut shown = Vec::new();
        // The cap holds the content and the `matches` entries together: each shown hit
        // adds its `{"line":N,"byte":B},` to the answer.
        let entry = |h: &SearchMatch| format!("{{\"line\":{},\"byte\":{}}},", h.line, h.byte).len();
        let mut meta = 0usize;
        let mut last_shown_line = 0u64;
        let mut i = 0;
        while i < hits.len() {
            // A group: this hit and every later hit whose context touches it.
            let g0 = hits[i].line.saturating_sub(context).max(start);
            let mut g1 = (hits[i].line + context).min(end);
            let mut j = i + 1;
            while j < hits.len() && hits[j].line.saturating_sub(context) <= g1 + 1 {
                g1 = (hits[j].line + context).min(end);
                j += 1;
            }
            let g0 = g0.max(last_shown_line + 1);
            let is_hit = |n: u64| hits[i..j].iter().find(|h| h.line == n);
            let mut text = String::new();
            if !out.is_empty() {
                text.push_str("--\n");
            }
            // Lines of the group while they fit; `fit` counts the hits among them.
            let mut fit = i;
            let mut gmeta = 0usize;
            let mut cut = false;
            let mut line = String::new();
            for n in g0..=g1 {
                let (ls, le) = (idx.start_of(n) as usize, idx.content_end_of(n) as usize);
                let hit = is_hit(n);
                let at = hit.map(|h| h.byte as usize - ls);
                line.clear();
                line.push_str(&format!("{n}{}", if hit.is_some() { ':' } else { '-' }));
                line.push_str(&window(&all[ls..le], at, query.len()));
                line.push('\n');
                let hit_meta = hit.map_or(0, entry);
                if out.len() + meta + text.len() + gmeta + line.len() + hit_meta > self.cap {
                    cut = true;
                    break;
                }
                text.push_str(&line);
                gmeta += hit_meta;
                if hit.is_some() {
                    fit += 1;
                }
            }
            if cut {
                if fit > i {
                    // A group over the room left (adjacent matches merge into one):
                    // the lines that fit; the next page starts at the first hit left.
                    out.push_str(&text);
                    shown.extend(hits[i..fit].iter().cloned());
                    i = fit;
                } else if shown.is_empty() {
                    // Not even its first hit fits: the match line only, cut.
                    let h = &hits[i];
                    let (ls, le) = (
                        idx.start_of(h.line) as usize,
                        idx.content_end_of(h.line) as usize,
                    );
                    let mut t = format!(
                        "{}:{}",
                        h.line,
                        window(&all[ls..le], Some(h.byte as usize - ls), query.len())
                    );
                    truncate_on_char(&mut t, self.cap.saturating_sub(entry(h)));
                    out = t;
                    shown.push(h.clone());
                    i += 1;
                }
                break;
            }
            out.push_str(&text);
            meta += gmeta;
            shown.extend(hits[i..j].iter().cloned());
            last_shown_line = g1;
            i = j;
        }
        let complete = i >= hits.len();
        r.end = Some(if complete { end } else { hits[i].line - 1 });
        r.next = (!complete).then(|| hits[i].line);
        if hits.is_empty() {
            r.note = format!("No line contains the query. {UNTRUSTED_NOTE}");
        }
        r.matches = Some(shown);
        r.content = Some(out);
        r
    }
}

/// How far `align: "token"` may move a page's end, in bytes: the longest token it
/// keeps whole.
pub const TOKEN_MARGIN: u64 = 1024;

/// The bytes that end a token for `align: "token"`: ASCII blanks.
fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x0c | 0x0b)
}

/// `align: "token"`: the page `[start, end)` with its ends moved off the inside of a
/// token (a run of non-blank bytes) no longer than [`TOKEN_MARGIN`], so that a reader
/// that filters one page at a time (secret redaction) sees each such token whole. A
/// start inside a token moves back to the token's start; an end inside one moves back
/// to the token's start or, when the page begins inside or at that token, forward to
/// its end. Longer tokens are cut where the page falls, on both sides alike, so
/// following `next` still reads every byte exactly once. `buf` holds the scope's bytes
/// from `base` on, at least [`TOKEN_MARGIN`] bytes past each end of the page where the
/// scope has them; `len` is the scope's size.
pub(super) fn whole_tokens(buf: &[u8], base: u64, start: u64, end: u64, len: u64) -> (u64, u64) {
    let buf_end = base + buf.len() as u64;
    // The token a cut at `pos` would split, when `buf` shows both its ends and it is
    // no longer than the margin.
    let token_at = |pos: u64| -> Option<(u64, u64)> {
        if pos == 0 || pos >= len {
            return None;
        }
        let k = (pos - base) as usize;
        if is_blank(buf[k - 1]) || is_blank(buf[k]) {
            return None;
        }
        let a = buf[..k]
            .iter()
            .rposition(|&c| is_blank(c))
            .map_or(0, |i| i + 1);
        let b = buf[k..]
            .iter()
            .position(|&c| is_blank(c))
            .map_or(buf.len(), |i| k + i);
        if (a == 0 && base > 0) || (b == buf.len() && buf_end < len) {
            return None; // an end lies past the margin read
        }
        ((b - a) as u64 <= TOKEN_MARGIN).then_some((base + a as u64, base + b as u64))
    };
    let new_start = token_at(start).map_or(start, |t| t.0);
    let new_end = match token_at(end) {
        Some((a, _)) if a > new_start => a,
        Some((_, b)) => b,
        None => end,
    };
    (new_start, new_end)
}

/// Where a page starting at `start` ends: `end` if the page fits in `cap` bytes,
/// else `start + cap` moved back to the start of a UTF-8 sequence that the cut would
/// split. `win` holds scope bytes from `start` on, up to 3 bytes past the cut.
fn page_end(win: &[u8], start: u64, end: u64, cap: usize) -> u64 {
    if end - start <= cap as u64 {
        return end;
    }
    let cut = cap;
    for back in 1..=3usize {
        if back >= cut {
            break;
        }
        let p = cut - back;
        let b = win[p];
        if b & 0xC0 == 0x80 {
            continue;
        }
        let n = match b {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => 0,
        };
        if n > back && p + n <= win.len() && std::str::from_utf8(&win[p..p + n]).is_ok() {
            return start + p as u64;
        }
        break;
    }
    start + cut as u64
}

/// A line for search output: whole when short, else a window of about
/// [`SEARCH_LINE_WINDOW`] bytes around the match (or the line's start), with `…`
/// where it was cut. Invalid UTF-8 shows as U+FFFD.
fn window(line: &[u8], at: Option<usize>, qlen: usize) -> String {
    if line.len() <= SEARCH_LINE_WINDOW {
        return String::from_utf8_lossy(line).into_owned();
    }
    let side = (SEARCH_LINE_WINDOW.saturating_sub(qlen)) / 2;
    let (a, b) = match at {
        Some(at) => (at.saturating_sub(side), (at + qlen + side).min(line.len())),
        None => (0, SEARCH_LINE_WINDOW.min(line.len())),
    };
    let a = floor_char_boundary(line, a);
    let b = floor_char_boundary(line, b);
    let mut s = String::new();
    if a > 0 {
        s.push('…');
    }
    s.push_str(&String::from_utf8_lossy(&line[a..b]));
    if b < line.len() {
        s.push('…');
    }
    s
}

fn truncate_on_char(s: &mut String, max: usize) {
    if s.len() > max {
        let i = snip_core::text::floor_char_boundary(s.as_bytes(), max);
        s.truncate(i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_alignment_moves_ends_off_short_tokens_only() {
        let t = b"aa secretkey bb";
        // The start inside `secretkey` moves back; the end inside it moves back too.
        assert_eq!(whole_tokens(t, 0, 5, 15, 15), (3, 15));
        assert_eq!(whole_tokens(t, 0, 0, 6, 15), (0, 3));
        // A page that begins at the token and ends inside it takes the whole token.
        assert_eq!(whole_tokens(t, 0, 3, 6, 15), (3, 12));
        // Cuts on blanks stay.
        assert_eq!(whole_tokens(t, 0, 2, 12, 15), (2, 12));
        // A token longer than the margin is cut where the page falls.
        let long = [b"x ".as_slice(), &[b'k'; 2000], b" y"].concat();
        let n = long.len() as u64;
        assert_eq!(whole_tokens(&long, 0, 100, 900, n), (100, 900));
        // A token whose start lies before the bytes read is not moved.
        assert_eq!(whole_tokens(&t[4..], 4, 5, 15, 15), (5, 15));
    }

    #[test]
    fn page_end_never_splits_a_code_point() {
        let s = "aé€😀b".as_bytes(); // 1 + 2 + 3 + 4 + 1 bytes
        for cap in 4..s.len() {
            let e = page_end(&s[..(cap + 3).min(s.len())], 0, s.len() as u64, cap) as usize;
            assert!(e > 0 && e <= cap);
            assert!(std::str::from_utf8(&s[..e]).is_ok(), "cap {cap} cut at {e}");
        }
        // Invalid bytes are cut anywhere.
        let b = [0xffu8; 10];
        assert_eq!(page_end(&b, 0, 10, 4), 4);
    }
}
