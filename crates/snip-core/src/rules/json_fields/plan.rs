//! The planner: chooses the elisions that meet the budget and writes the output.

use super::*;

/// Salient lines kept from an elided string's middle, at most.
pub(super) const MAX_ISLANDS: usize = 2;
/// Longest salient line kept from a string (raw, escaped bytes).
pub(super) const ISLAND_MAX: usize = 600;

/// Raw (escaped) ranges of the most salient lines in `mid`, a piece of a JSON string's
/// raw text, split on `\n` escapes; in order, at most [`MAX_ISLANDS`]. Each range
/// includes its trailing `\n` escape when there is one, and never splits an escape.
pub(super) fn salient_segments(mid: &[u8]) -> Vec<(usize, usize)> {
    let mut segs: Vec<(u8, usize, usize)> = Vec::new();
    let mut start = 0usize;
    let mut from = 0usize;
    // Segment starts must follow a complete `\n` escape (an even run of backslashes
    // before the match); the first and last pieces are partial lines and are skipped.
    let mut first = true;
    while let Some(k) = memchr::memmem::find(&mid[from..], b"\\n").map(|k| from + k) {
        let backslashes = mid[..k].iter().rev().take_while(|&&b| b == b'\\').count();
        from = k + 2;
        if backslashes % 2 == 1 {
            continue;
        }
        let end = k + 2;
        if !first && end - start <= ISLAND_MAX {
            let score = crate::salience::salience(&mid[start..k]);
            if score >= 2 {
                segs.push((score, start, end));
            }
        }
        first = false;
        start = end;
    }
    segs.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    segs.truncate(MAX_ISLANDS);
    let mut v: Vec<(usize, usize)> = segs.into_iter().map(|(_, s, e)| (s, e)).collect();
    v.sort();
    v
}

/// Sums of savings by position (a Fenwick tree over the sorted edit start offsets).
#[derive(Clone)]
pub(super) struct Fenwick {
    pub(super) t: Vec<i64>,
}

impl Fenwick {
    fn add(&mut self, i: usize, v: i64) {
        let mut i = i + 1;
        while i <= self.t.len() {
            self.t[i - 1] += v;
            i += i & i.wrapping_neg();
        }
    }

    /// Sum of entries `0..i`.
    fn prefix(&self, mut i: usize) -> i64 {
        let mut s = 0;
        while i > 0 {
            s += self.t[i - 1];
            i &= i - 1;
        }
        s
    }
}

/// A piece that can be elided: a string (index into [`Scan::strings`]) or a
/// container's middle (index into [`Scan::containers`], at a variant).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Piece {
    Str(usize),
    Cont(usize, Var),
}

/// How a container's middle is elided: `keep` children stay at each end, and (objects
/// only, when `salient`) so does every salient member between them, each elided run
/// between kept children becoming one marker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Var {
    pub(super) keep: usize,
    pub(super) salient: bool,
}

impl Var {
    /// Whether `self` elides at least what `old` does.
    fn tighter_than(self, old: Var) -> bool {
        self.keep < old.keep || (self.keep == old.keep && old.salient && !self.salient)
    }
}

/// One elided run of a container: raw span `s..e` (first elided child's start to the
/// last one's end) and how many children it holds.
#[derive(Clone, Copy)]
pub(super) struct Run {
    pub(super) s: usize,
    pub(super) e: usize,
    pub(super) kids: usize,
}

/// Member names whose short scalar values are kept in an elided object's middle.
const SALIENT_NAMES: [&[u8]; 9] = [
    b"error", b"errors", b"status", b"message", b"code", b"name", b"version", b"latest", b"reason",
];
/// Longest scalar value (raw bytes) kept for its name alone.
const SHORT_SCALAR: usize = 120;
/// The key of an object's marker member (numbered `…snip 2`, `…snip 3`… when one
/// object has several elided runs, so that no key repeats).
pub const MARKER_KEY: &str = "\u{2026}snip";
/// Room left under the budget at which the planner gives bytes back to elided
/// containers: it stops once the output is within `budget / GIVE_BACK_DIVISOR` of it.
const GIVE_BACK_DIVISOR: usize = 10;

