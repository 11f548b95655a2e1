//! `lines` pages of a large original through a line index, kept by this process
//! ([`super::LineCache`]) once it has read the original whole, or read (once) from
//! beside the original in the shared store. One window of the original is read, not
//! all of it.

use super::lines::LineIndex;
use super::{Block, Ctx, RestoreResponse, RestoreStatus};
use crate::redis_store::INDEX_STRIDE;

/// Most bytes read past the response cap, to skip up to 63 lines before the first
/// one asked for and to see where the page ends (the window reaches only as far as
/// the next block of the index, plus the cap).
const WINDOW_SLACK: u64 = 256 * 1024;

impl Ctx<'_> {
    /// The `lines` page the whole-original path would give, from the line index and
    /// one window: from the block of 64 lines holding the first line asked for to the
    /// next block's start plus the cap, at most the cap + 256 KiB. `None` (the caller then reads the
    /// whole original) when there is no index, the request is out of range or
    /// malformed (the whole path says why), or the page does not fit the window: the
    /// lines to skip are longer than it, or the first line is longer than the cap.
    pub(super) fn lines_by_index(
        &self,
        mut base: RestoreResponse,
    ) -> std::io::Result<Option<RestoreResponse>> {
        let start = self.req.start.unwrap_or(1);
        if start == 0 || self.req.end.is_some_and(|e| e < start) {
            return Ok(None);
        }
        let block = (start - 1) / INDEX_STRIDE;
        let found = match self.lines.get(&self.req.id) {
            Some(ix) => ix.block(block),
            // The shared store's index, read once and kept.
            None => match self.entry.line_index()? {
                Some(ix) => {
                    let found = ix.block(block);
                    self.lines.put(&self.req.id, ix);
                    found
                }
                None => None,
            },
        };
        let Some(Block {
            total,
            start: block_at,
            next,
        }) = found
        else {
            return Ok(None);
        };
        let len = self.entry.len;
        if start > total || block_at >= len {
            return Ok(None);
        }
        let cap = self.cap as u64;
        // The line asked for starts at the next block at the latest: a window to there
        // plus the cap and a few bytes holds the page and shows where it ends.
        let win_end = (block_at + cap + WINDOW_SLACK)
            .min(next.map_or(u64::MAX, |n| n + cap + 8))
            .min(len);
        let win = self.entry.read_range(block_at, win_end)?;
        let mut at = 0usize;
        for _ in 0..(start - 1) % INDEX_STRIDE {
            match memchr::memchr(b'\n', &win[at..]) {
                Some(i) => at += i + 1,
                None => return Ok(None),
            }
        }
        let rest = &win[at..];
        let whole_tail = win_end == len;
        match memchr::memchr(b'\n', rest) {
            // The first line must end within the cap (a longer one is cut, and its
            // note names offsets this window cannot give).
            Some(i) if (i as u64) < cap => {}
            None if whole_tail && rest.len() as u64 <= cap => {}
            _ => return Ok(None),
        }
        // The page stops before a line that would take it past the cap; the window
        // must reach past that point unless it holds the original's end.
        if !whole_tail && (rest.len() as u64) <= cap + 4 {
            return Ok(None);
        }
        let skipped = start - 1;
        let from = block_at + at as u64;
        let end = self.req.end.unwrap_or(total).min(total);
        let mut req = self.req.clone();
        req.start = Some(1);
        req.end = Some(end - skipped);
        let local = Ctx {
            req: &req,
            entry: self.entry,
            cap: self.cap,
            base: self.base.clone(),
            lines: self.lines,
        };
        base.total_lines = Some(total);
        let mut r = local.lines(base, rest, &LineIndex::new(rest));
        if r.status != RestoreStatus::Ok {
            return Ok(None);
        }
        r.start = r.start.map(|n| n + skipped);
        r.end = r.end.map(|n| n + skipped);
        r.next = r.next.map(|n| n + skipped);
        r.byte_start = r.byte_start.map(|b| b + from);
        r.byte_end = r.byte_end.map(|b| b + from);
        Ok(Some(r))
    }
}
