//! The planner: chooses the elisions that meet the budget and writes the output.

use super::*;

/// Longest salient line kept from a string (raw, escaped bytes).
pub(super) const ISLAND_MAX: usize = 600;
/// Island room of a string elided at the configured keep, as a share of the budget:
/// `max_bytes / ISLAND_SHARE` (room left under the budget is given back afterwards).
const ISLAND_SHARE: usize = 4;
/// Times `give_back` grows one string's island room, at most.
const MAX_ROOM_STEPS: usize = 64;
/// Line numbers a marker lists for the salient lines it covers, at most (then `…`),
/// as the text rules' markers do.
const LISTED_LINES: usize = 4;

/// One salient line of a JSON string (errors, failures: priority 2 or above, see
/// `head-tail-elide`), found in its raw (escaped) text split on `\n` escapes.
#[derive(Clone, Copy)]
pub(super) struct SalLine {
    /// Highest priority of its salient words.
    score: u8,
    /// Raw offset of its first byte.
    start: usize,
    /// Raw offset one past its `\n` escape (the end of the string for the last line).
    end: usize,
    /// 1-based line number in the decoded string.
    line: usize,
}

/// The piece of a salient line that falls in an elided middle: raw range `s..e`
/// (within the line, its `\n` escape included when the middle holds it).
#[derive(Clone, Copy)]
pub(super) struct Seg {
    score: u8,
    s: usize,
    e: usize,
    line: usize,
}

/// Calls `f(k)` for each `\n` escape at raw offset `k` of `raw` (a JSON string's raw
/// text): escaped backslashes followed by `n` are skipped.
fn for_each_newline(raw: &[u8], mut f: impl FnMut(usize)) {
    let mut from = 0usize;
    while let Some(k) = memchr::memmem::find(&raw[from..], b"\\n").map(|k| from + k) {
        let backslashes = raw[..k].iter().rev().take_while(|&&b| b == b'\\').count();
        from = k + 2;
        if backslashes % 2 == 0 {
            f(k);
        }
    }
}

/// Every salient line of `raw`, a JSON string's raw text, in order: one scan for the
/// salient words (none holds a backslash, so none crosses a `\n` escape) and one for
/// the line ends.
pub(super) fn salient_lines(raw: &[u8]) -> Vec<SalLine> {
    let words = crate::salience::salient_matches(raw);
    if !words.iter().any(|&(_, p)| p >= 2) {
        return Vec::new();
    }
    let mut ends = Vec::new();
    for_each_newline(raw, |k| ends.push(k + 2));
    let mut out: Vec<SalLine> = Vec::new();
    for (at, prio) in words {
        if prio < 2 {
            continue;
        }
        // The line holding `at`: the first whose end is past it.
        let k = ends.partition_point(|&e| e <= at);
        let start = if k == 0 { 0 } else { ends[k - 1] };
        match out.last_mut() {
            Some(l) if l.start == start => l.score = l.score.max(prio),
            _ => out.push(SalLine {
                score: prio,
                start,
                end: ends.get(k).copied().unwrap_or(raw.len()),
                line: k + 1,
            }),
        }
    }
    out
}

/// The pieces of `lines` (the string's salient lines) inside the elided middle
/// `hr..tr` (raw offsets), in order. A line the cut goes through gives the piece on
/// the middle's side.
fn segments(lines: &[SalLine], hr: usize, tr: usize) -> Vec<Seg> {
    let first = lines.partition_point(|l| l.end <= hr);
    lines[first..]
        .iter()
        .take_while(|l| l.start < tr)
        .map(|l| Seg {
            score: l.score,
            s: l.start.max(hr),
            e: l.end.min(tr),
            line: l.line,
        })
        .collect()
}

/// `N bytes elided from this string`, plus the salient lines among them when there
/// are any: `, K salient lines among them at string lines 7000, 13000`, listing at
/// most [`LISTED_LINES`] line numbers (1-based, lines of the decoded string), then
/// `, …`.
fn string_what(bytes: usize, hidden: &[usize]) -> String {
    let mut what = format!("{bytes} bytes elided from this string");
    if let [first, ..] = hidden {
        let n = hidden.len();
        let s = if n == 1 { "" } else { "s" };
        let _ = write!(
            what,
            ", {n} salient line{s} among them at string line{s} {first}"
        );
        for l in hidden.iter().take(LISTED_LINES).skip(1) {
            let _ = write!(what, ", {l}");
        }
        if n > LISTED_LINES {
            what.push_str(", …");
        }
    }
    what
}