/// How many times a level looks for the smallest sufficient piece before going on
/// largest first (bounds the work on adversarial input).
pub(super) const FINAL_TRIES: usize = 8;

/// Which pieces a level may elide, and at which keep.
#[derive(Clone, Copy)]
pub(super) struct Level {
    pub(super) strings: Option<usize>,
    pub(super) scalar_arrays: Option<usize>,
    pub(super) record_arrays: Option<usize>,
    /// Objects' members: keep at each end, and whether salient members stay too.
    pub(super) objects: Option<Var>,
}

/// The edits chosen so far. Every active edit's saving (original span length after
/// minification, minus its replacement's length) sits in `fen` at its start offset.
#[derive(Clone)]
pub(super) struct State {
    pub(super) fen: Fenwick,
    /// Per string: current length of its text in the output (quotes included).
    pub(super) str_len: Vec<usize>,
    /// Per string: elided at this keep.
    pub(super) str_keep: Vec<Option<usize>>,
    /// Per container: the active variant.
    pub(super) cont_var: Vec<Option<Var>>,
    /// Per container: saving of the active variant (its runs' spans minus markers).
    pub(super) cont_val: Vec<i64>,
    pub(super) str_covered: Vec<bool>,
    pub(super) cont_covered: Vec<bool>,
}

/// One document (or one JSON Lines line) being shortened.
pub(super) struct Plan<'a> {
    pub(super) input: &'a [u8],
    pub(super) scan: Scan,
    pub(super) config: &'a Config,
    pub(super) id: Option<&'a str>,
    pub(super) text_rule: TextRule<'a>,
    /// JSON Lines: strings' restore calls use raw byte ranges.
    pub(super) line_mode: bool,
    pub(super) minify: bool,
    /// Lossless rewrite of each string, when smaller (quotes included).
    pub(super) rendered: Vec<Option<Vec<u8>>>,
    /// Sorted distinct edit start offsets (the Fenwick's index).
    pub(super) coords: Vec<usize>,
    /// Per string, built on first use.
    pub(super) cut_index: Vec<OnceCell<CutIndex>>,
    /// Per container: which children are salient members (objects), built on first use.
    pub(super) salient: Vec<OnceCell<Vec<bool>>>,
    pub(super) state: State,
}

impl<'a> Plan<'a> {
    pub(super) fn new(
        input: &'a [u8],
        scan: Scan,
        config: &'a Config,
        id: Option<&'a str>,
        text_rule: TextRule<'a>,
        line_mode: bool,
    ) -> Self {
        let mut coords: Vec<usize> = scan.strings.iter().map(|s| s.start).collect();
        coords.extend(scan.containers.iter().map(|a| a.open));
        coords.sort_unstable();
        coords.dedup();
        let ns = scan.strings.len();
        let na = scan.containers.len();
        let state = State {
            fen: Fenwick {
                t: vec![0; coords.len()],
            },
            str_len: scan.strings.iter().map(|s| s.end - s.start).collect(),
            str_keep: vec![None; ns],
            cont_var: vec![None; na],
            cont_val: vec![0; na],
            str_covered: vec![false; ns],
            cont_covered: vec![false; na],
        };
        let mut doc = Plan {
            input,
            scan,
            config,
            id,
            text_rule,
            line_mode,
            minify: false,
            rendered: vec![None; ns],
            coords,
            cut_index: (0..ns).map(|_| OnceCell::new()).collect(),
            salient: (0..na).map(|_| OnceCell::new()).collect(),
            state,
        };
        doc.render_lossless();
        doc
    }

    fn coord(&self, pos: usize) -> usize {
        self.coords.partition_point(|&c| c < pos)
    }

    /// Current size of the value's text in bytes.
    pub(super) fn size(&self) -> usize {
        let (a, b) = self.scan.root;
        let base = b - a - if self.minify { self.scan.ws } else { 0 };
        let saved = self.state.fen.prefix(self.coords.len());
        (base as i64 - saved).max(0) as usize
    }

    /// Step 1: the lossless text rules on strings flagged for them.
    fn render_lossless(&mut self) {
        let mut decoded = Vec::new();
        for i in 0..self.scan.strings.len() {
            let c = &self.scan.strings[i];
            if !c.lossless {
                continue;
            }
            let raw = &self.input[c.start + 1..c.end - 1];
            decoded.clear();
            decode(raw, &mut decoded);
            let Some(text) = (self.text_rule)(&decoded, self.config) else {
                continue;
            };
            if std::str::from_utf8(&text).is_err() {
                continue;
            }
            let mut out = Vec::with_capacity(text.len() + 16);
            out.push(b'"');
            encode(&text, &mut out);
            out.push(b'"');
            let old = c.end - c.start;
            if out.len() < old {
                let k = self.coord(c.start);
                self.state.fen.add(k, (old - out.len()) as i64);
                self.state.str_len[i] = out.len();
                self.rendered[i] = Some(out);
            }
        }
    }

    /// The lossless text rules on a whole elided string (`head`, separator, `marker`,
    /// separator, `tail`; raw JSON content), re-encoded; `None` unless that is shorter
    /// than `plain` (the same pieces as they are) and keeps the marker intact.
    fn render_elided(
        &self,
        head: &[u8],
        marker: &str,
        tail: &[u8],
        plain: usize,
    ) -> Option<Vec<u8>> {
        let mut decoded = Vec::with_capacity(head.len() + marker.len() + tail.len() + 8);
        decode(head, &mut decoded);
        decoded.extend_from_slice(SEPARATOR.as_bytes());
        decoded.extend_from_slice(marker.as_bytes());
        decoded.extend_from_slice(SEPARATOR.as_bytes());
        decode(tail, &mut decoded);
        let text = (self.text_rule)(&decoded, self.config)?;
        let needle = [
            SEPARATOR.as_bytes(),
            marker.as_bytes(),
            SEPARATOR.as_bytes(),
        ]
        .concat();
        if std::str::from_utf8(&text).is_err() || memmem::find(&text, &needle).is_none() {
            return None;
        }
        let mut out = Vec::with_capacity(text.len() + 16);
        out.push(b'"');
        encode(&text, &mut out);
        out.push(b'"');
        (out.len() < plain).then_some(out)
    }

    /// The text of string `i` elided at `keep`, quotes included, and the raw bytes it
    /// elides; `None` when fewer than [`MIN_ELIDED`] decoded bytes would go.
    fn string_elision(&self, i: usize, keep: usize) -> Option<(Vec<u8>, usize)> {
        let c = &self.scan.strings[i];
        let base = c.start + 1;
        let raw = &self.input[base..c.end - 1];
        let index = self.cut_index[i].get_or_init(|| CutIndex::new(raw));
        let (hr, hd) = index.locate(raw, keep, true);
        let (tr, td) = index.locate(raw, index.dec_len.saturating_sub(keep), false);
        if td < hd + MIN_ELIDED {
            return None;
        }
        // Islands only at the generous level: the tight level (which runs when the
        // budget is hard to meet) keeps every record rather than error lines.
        let generous = keep >= self.config.json_string_keep;
        if let Some(out) = generous
            .then(|| self.string_elision_with_islands(i, raw, (hr, hd), (tr, td)))
            .flatten()
        {
            return Some((out, tr - hr));
        }
        let (rs, re) = ((base + hr) as u64, (base + tr) as u64);
        let field = c
            .ptr
            .filter(|&(a, b)| !self.line_mode && b - a <= MAX_POINTER_BYTES);
        let restore = match field {
            Some((a, b)) => RestoreCall::FieldBytes {
                field: self.scan.pointers[a..b].to_string(),
                start: hd as u64,
                end: td as u64,
            },
            None => RestoreCall::Bytes { start: rs, end: re },
        };
        let marker = Marker {
            what: format!("{} bytes elided from this string", td - hd),
            rule: RuleId::JsonFields,
            lines: None,
            bytes: field.is_none().then_some((rs, re)),
            recovery: Recovery::Elided(restore),
        }
        .render(self.id);
        let mut out = Vec::with_capacity(hr + (raw.len() - tr) + marker.len() + 16);
        out.push(b'"');
        out.extend_from_slice(&raw[..hr]);
        out.extend_from_slice(SEPARATOR.as_bytes());
        encode(marker.as_bytes(), &mut out);
        out.extend_from_slice(SEPARATOR.as_bytes());
        out.extend_from_slice(&raw[tr..]);
        out.push(b'"');
        if c.lossless {
            if let Some(rendered) = self.render_elided(&raw[..hr], &marker, &raw[tr..], out.len()) {
                return Some((rendered, tr - hr));
            }
        }
        Some((out, tr - hr))
    }