/// `N items elided from this array`, plus the items among them that report a failure
/// (see `item_is_salient`) when some but not all do: `, 2 salient items among them at
/// items 123, 321`, listing at most [`LISTED_LINES`] indices (0-based, the array's own), then `, …`.
/// An item that reports a failure stays in the output (see [`Plan::runs`]) unless the
/// array holds too many of them to be worth keeping or the budget left no room.
fn array_what(kids: usize, salient: &[usize]) -> String {
    let mut what = format!(
        "{kids} item{} elided from this array",
        if kids == 1 { "" } else { "s" }
    );
    if let [first, ..] = salient {
        let n = salient.len();
        let s = if n == 1 { "" } else { "s" };
        let _ = write!(what, ", {n} salient item{s} among them at item{s} {first}");
        for k in salient.iter().take(LISTED_LINES).skip(1) {
            let _ = write!(what, ", {k}");
        }
        if n > LISTED_LINES {
            what.push_str(", …");
        }
    }
    what
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
    /// Arrays keep their rare items that report a failure (see [`rare_items`]).
    pub(super) arrays_salient: bool,
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
    /// Per string: room for salient lines added by `give_back` (raw bytes).
    pub(super) str_room: Vec<usize>,
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
    /// Per string: its salient lines, built on first use.
    pub(super) sal_lines: Vec<OnceCell<Vec<SalLine>>>,
    /// Per container: which children are salient members (objects), built on first use.
    pub(super) salient: Vec<OnceCell<Vec<bool>>>,
    /// The opening offsets (ascending) of the arrays of records (see
    /// [`Container::record`]) with at least [`MIN_KIDS`] items.
    pub(super) record_opens: Vec<usize>,
    /// Per container, per variant asked for: the value and runs of
    /// [`Plan::cont_value`], which depend on the input alone (not on the edits
    /// chosen), built on first use: the levels and `give_back` ask for the same ones
    /// many times.
    pub(super) run_sets: Vec<RefCell<RunSets>>,
    pub(super) state: State,
}

/// One container's [`RunSet`]s, each with the variant it is for.
pub(super) type RunSets = Vec<(Var, Rc<RunSet>)>;