    /// Like the plain string elision, but keeps up to [`MAX_ISLANDS`] salient lines
    /// (errors, failures; see `head-tail-elide`) of the elided middle of a multi-line
    /// string, each between two markers. `None` when the middle has none.
    fn string_elision_with_islands(
        &self,
        i: usize,
        raw: &[u8],
        (hr, hd): (usize, usize),
        (tr, td): (usize, usize),
    ) -> Option<Vec<u8>> {
        let c = &self.scan.strings[i];
        if self.line_mode || c.ptr.is_none_or(|(a, b)| b - a > MAX_POINTER_BYTES) {
            return None;
        }
        let islands = salient_segments(&raw[hr..tr]);
        if islands.is_empty() {
            return None;
        }
        let (a, b) = c.ptr.expect("checked");
        let field = &self.scan.pointers[a..b];
        let decoded_at = |x: usize| -> usize {
            let mut tmp = Vec::new();
            decode(&raw[..x], &mut tmp);
            tmp.len()
        };
        let mut out = Vec::with_capacity(hr + (raw.len() - tr) + 600 * (islands.len() + 1));
        out.push(b'"');
        out.extend_from_slice(&raw[..hr]);
        let mut gap_start = (hr, hd);
        let gap = |out: &mut Vec<u8>, from: (usize, usize), to_dec: usize| {
            let marker = Marker {
                what: format!("{} bytes elided from this string", to_dec - from.1),
                rule: RuleId::JsonFields,
                lines: None,
                bytes: None,
                recovery: Recovery::Elided(RestoreCall::FieldBytes {
                    field: field.to_string(),
                    start: from.1 as u64,
                    end: to_dec as u64,
                }),
            }
            .render(self.id);
            out.extend_from_slice(SEPARATOR.as_bytes());
            encode(marker.as_bytes(), out);
            out.extend_from_slice(SEPARATOR.as_bytes());
        };
        for (s0, e0) in islands {
            let (s, e) = (hr + s0, hr + e0);
            let sd = decoded_at(s);
            gap(&mut out, gap_start, sd);
            out.extend_from_slice(&raw[s..e]);
            gap_start = (e, decoded_at(e));
        }
        gap(&mut out, gap_start, td);
        out.extend_from_slice(&raw[tr..]);
        out.push(b'"');
        Some(out)
    }

    /// The elided runs of container `j` at `var`: the children between the `keep` at
    /// each end (and, when `var.salient`, around every salient member), each run
    /// longer than its marker.
    pub(super) fn runs(&self, j: usize, var: Var) -> Vec<(Run, Vec<u8>)> {
        let c = &self.scan.containers[j];
        let n = c.len();
        if n <= var.keep.saturating_mul(2) {
            return Vec::new();
        }
        let kids = &self.scan.kids;
        let salient = (c.object && var.salient).then(|| {
            self.salient[j].get_or_init(|| {
                (0..n)
                    .map(|k| member_is_salient(self.input, kids, c, k))
                    .collect()
            })
        });
        let mut spans = Vec::new();
        let mut k = var.keep;
        let last = n - var.keep;
        while k < last {
            if salient.is_some_and(|v| v[k]) {
                k += 1;
                continue;
            }
            let first = k;
            while k < last && !salient.is_some_and(|v| v[k]) {
                k += 1;
            }
            spans.push((first, k));
        }
        let count = spans.len();
        let mut out = Vec::with_capacity(count);
        let mut numbered = 0;
        for (a, b) in spans {
            let run = Run {
                s: kids[c.kids.0 + a] as usize,
                e: kid_end(self.input, kids, c, b - 1),
                kids: b - a,
            };
            numbered += 1;
            let marker = self.container_marker(c.object, run, (count > 1).then_some(numbered));
            if marker.len() < run.e - run.s {
                out.push((run, marker));
            }
        }
        out
    }

    /// The text standing in for `run`: a marker string element (arrays) or a marker
    /// member `"…snip": "[snip: …]"` (objects; the key numbered when `nth` is given).
    fn container_marker(&self, object: bool, run: Run, nth: Option<usize>) -> Vec<u8> {
        let (s, e) = (run.s as u64, run.e as u64);
        let (one, many, what) = if object {
            ("member", "members", "object")
        } else {
            ("item", "items", "array")
        };
        let text = Marker {
            what: format!(
                "{} {} elided from this {what}",
                run.kids,
                if run.kids == 1 { one } else { many }
            ),
            rule: RuleId::JsonFields,
            lines: None,
            bytes: Some((s, e)),
            recovery: Recovery::Elided(RestoreCall::Bytes { start: s, end: e }),
        }
        .render(self.id);
        let mut out = Vec::with_capacity(text.len() + 24);
        if object {
            let key = match nth {
                Some(n) => format!("{MARKER_KEY} {n}"),
                None => MARKER_KEY.to_string(),
            };
            push_quoted(&key, &mut out);
            out.extend_from_slice(b": ");
        }
        push_quoted(&text, &mut out);
        out
    }

    /// The saving of container `j` at `var` when nothing inside it is elided: its
    /// runs' spans minus their markers.
    fn cont_value(&self, j: usize, var: Var) -> (i64, Vec<(Run, Vec<u8>)>) {
        let runs = self.runs(j, var);
        let v = runs
            .iter()
            .map(|(r, m)| (r.e - r.s) as i64 - m.len() as i64)
            .sum();
        (v, runs)
    }

    /// Bytes saved by eliding string `i` at `keep` now (0 when not worth it).
    fn string_saving(&self, i: usize, keep: usize) -> usize {
        match self.string_elision(i, keep) {
            Some((text, _)) => self.state.str_len[i].saturating_sub(text.len()),
            None => 0,
        }
    }

    /// Saving of container `j` at `var` now (its value minus what the edits inside its
    /// runs already save).
    fn cont_saving(&self, j: usize, var: Var) -> usize {
        let (value, runs) = self.cont_value(j, var);
        let inside: i64 = runs
            .iter()
            .map(|(r, _)| {
                self.state.fen.prefix(self.coord(r.e)) - self.state.fen.prefix(self.coord(r.s))
            })
            .sum();
        (value - inside - self.state.cont_val[j]).max(0) as usize
    }

    fn apply_string(&mut self, i: usize, keep: usize) {
        let Some((text, _)) = self.string_elision(i, keep) else {
            return;
        };
        let c = &self.scan.strings[i];
        let k = self.coord(c.start);
        let delta = self.state.str_len[i] as i64 - text.len() as i64;
        self.state.fen.add(k, delta);
        self.state.str_len[i] = text.len();
        self.state.str_keep[i] = Some(keep);
    }

    fn apply_cont(&mut self, j: usize, var: Var) {
        let (value, runs) = self.cont_value(j, var);
        // Everything inside the runs is gone: its edits no longer count.
        for (r, _) in &runs {
            let lo = self.scan.strings.partition_point(|c| c.start < r.s);
            let hi = self.scan.strings.partition_point(|c| c.start < r.e);
            for i in lo..hi {
                if !self.state.str_covered[i] {
                    self.state.str_covered[i] = true;
                    let c = &self.scan.strings[i];
                    let saved = (c.end - c.start) as i64 - self.state.str_len[i] as i64;
                    if saved != 0 {
                        let k = self.coord(c.start);
                        self.state.fen.add(k, -saved);
                    }
                }
            }
            let lo = self.scan.containers.partition_point(|a| a.open < r.s);
            let hi = self.scan.containers.partition_point(|a| a.open < r.e);
            for a in lo..hi {
                if self.state.cont_covered[a] {
                    continue;
                }
                self.state.cont_covered[a] = true;
                if self.state.cont_var[a].take().is_some() {
                    let k = self.coord(self.scan.containers[a].open);
                    self.state.fen.add(k, -self.state.cont_val[a]);
                    self.state.cont_val[a] = 0;
                }
            }
        }
        self.set_cont(j, var, value);
    }