/// The elided runs of one container at one variant, and their value: the runs'
/// spans minus their markers (see [`Plan::runs`]).
pub(super) struct RunSet {
    pub(super) value: i64,
    pub(super) runs: Vec<Run>,
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
            str_room: vec![0; ns],
            cont_var: vec![None; na],
            cont_val: vec![0; na],
            str_covered: vec![false; ns],
            cont_covered: vec![false; na],
        };
        let record_opens = {
            let mut r: Vec<usize> = scan
                .containers
                .iter()
                .filter(|a| !a.object && a.record)
                .map(|a| a.open)
                .collect();
            r.sort_unstable();
            r
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
            sal_lines: (0..ns).map(|_| OnceCell::new()).collect(),
            salient: (0..na).map(|_| OnceCell::new()).collect(),
            record_opens,
            run_sets: (0..na).map(|_| RefCell::new(Vec::new())).collect(),
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

    /// The elided string `plain` (quotes included, raw JSON content, holding the
    /// `markers` between separators) decoded, put through the lossless text rules and
    /// re-encoded; `None` unless that is shorter than `plain` and keeps every marker
    /// intact.
    fn render_elided(&self, plain: &[u8], markers: &[String]) -> Option<Vec<u8>> {
        let mut decoded = Vec::with_capacity(plain.len());
        decode(&plain[1..plain.len() - 1], &mut decoded);
        let text = (self.text_rule)(&decoded, self.config)?;
        if std::str::from_utf8(&text).is_err() {
            return None;
        }
        for marker in markers {
            let needle = [
                SEPARATOR.as_bytes(),
                marker.as_bytes(),
                SEPARATOR.as_bytes(),
            ]
            .concat();
            memmem::find(&text, &needle)?;
        }
        let mut out = Vec::with_capacity(text.len() + 16);
        out.push(b'"');
        encode(&text, &mut out);
        out.push(b'"');
        (out.len() < plain.len()).then_some(out)
    }

    /// Room for salient lines kept from string `i`'s middle when elided at `keep`,
    /// raw bytes: `max_bytes / ISLAND_SHARE` at the configured keep (none at the tight
    /// keep), plus what `give_back` added.
    fn island_room(&self, i: usize, keep: usize) -> usize {
        let base = if keep >= self.config.json_string_keep {
            self.config.max_bytes / ISLAND_SHARE
        } else {
            0
        };
        base.saturating_add(self.state.str_room[i])
    }

    /// The range of string `i`'s RFC 6901 pointer in [`Scan::pointers`] when its markers
    /// cite it (a document, not JSON Lines, and a pointer short enough to quote); else
    /// they cite the raw byte range.
    fn pointer(&self, i: usize) -> Option<(usize, usize)> {
        self.scan.strings[i]
            .ptr
            .filter(|&(a, b)| !self.line_mode && b - a <= MAX_POINTER_BYTES)
    }

    /// The text of string `i` elided at `keep`, quotes included, and the raw byte range
    /// (of the input, half-open) it elides; `None` when fewer than [`MIN_ELIDED`]
    /// decoded bytes would go.
    ///
    /// Salient lines of the elided middle stay, each between two markers, while they
    /// fit [`Self::island_room`] (the most salient first); each marker names the
    /// salient lines it covers by their line numbers in the decoded string.
    fn string_elision(&self, i: usize, keep: usize) -> Option<(Vec<u8>, (usize, usize))> {
        let c = &self.scan.strings[i];
        let base = c.start + 1;
        let raw = &self.input[base..c.end - 1];
        let index = self.cut_index[i].get_or_init(|| CutIndex::new(raw));
        let (hr, hd) = index.locate(raw, keep, true);
        let (tr, td) = index.locate(raw, index.dec_len.saturating_sub(keep), false);
        if td < hd + MIN_ELIDED {
            return None;
        }
        let segs = segments(self.sal_lines[i].get_or_init(|| salient_lines(raw)), hr, tr);
        let pointer = self.pointer(i);
        if let Some((a, b)) = pointer {
            let room = self.island_room(i, keep);
            if !segs.is_empty() && room > 0 {
                let field = &self.scan.pointers[a..b];
                // Kept as printed (escapes and all): kept lines read as the tool
                // printed them, and need no footer to account for them.
                let out =
                    self.string_elision_with_islands(raw, field, &segs, room, (hr, hd), (tr, td));
                return Some((out, (base + hr, base + tr)));
            }
        }
        let (rs, re) = ((base + hr) as u64, (base + tr) as u64);
        let restore = match pointer {
            Some((a, b)) => RestoreCall::FieldBytes {
                field: self.scan.pointers[a..b].to_string(),
                start: hd as u64,
                end: td as u64,
            },
            None => RestoreCall::Bytes { start: rs, end: re },
        };
        let hidden: Vec<usize> = segs.iter().map(|g| g.line).collect();
        let marker = Marker {
            what: string_what(td - hd, &hidden),
            rule: RuleId::JsonFields,
            lines: None,
            bytes: pointer.is_none().then_some((rs, re)),
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
            if let Some(rendered) = self.render_elided(&out, &[marker]) {
                return Some((rendered, (base + hr, base + tr)));
            }
        }
        Some((out, (base + hr, base + tr)))
    }

    /// The elided string with salient lines of its middle kept, each between two
    /// markers (`field` is its pointer): the most salient first while they fit `room`
    /// raw bytes (with their markers), then shown in order.
    fn string_elision_with_islands(
        &self,
        raw: &[u8],
        field: &str,
        segs: &[Seg],
        room: usize,
        (hr, hd): (usize, usize),
        (tr, td): (usize, usize),
    ) -> Vec<u8> {
        // A marker's cost, roughly: its fixed text, the pointer and the id.
        let marker_cost = 160 + field.len();
        let mut order: Vec<usize> = (0..segs.len()).collect();
        order.sort_by(|&x, &y| segs[y].score.cmp(&segs[x].score).then(x.cmp(&y)));
        let mut kept = vec![false; segs.len()];
        let mut used = 0usize;
        for k in order {
            let len = segs[k].e - segs[k].s;
            let cost = len + marker_cost;
            // A line longer than an island is counted, never shown in part.
            if len > ISLAND_MAX || used + cost > room {
                continue;
            }
            used += cost;
            kept[k] = true;
        }
        // Decoded offset of raw offset `x`, counted on from the last one asked for (the
        // offsets asked for only grow, and each is on an escape boundary).
        let at = std::cell::Cell::new((hr, hd));
        let decoded_at = |x: usize| -> usize {
            let (r, d) = at.get();
            let d = d + CutIndex::new(&raw[r..x]).dec_len;
            at.set((x, d));
            d
        };
        let mut out = Vec::with_capacity(hr + (raw.len() - tr) + used + marker_cost + 16);
        out.push(b'"');
        out.extend_from_slice(&raw[..hr]);
        let mut gap_start = (hr, hd);
        let mut hidden: Vec<usize> = Vec::new();
        let gap =
            |out: &mut Vec<u8>, hidden: &mut Vec<usize>, from: (usize, usize), to_dec: usize| {
                if to_dec == from.1 && hidden.is_empty() {
                    return;
                }
                let marker = Marker {
                    what: string_what(to_dec - from.1, hidden),
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
                hidden.clear();
                out.extend_from_slice(SEPARATOR.as_bytes());
                encode(marker.as_bytes(), out);
                out.extend_from_slice(SEPARATOR.as_bytes());
            };
        for (k, g) in segs.iter().enumerate() {
            if !kept[k] {
                hidden.push(g.line);
                continue;
            }
            let sd = decoded_at(g.s);
            gap(&mut out, &mut hidden, gap_start, sd);
            out.extend_from_slice(&raw[g.s..g.e]);
            gap_start = (g.e, decoded_at(g.e));
        }
        gap(&mut out, &mut hidden, gap_start, td);
        out.extend_from_slice(&raw[tr..]);
        out.push(b'"');
        out
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
        // Salient children: object members as `member_is_salient` says, array items
        // that report a failure (counted in the markers, kept while rare).
        let all = (var.salient || !c.object).then(|| {
            self.salient[j].get_or_init(|| {
                // An array of records: the items with a rare status value too.
                let rare = if c.object || !c.record {
                    Vec::new()
                } else {
                    let items: Vec<&[u8]> = (0..n)
                        .map(|k| {
                            &self.input
                                [kids[c.kids.0 + k] as usize..kid_end(self.input, kids, c, k)]
                        })
                        .collect();
                    rare_value_items(&items)
                };
                (0..n)
                    .map(|k| {
                        if c.object {
                            // A member holding a list of records is what the document
                            // is about (`items` of `kubectl get -o json`, `tests` of a
                            // test report): eliding it whole would leave an envelope.
                            member_is_salient(self.input, kids, c, k)
                                || self
                                    .record_opens
                                    .binary_search(&value_start(self.input, kids, c, k))
                                    .is_ok()
                        } else {
                            rare.get(k) == Some(&true) || item_is_salient(self.input, kids, c, k)
                        }
                    })
                    .collect()
            })
        });
        let salient = all.filter(|v| {
            var.salient && (c.object || rare_items(v.iter().filter(|&&s| s).count(), n))
        });
        // A salient item stays when it is short: an island, or a record of at most an
        // eighth of the budget (a pod of `kubectl get pods -o json`, whose failure is
        // deep inside it); a longer one (a package's whole record) would take the
        // room the rest of the document needs.
        let item_max = ISLAND_MAX.max(self.config.max_bytes / 8);
        let stays = |k: usize| {
            salient.is_some_and(|v| v[k])
                && (c.object
                    || kid_end(self.input, kids, c, k) - kids[c.kids.0 + k] as usize <= item_max)
        };
        let mut spans = Vec::new();
        let mut k = var.keep;
        let last = n - var.keep;
        while k < last {
            if stays(k) {
                k += 1;
                continue;
            }
            let first = k;
            while k < last && !stays(k) {
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
            // An array's items that report a failure in this run, when not all have one.
            let listed: Vec<usize> = match all {
                Some(v) if !c.object => (a..b).filter(|&k| v[k]).collect(),
                _ => Vec::new(),
            };
            let listed = if listed.len() < b - a {
                listed
            } else {
                Vec::new()
            };
            let marker =
                self.container_marker(c.object, run, (count > 1).then_some(numbered), &listed);
            let pad = self.offset_padding(&[run.s, run.e]);
            if marker.len() + pad < run.e - run.s {
                out.push((run, marker));
            }
        }
        out
    }

    /// The text standing in for `run`: a marker string element (arrays) or a marker
    /// member `"…snip": "[snip: …]"` (objects; the key numbered when `nth` is given).
    /// `salient`: the indices of the run's items that report a failure (arrays).
    fn container_marker(
        &self,
        object: bool,
        run: Run,
        nth: Option<usize>,
        salient: &[usize],
    ) -> Vec<u8> {
        let (s, e) = (run.s as u64, run.e as u64);
        let what = if object {
            let m = if run.kids == 1 { "member" } else { "members" };
            format!("{} {m} elided from this object", run.kids)
        } else {
            array_what(run.kids, salient)
        };
        let text = Marker {
            what,
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
    fn cont_value(&self, j: usize, var: Var) -> Rc<RunSet> {
        if let Some((_, set)) = self.run_sets[j].borrow().iter().find(|s| s.0 == var) {
            return Rc::clone(set);
        }
        let runs = self.runs(j, var);
        let set = Rc::new(RunSet {
            value: runs
                .iter()
                .map(|(r, m)| (r.e - r.s) as i64 - m.len() as i64)
                .sum(),
            runs: runs.into_iter().map(|(r, _)| r).collect(),
        });
        self.run_sets[j].borrow_mut().push((var, Rc::clone(&set)));
        set
    }

    /// Bytes saved by eliding string `i` at `keep` now (0 when not worth it), its
    /// marker's raw byte offsets counted at seven digits ([`Plan::offset_padding`]).
    fn string_saving(&self, i: usize, keep: usize) -> usize {
        match self.string_elision(i, keep) {
            Some((text, (rs, re))) => {
                // Markers with a pointer cite offsets inside the string (the same in a
                // second pass); the others cite the document's raw bytes.
                let pad = match self.pointer(i) {
                    Some(_) => 0,
                    None => self.offset_padding(&[rs, re]),
                };
                self.state.str_len[i].saturating_sub(text.len() + pad)
            }
            None => 0,
        }
    }

    /// How many bytes longer a marker citing the raw byte offsets `offsets` (in its
    /// byte range, and in its restore call when it has one) would be with each at
    /// seven digits, as [`Marker::sizing_len`] counts them. A net-win test that adds
    /// this decides alike in a second pass, where the same text sits at lower offsets
    /// with fewer digits; without it, a second pass elided what the first had kept.
    fn offset_padding(&self, offsets: &[usize]) -> usize {
        const DIGITS: usize = 7;
        let times = 1 + usize::from(self.id.is_some());
        let digits = |x: usize| x.checked_ilog10().map_or(1, |d| d as usize + 1);
        offsets
            .iter()
            .map(|&x| DIGITS.saturating_sub(digits(x)))
            .sum::<usize>()
            * times
    }

    /// Saving of container `j` at `var` now (its value minus what the edits inside its
    /// runs already save).
    fn cont_saving(&self, j: usize, var: Var) -> usize {
        let set = self.cont_value(j, var);
        let (value, runs) = (set.value, &set.runs);
        let inside: i64 = runs
            .iter()
            .map(|r| {
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
        let set = self.cont_value(j, var);
        let value = set.value;
        // Everything inside the runs is gone: its edits no longer count.
        for r in &set.runs {
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
                    salient: level.arrays_salient,
                })
            } else {
                level.scalar_arrays.map(|keep| Var {
                    keep,
                    salient: level.arrays_salient,
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
            arrays_salient: true,
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
            // As a last resort, arrays lose their salient items too (the markers
            // count them).
            let arrays_bare = Level {
                arrays_salient: false,
                ..all_tight
            };
            for level in [
                gentle,
                records,
                all_tight,
                objects,
                objects_tight,
                objects_bare,
                arrays_bare,
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
        self.give_back_strings(budget, target);
        let active: Vec<usize> = (0..self.scan.containers.len())
            .filter(|&j| self.state.cont_var[j].is_some() && !self.state.cont_covered[j])
            .collect();
        // Size after moving container `j` to `var`, and its value there.
        let trial = |p: &Self, j: usize, var: Var| -> (usize, i64) {
            let value = p.cont_value(j, var).value;
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

    /// Gives room left under `budget` to elided strings: first more of their salient
    /// lines (the island room doubles, or takes what is left), then longer kept ends
    /// (the keep doubles, then the largest keep that fits). Never goes over `budget`.
    /// JSON Lines lines are not given room: each is elided to its share of the budget,
    /// and whole lines go after that.
    fn give_back_strings(&mut self, budget: usize, target: usize) {
        if self.line_mode {
            return;
        }
        let active: Vec<usize> = (0..self.scan.strings.len())
            .filter(|&i| self.state.str_keep[i].is_some() && !self.state.str_covered[i])
            .collect();
        // Moves string `i` to (`keep`, `room`) if the value stays within `budget`.
        let try_move = |p: &mut Self, i: usize, keep: usize, room: usize| -> bool {
            let old_room = p.state.str_room[i];
            let old_len = p.state.str_len[i];
            p.state.str_room[i] = room;
            match p.string_elision(i, keep) {
                Some((text, _))
                    if text.len() != old_len && p.size() + text.len() <= budget + old_len =>
                {
                    p.apply_string(i, keep);
                    true
                }
                _ => {
                    p.state.str_room[i] = old_room;
                    false
                }
            }
        };
        for &i in &active {
            let keep = self.state.str_keep[i].expect("active");
            // Each move keeps another island or ends the loop; the bound only caps the
            // work on a string of very many salient lines.
            for _ in 0..MAX_ROOM_STEPS {
                if self.size() >= target {
                    break;
                }
                let room = self.island_room(i, keep).max(1024);
                let grown = self.state.str_room[i] + room;
                let left = self.state.str_room[i] + (budget - self.size());
                if !try_move(self, i, keep, grown) && !try_move(self, i, keep, left) {
                    break;
                }
            }
        }
        for &i in &active {
            let dec_len = self.cut_index[i].get().map_or(0, |x| x.dec_len);
            let cap = dec_len / 2;
            while self.size() < target {
                let keep = self.state.str_keep[i].expect("active");
                let room = self.state.str_room[i];
                if keep >= cap {
                    break;
                }
                let next = keep.saturating_mul(2).max(keep + 1).min(cap);
                if try_move(self, i, next, room) {
                    continue;
                }
                let (mut lo, mut hi) = (keep, next.saturating_sub(1));
                while lo < hi {
                    let mid = lo + (hi - lo).div_ceil(2);
                    let fits = self.string_elision(i, mid).is_some_and(|(t, _)| {
                        self.size() + t.len() <= budget + self.state.str_len[i]
                    });
                    if fits {
                        lo = mid;
                    } else {
                        hi = mid - 1;
                    }
                }
                if lo > keep {
                    self.apply_string(i, lo);
                }
                break;
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
                if let Some((text, (rs, re))) = self.string_elision(i, keep) {
                    stats.strings_elided += 1;
                    stats.bytes_elided += (re - rs) as u64;
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

/// Salient items an array keeps in its elided middle, at most (more are a list of
/// errors, not a few failures among successes).
const MAX_KEPT_ITEMS: usize = 32;

/// Whether `salient` items of an array of `n` are few enough to keep them all: at
/// most a quarter of the items and at most [`MAX_KEPT_ITEMS`].
fn rare_items(salient: usize, n: usize) -> bool {
    salient <= MAX_KEPT_ITEMS && salient * 4 <= n
}

/// Member names whose short string value reports how a record went (`"conclusion":
/// "failure"`): such a value naming a failure makes its item salient.
const STATUS_NAMES: [&[u8]; 9] = [
    b"status",
    b"state",
    b"conclusion",
    b"result",
    b"outcome",
    b"level",
    b"severity",
    b"message",
    b"reason",
];

/// Whether item `k` of array `c` reports a failure: at any depth, a member named like a
/// status ([`STATUS_NAMES`]) whose string value (at most [`SHORT_SCALAR`] bytes) holds
/// an error word standing alone ([`crate::salience::names_a_failure`]), or a member
/// named by an error word (`error`, `errors`, `exception`) whose value is not empty
/// (`null`, `false`, `0`, `""`, `[]`, `{}`), or a member naming an exit status whose
/// value is an integer other than 0 ([`nonzero_exit`]); or a string item holding an
/// error word standing alone. Names and prose in other members (a package called `errno`, a
/// description "Error type for …") are not failures.
fn item_is_salient(b: &[u8], kids: &[Kid], c: &Container, k: usize) -> bool {
    let start = kids[c.kids.0 + k] as usize;
    let end = kid_end(b, kids, c, k);
    // One scan of the whole item rules out most items (no salient word at all, a
    // non-zero exit status included) before its members are read one by one.
    let t = &b[start..end];
    crate::salience::salience(t) >= 2 && reports_failure(t)
}

/// [`item_is_salient`] on an item's raw text. An item that is a string (a line of a
/// log kept as an array of strings) reports a failure when it holds an error word
/// standing alone.
fn reports_failure(t: &[u8]) -> bool {
    if t.first() == Some(&b'"') {
        return crate::salience::names_a_failure(t);
    }
    let mut found = false;
    each_member(t, false, |key, value| {
        let status = STATUS_NAMES.iter().any(|n| key.eq_ignore_ascii_case(n));
        let error_key = crate::salience::names_a_failure(key);
        found = match value {
            Member::Str(v) => {
                (status && v.len() <= SHORT_SCALAR && crate::salience::names_a_failure(v))
                    || (error_key && !v.is_empty())
            }
            Member::Open { empty } => error_key && !empty,
            Member::Scalar(v) => {
                (error_key && !matches!(v, b"null" | b"false" | b"0")) || nonzero_exit(key, v)
            }
        };
        !found
    });
    found
}

/// Whether member `key` with the raw scalar `value` reports a process that failed: the
/// key is a salient word naming an exit status ([`crate::salience::names_an_exit_status`]:
/// `exit_code`, `exitCode`, `returncode`, …) and the value is an integer other than 0,
/// as `exit code 1` in text.
fn nonzero_exit(key: &[u8], value: &[u8]) -> bool {
    let digits = value.strip_prefix(b"-").unwrap_or(value);
    !digits.is_empty()
        && digits.iter().all(u8::is_ascii_digit)
        && digits.iter().any(|&d| d != b'0')
        && crate::salience::names_an_exit_status(key)
}

/// A member's value as [`each_member`] reads it.
enum Member<'a> {
    /// A string's raw text, between its quotes.
    Str(&'a [u8]),
    /// An object or array (`empty`: `{}` or `[]`); its members are read next.
    Open { empty: bool },
    /// A number, `true`, `false` or `null`.
    Scalar(&'a [u8]),
}

/// Calls `f(key, value)` for every member of every object in `t` (raw JSON text), in
/// order, while `f` returns `true`. With `skip_lists`, the members inside arrays
/// within `t` (the elements of a list the item holds) are not read.
fn each_member<'a>(t: &'a [u8], skip_lists: bool, mut f: impl FnMut(&'a [u8], Member<'a>) -> bool) {
    // The end (one past the closing quote) of the string whose opening quote is at `i`.
    let string_end = |mut i: usize| {
        i += 1;
        while i < t.len() && t[i] != b'"' {
            i += if t[i] == b'\\' { 2 } else { 1 };
        }
        (i + 1).min(t.len())
    };
    let skip_ws = |mut i: usize| {
        while i < t.len() && is_ws(t[i]) {
            i += 1;
        }
        i
    };
    let mut i = 0;
    while i < t.len() {
        if t[i] != b'"' {
            i = if skip_lists && t[i] == b'[' && i > 0 {
                list_end(t, i)
            } else {
                i + 1
            };
            continue;
        }
        let key_end = string_end(i);
        let key = &t[i + 1..key_end.saturating_sub(1).max(i + 1)];
        let colon = skip_ws(key_end);
        if t.get(colon) != Some(&b':') {
            i = key_end; // a string value, not a key
            continue;
        }
        let v = skip_ws(colon + 1);
        let (value, next) = match t.get(v) {
            Some(b'"') => {
                let v_end = string_end(v);
                (
                    Member::Str(&t[v + 1..v_end.saturating_sub(1).max(v + 1)]),
                    v_end,
                )
            }
            Some(&open @ (b'{' | b'[')) => {
                let close = if open == b'{' { b'}' } else { b']' };
                let empty = t.get(skip_ws(v + 1)) == Some(&close);
                // `v + 1` skips the bracket: counted here.
                (Member::Open { empty }, v)
            }
            Some(_) => {
                let e = t[v..]
                    .iter()
                    .position(|&c| matches!(c, b',' | b'}' | b']') || is_ws(c))
                    .map_or(t.len(), |p| v + p);
                (Member::Scalar(&t[v..e]), e)
            }
            None => return,
        };
        if !f(key, value) {
            return;
        }
        i = next;
    }
}

/// One past the `]` that closes the array opening at `t[i]` (`t.len()` when none
/// does): brackets inside strings are skipped.
fn list_end(t: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while let Some(p) = memchr::memchr3(b'"', b'[', b']', &t[i..]) {
        i += p;
        match t[i] {
            b'"' => {
                i += 1;
                loop {
                    match memchr::memchr2(b'"', b'\\', t.get(i..).unwrap_or_default()) {
                        Some(q) if t[i + q] == b'\\' => i += q + 2,
                        Some(q) => {
                            i += q + 1;
                            break;
                        }
                        None => return t.len(),
                    }
                }
                continue;
            }
            b'[' => depth += 1,
            _ => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
        }
        i += 1;
    }
    t.len()
}

/// Fewest items an array needs for its rare values to be read.
const RARE_MIN_ITEMS: usize = 20;

/// The items (by index) of an array of records whose value under some name is rare:
/// the records' own status column, as `crate::rare_rows` reads a table's. A name is
/// read when at least three quarters of the items have it (its first occurrence in
/// each, at any depth but not inside a list the item holds) with a *status value* (a
/// string of at most 32 bytes of ASCII letters, `_`, `-` and spaces starting with a
/// letter, or `true` / `false`), and one value is on at
/// least three quarters of those; a value other than that one on at most 5% of them
/// (at least one) is rare: `"phase": "Failed"` among `"Running"`, `"conclusion":
/// "cancelled"` among `"success"`, `"ok": false` among `true`. A name with more than
/// 16 other values is free text. Arrays of fewer than [`RARE_MIN_ITEMS`] items have
/// none.
fn rare_value_items(items: &[&[u8]]) -> Vec<bool> {
    use std::collections::HashMap;
    let n = items.len();
    let mut out = vec![false; n];
    if n < RARE_MIN_ITEMS {
        return out;
    }
    // name → value → the items holding it.
    let mut names: HashMap<&[u8], HashMap<&[u8], Vec<usize>>> = HashMap::new();
    for (k, t) in items.iter().enumerate() {
        let mut seen: Vec<&[u8]> = Vec::new();
        // The members inside a list the item holds are not read: one element of a
        // list is not the record's own status.
        each_member(t, true, |key, value| {
            let v = match value {
                Member::Str(v)
                    if v.len() <= 32
                        && v.first().is_some_and(u8::is_ascii_alphabetic)
                        && v.iter()
                            .all(|c| c.is_ascii_alphabetic() || b"_- ".contains(c)) =>
                {
                    v
                }
                Member::Scalar(v @ (b"true" | b"false")) => v,
                _ => return true,
            };
            if !seen.contains(&key) {
                seen.push(key);
                names.entry(key).or_default().entry(v).or_default().push(k);
            }
            seen.len() < 256
        });
    }
    for values in names.values() {
        let present: usize = values.values().map(Vec::len).sum();
        let common = values.values().map(Vec::len).max().unwrap_or(0);
        if present * 4 < n * 3 || common * 4 < present * 3 || values.len() > 17 {
            continue;
        }
        let most = (present * 5 / 100).max(1);
        for at in values
            .values()
            .filter(|at| at.len() != common && at.len() <= most)
        {
            for &k in at {
                out[k] = true;
            }
        }
    }
    out
}

/// Member `k` of object `c`: its key's raw text (between the quotes), the offset of
/// its value and the offset one past its value.
fn member_parts<'a>(
    b: &'a [u8],
    kids: &[Kid],
    c: &Container,
    k: usize,
) -> (&'a [u8], usize, usize) {
    let start = kids[c.kids.0 + k] as usize;
    let end = kid_end(b, kids, c, k);
    // The key's closing quote: the first unescaped `"` after the opening one.
    let mut j = start + 1;
    while j < end && b[j] != b'"' {
        j += if b[j] == b'\\' { 2 } else { 1 };
    }
    let key = &b[start + 1..j.min(end)];
    let mut v = j + 1;
    while v < end && (is_ws(b[v]) || b[v] == b':') {
        v += 1;
    }
    (key, v.min(end), end)
}

/// The offset of the value of member `k` of object `c`.
fn value_start(b: &[u8], kids: &[Kid], c: &Container, k: usize) -> usize {
    member_parts(b, kids, c, k).1
}

/// Whether member `k` of object `c` is worth keeping in an elided middle: its key is
/// salient (error words, see [`crate::salience`]), or its value is a scalar that is
/// salient or short and named like a status (`error`, `status`, `message`, `code`,
/// `name`, `version`, `latest`, `reason`), or it is an exit status other than 0
/// ([`nonzero_exit`]).
fn member_is_salient(b: &[u8], kids: &[Kid], c: &Container, k: usize) -> bool {
    let (key, v, end) = member_parts(b, kids, c, k);
    if crate::salience::salience(key) >= 2 {
        return true;
    }
    let value = &b[v..end];
    if value.first().is_some_and(|c| matches!(c, b'{' | b'[')) || value.len() > ISLAND_MAX {
        return false;
    }
    if nonzero_exit(key, value) {
        return true;
    }
    (value.len() <= SHORT_SCALAR && SALIENT_NAMES.iter().any(|n| key.eq_ignore_ascii_case(n)))
        || crate::salience::salience(value) >= 2
}