    /// Makes `var` (worth `value`) container `j`'s active variant.
    fn set_cont(&mut self, j: usize, var: Var, value: i64) {
        let k = self.coord(self.scan.containers[j].open);
        self.state.fen.add(k, value - self.state.cont_val[j]);
        self.state.cont_var[j] = Some(var);
        self.state.cont_val[j] = value;
    }

    /// Runs one level while over `budget`, the largest saving first.
    fn run_level(&mut self, level: Level, budget: usize) {
        let mut heap = BinaryHeap::new();
        if let Some(keep) = level.strings {
            for i in 0..self.scan.strings.len() {
                let eligible = self.scan.strings[i].lossy
                    && !self.state.str_covered[i]
                    && self.state.str_keep[i].is_none_or(|k| k > keep);
                if eligible {
                    let saving = self.string_saving(i, keep);
                    if saving > 0 {
                        let at = self.scan.strings[i].start;
                        heap.push((saving, std::cmp::Reverse(at), Piece::Str(i)));
                    }
                }
            }
        }
        for j in 0..self.scan.containers.len() {
            let a = &self.scan.containers[j];
            let var = if a.object {
                level.objects
            } else if a.record {
                level.record_arrays.map(|keep| Var {
                    keep,
                    salient: false,
                })
            } else {
                level.scalar_arrays.map(|keep| Var {
                    keep,
                    salient: false,
                })
            };
            let Some(var) = var else { continue };
            let done = self.state.cont_var[j].is_some_and(|old| !var.tighter_than(old));
            if self.state.cont_covered[j] || done {
                continue;
            }
            let saving = self.cont_saving(j, var);
            if saving > 0 {
                heap.push((saving, std::cmp::Reverse(a.open), Piece::Cont(j, var)));
            }
        }
        let keep = level.strings.unwrap_or(0);
        let mut final_tries = 0;
        while self.size() > budget {
            let excess = self.size() - budget;
            // The last step: the smallest piece that is enough on its own, rather than
            // the largest, so the budget is met without overshooting it.
            if final_tries < FINAL_TRIES && heap.peek().is_some_and(|top| top.0 >= excess) {
                final_tries += 1;
                let mut enough: Vec<_> = heap.iter().filter(|e| e.0 >= excess).collect();
                enough.sort_unstable();
                let pick = enough
                    .into_iter()
                    .map(|e| e.2)
                    .find(|&p| self.saving_now(p, keep) >= excess);
                if let Some(piece) = pick {
                    self.apply_piece(piece, keep);
                    continue;
                }
            }
            let Some((saving, at, piece)) = heap.pop() else {
                break;
            };
            let now = self.saving_now(piece, keep);
            if now < saving {
                if now > 0 {
                    heap.push((now, at, piece));
                }
                continue;
            }
            self.apply_piece(piece, keep);
        }
    }

    /// What eliding `piece` would save now (0 when it is covered or not worth it).
    fn saving_now(&self, piece: Piece, keep: usize) -> usize {
        match piece {
            Piece::Str(i) if !self.state.str_covered[i] => self.string_saving(i, keep),
            Piece::Cont(j, v) if !self.state.cont_covered[j] => self.cont_saving(j, v),
            _ => 0,
        }
    }

    fn apply_piece(&mut self, piece: Piece, keep: usize) {
        match piece {
            Piece::Str(i) => self.apply_string(i, keep),
            Piece::Cont(j, v) => self.apply_cont(j, v),
        }
    }

    /// Whether some lossy edit is active.
    pub(super) fn has_lossy(&self) -> bool {
        self.state.str_keep.iter().any(Option::is_some)
            || self.state.cont_var.iter().any(Option::is_some)
    }

    /// Step 3: lossy elision until the value fits `budget` or nothing more can go, then
    /// room left under it goes back to the elided containers.
    pub(super) fn elide(&mut self, budget: usize) {
        let k = self.config.json_string_keep;
        let a = self.config.json_array_keep;
        let (tk, ta) = (k / TIGHT_DIVISOR, a.min(1));
        let none = Level {
            strings: None,
            scalar_arrays: None,
            record_arrays: None,
            objects: None,
        };
        let gentle = Level {
            strings: Some(k),
            scalar_arrays: Some(a),
            ..none
        };
        let tight = Level {
            strings: Some(tk),
            scalar_arrays: Some(ta),
            ..none
        };
        // Objects keep their first and last members and the salient ones; as a last
        // resort, only the first and last.
        let objects = Level {
            objects: Some(Var {
                keep: a.max(1),
                salient: true,
            }),
            ..none
        };
        let objects_tight = Level {
            objects: Some(Var {
                keep: 1,
                salient: true,
            }),
            ..none
        };
        let objects_bare = Level {
            objects: Some(Var {
                keep: 1,
                salient: false,
            }),
            ..none
        };
        let start = self.state.clone();
        // Plan A keeps every record of every array.
        for level in [gentle, tight, objects, objects_tight] {
            self.run_level(level, budget);
        }
        if self.size() > budget {
            // Plan B: records may go.
            self.state = start;
            let records = Level {
                record_arrays: Some(a),
                ..none
            };
            let all_tight = Level {
                record_arrays: Some(ta),
                ..tight
            };
            for level in [
                gentle,
                records,
                all_tight,
                objects,
                objects_tight,
                objects_bare,
            ] {
                self.run_level(level, budget);
            }
        }
        self.give_back(budget);
    }

    /// While the value is more than a tenth of `budget` under it, elided containers
    /// keep more children at each end (doubling, in turn, then the largest keep that
    /// fits), never going over `budget`. The children given back are shown as they
    /// are in the original.
    fn give_back(&mut self, budget: usize) {
        let target = budget - budget / GIVE_BACK_DIVISOR;
        let active: Vec<usize> = (0..self.scan.containers.len())
            .filter(|&j| self.state.cont_var[j].is_some() && !self.state.cont_covered[j])
            .collect();
        // Size after moving container `j` to `var`, and its value there.
        let trial = |p: &Self, j: usize, var: Var| -> (usize, i64) {
            let (value, _) = p.cont_value(j, var);
            let size = p.size() as i64 + p.state.cont_val[j] - value;
            (size.max(0) as usize, value)
        };
        let mut progress = true;
        while progress && self.size() < target {
            progress = false;
            for &j in &active {
                let Some(var) = self.state.cont_var[j] else {
                    continue;
                };
                let cap = self.scan.containers[j].len().div_ceil(2);
                if var.keep >= cap || self.size() >= target {
                    continue;
                }
                let next = Var {
                    keep: var.keep.saturating_mul(2).max(var.keep + 1).min(cap),
                    ..var
                };
                let (size, value) = trial(self, j, next);
                if size <= budget {
                    self.set_cont(j, next, value);
                    progress = true;
                }
            }
        }
        for &j in &active {
            if self.size() >= target {
                break;
            }
            let Some(var) = self.state.cont_var[j] else {
                continue;
            };
            let cap = self.scan.containers[j].len().div_ceil(2);
            let (mut lo, mut hi) = (
                var.keep,
                var.keep.saturating_mul(2).max(var.keep + 1).min(cap),
            );
            while lo < hi {
                let mid = lo + (hi - lo).div_ceil(2);
                if trial(self, j, Var { keep: mid, ..var }).0 <= budget {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            if lo > var.keep {
                let next = Var { keep: lo, ..var };
                let (_, value) = trial(self, j, next);
                self.set_cont(j, next, value);
            }
        }
    }

    /// Appends the value's new text (without surrounding whitespace) to `out`.
    pub(super) fn render(&self, out: &mut Vec<u8>, stats: &mut Stats) {
        // Active edits as (start, end, replacement), in input order.
        let mut edits: Vec<(usize, usize, Vec<u8>)> = Vec::new();
        for (i, c) in self.scan.strings.iter().enumerate() {
            if self.state.str_covered[i] {
                continue;
            }
            if let Some(keep) = self.state.str_keep[i] {
                if let Some((text, raw)) = self.string_elision(i, keep) {
                    stats.strings_elided += 1;
                    stats.bytes_elided += raw as u64;
                    edits.push((c.start, c.end, text));
                }
            } else if let Some(text) = &self.rendered[i] {
                stats.strings_rendered += 1;
                edits.push((c.start, c.end, text.clone()));
            }
        }
        for j in 0..self.scan.containers.len() {
            if self.state.cont_covered[j] {
                continue;
            }
            if let Some(var) = self.state.cont_var[j] {
                let object = self.scan.containers[j].object;
                for (r, marker) in self.runs(j, var) {
                    if object {
                        stats.members_elided += r.kids as u64;
                    } else {
                        stats.items_elided += r.kids as u64;
                    }
                    stats.bytes_elided += (r.e - r.s) as u64;
                    edits.push((r.s, r.e, marker));
                }
            }
        }
        edits.sort_unstable_by_key(|e| e.0);
        let (mut pos, end) = self.scan.root;
        for (s, e, text) in edits {
            self.copy(pos, s, out);
            out.extend_from_slice(&text);
            pos = e;
        }
        self.copy(pos, end, out);
    }

    /// Copies `input[a..b]` (which starts outside any string), dropping whitespace
    /// between tokens when minifying.
    fn copy(&self, a: usize, b: usize, out: &mut Vec<u8>) {
        let src = &self.input[a..b];
        if !self.minify {
            out.extend_from_slice(src);
            return;
        }
        let mut i = 0;
        while i < src.len() {
            let c = src[i];
            if is_ws(c) {
                i += 1;
            } else if c == b'"' {
                let mut j = i + 1;
                while j < src.len() {
                    match src[j] {
                        b'"' => break,
                        b'\\' => j += 2,
                        _ => j += 1,
                    }
                }
                let stop = (j + 1).min(src.len());
                out.extend_from_slice(&src[i..stop]);
                i = stop;
            } else {
                let run = src[i..]
                    .iter()
                    .position(|&c| is_ws(c) || c == b'"')
                    .map_or(src.len(), |p| i + p);
                out.extend_from_slice(&src[i..run]);
                i = run;
            }
        }
    }
}

/// Whether member `k` of object `c` is worth keeping in an elided middle: its key is
/// salient (error words, see [`crate::salience`]), or its value is a scalar that is
/// salient or short and named like a status (`error`, `status`, `message`, `code`,
/// `name`, `version`, `latest`, `reason`).
fn member_is_salient(b: &[u8], kids: &[Kid], c: &Container, k: usize) -> bool {
    let start = kids[c.kids.0 + k] as usize;
    let end = kid_end(b, kids, c, k);
    // The key's closing quote: the first unescaped `"` after the opening one.
    let mut j = start + 1;
    while j < end && b[j] != b'"' {
        j += if b[j] == b'\\' { 2 } else { 1 };
    }
    let key = &b[start + 1..j.min(end)];
    if crate::salience::salience(key) >= 2 {
        return true;
    }
    let mut v = j + 1;
    while v < end && (is_ws(b[v]) || b[v] == b':') {
        v += 1;
    }
    let value = &b[v.min(end)..end];
    if value.first().is_some_and(|c| matches!(c, b'{' | b'[')) || value.len() > ISLAND_MAX {
        return false;
    }
    (value.len() <= SHORT_SCALAR && SALIENT_NAMES.iter().any(|n| key.eq_ignore_ascii_case(n)))
        || crate::salience::salience(value) >= 2
}
