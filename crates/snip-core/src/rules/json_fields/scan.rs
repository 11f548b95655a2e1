//! The span-keeping scanner: one pass over the input records the candidates the
//! planner may elide.

use super::detect::BOM;
use super::*;

/// What the scanner records, derived from the config.
pub(super) struct ScanParams {
    /// Shortest raw string content that could ever be elided.
    pub(super) min_lossy: usize,
    /// Finds [`MARKER_NEEDLE`].
    pub(super) marker: memmem::Finder<'static>,
}

impl ScanParams {
    pub(super) fn new(config: &Config) -> Self {
        let tight = config.json_string_keep / TIGHT_DIVISOR;
        ScanParams {
            min_lossy: tight.saturating_mul(2).saturating_add(MIN_ELIDED),
            marker: memmem::Finder::new(MARKER_NEEDLE.as_bytes()),
        }
    }
}

/// A string value worth a second look.
#[derive(Clone)]
pub(super) struct StrCand {
    /// Offset of the opening quote.
    pub(super) start: usize,
    /// Offset one past the closing quote.
    pub(super) end: usize,
    /// Range of its RFC 6901 pointer in [`Scan::pointers`] (document mode only).
    pub(super) ptr: Option<(usize, usize)>,
    /// Holds `\r`, ESC or several line feeds: try the lossless text rules.
    pub(super) lossless: bool,
    /// May be elided: long enough, addressable, and not already holding a marker.
    pub(super) lossy: bool,
}

/// An array or object with at least [`MIN_KIDS`] children and no marker among them:
/// its middle may be elided.
#[derive(Clone)]
pub(super) struct Container {
    /// Offset of `[` or `{`.
    pub(super) open: usize,
    /// Offset of the closing `]` or `}`.
    pub(super) close: usize,
    pub(super) object: bool,
    /// Array: some item is an object or an array.
    pub(super) record: bool,
    /// Range in [`Scan::kids`] of its children's start offsets (an object member starts
    /// at its key's opening quote).
    pub(super) kids: (usize, usize),
}

impl Container {
    pub(super) fn len(&self) -> usize {
        self.kids.1 - self.kids.0
    }
}

/// Fewest children a container must have to be a candidate (first and last kept, at
/// least one elided).
pub(super) const MIN_KIDS: usize = 3;

/// The result of scanning one JSON value.
pub(super) struct Scan {
    /// Span of the value itself (no surrounding whitespace), raw byte offsets.
    pub(super) root: (usize, usize),
    /// Whitespace bytes between tokens inside the value.
    pub(super) ws: usize,
    /// Some string holds a `json-fields` marker (an output of this rule): never
    /// minified, so that compressing it again changes nothing.
    pub(super) marked: bool,
    /// Candidate strings, by `start`.
    pub(super) strings: Vec<StrCand>,
    /// Candidate arrays and objects, by `open`.
    pub(super) containers: Vec<Container>,
    /// Start offsets of the candidates' children, back to back (`u32` when the input
    /// is under 4 GiB: see [`Kid`]).
    pub(super) kids: Vec<Kid>,
    /// The pointers of candidate strings, back to back.
    pub(super) pointers: String,
}

pub(super) struct Frame {
    pub(super) array: bool,
    /// Children completed so far.
    pub(super) count: usize,
    /// Upper bound of this container's pointer length.
    pub(super) ptr_upper: usize,
    /// Object: raw content span of the current member's key.
    pub(super) key: (usize, usize),
    /// Array: some item is a container.
    pub(super) record: bool,
    /// Some child is a `json-fields` marker (an array's marker element, an object's
    /// marker member): never elided again.
    pub(super) has_marker: bool,
    pub(super) open: usize,
    /// Where its children's start offsets start in `Scanner::kid_stack`.
    pub(super) kids_base: usize,
    /// Object: where its key spans start in `Scanner::keys`.
    pub(super) keys_base: usize,
    /// Object: a key holds an escape, so it could equal another once decoded.
    pub(super) escaped_key: bool,
}

pub(super) struct Scanner<'a, 'p> {
    pub(super) b: &'a [u8],
    pub(super) end: usize,
    pub(super) i: usize,
    pub(super) ws: usize,
    pub(super) p: &'p ScanParams,
    pub(super) pointers_on: bool,
    pub(super) stack: Vec<Frame>,
    /// Start offsets of the children of each open container.
    pub(super) kid_stack: Vec<Kid>,
    pub(super) out: Scan,
    pub(super) scratch: Vec<u8>,
    /// Raw content spans of the keys of each open object (document mode only).
    pub(super) keys: Vec<(usize, usize)>,
    /// No pointer can address the document (it opens with a byte-order mark): every
    /// string restores by its raw byte range.
    pub(super) ambiguous: bool,
}

/// Scans exactly one JSON value in `input[from..to]`, with optional whitespace around
/// it. `None` when that is not valid JSON.
pub(super) fn scan(
    input: &[u8],
    from: usize,
    to: usize,
    p: &ScanParams,
    pointers_on: bool,
) -> Option<Scan> {
    if to > Kid::MAX as usize {
        return None;
    }
    let mut s = Scanner {
        b: input,
        end: to,
        i: from,
        ws: 0,
        p,
        pointers_on,
        stack: Vec::new(),
        kid_stack: Vec::new(),
        out: Scan {
            root: (0, 0),
            ws: 0,
            marked: false,
            strings: Vec::new(),
            containers: Vec::new(),
            kids: Vec::new(),
            pointers: String::new(),
        },
        scratch: Vec::new(),
        keys: Vec::new(),
        ambiguous: false,
    };
    // A UTF-8 byte-order mark at the very start is kept before the value, like
    // leading whitespace (RFC 8259 §8.1 lets a parser ignore it).
    // Pointers address the parsed document, which a byte-order mark keeps the store
    // from parsing: strings then restore by raw byte range, as in JSON Lines.
    if from == 0 && input[..to].starts_with(BOM) {
        s.i = BOM.len();
        s.ambiguous = true;
    }
    while s.i < to && is_ws(input[s.i]) {
        s.i += 1;
    }
    let root_start = s.i;
    s.value()?;
    let root_end = s.i;
    while s.i < to && is_ws(input[s.i]) {
        s.i += 1;
    }
    if s.i != to {
        return None;
    }
    let mut out = s.out;
    if s.ambiguous {
        // A pointer could name another member or nothing the store can parse: every
        // string restores by the raw byte range of its elided middle instead.
        for c in &mut out.strings {
            c.ptr = None;
        }
    }
    out.root = (root_start, root_end);
    out.ws = s.ws;
    out.containers.sort_by_key(|a| a.open);
    Some(out)
}

impl Scanner<'_, '_> {
    fn byte(&self) -> Option<u8> {
        (self.i < self.end).then(|| self.b[self.i])
    }

    fn skip_ws(&mut self) {
        let start = self.i;
        while self.i < self.end && is_ws(self.b[self.i]) {
            self.i += 1;
        }
        self.ws += self.i - start;
    }

    /// Upper bound of the pointer length of the value about to be parsed.
    fn child_ptr_upper(&self) -> usize {
        match self.stack.last() {
            None => 0,
            Some(f) if f.array => f.ptr_upper.saturating_add(1 + digits(f.count)),
            Some(f) => f.ptr_upper.saturating_add(1 + 2 * (f.key.1 - f.key.0)),
        }
    }

    /// Parses one complete value starting at `self.i` (whitespace allowed before it).
    fn value(&mut self) -> Option<()> {
        'value: loop {
            self.skip_ws();
            let c = self.byte()?;
            let i = self.i;
            if let Some(top) = self.stack.last_mut() {
                if top.array {
                    self.kid_stack.push(i as Kid);
                    top.record |= c == b'{' || c == b'[';
                }
            }
            match c {
                b'{' | b'[' => {
                    let ptr_upper = self.child_ptr_upper();
                    self.i += 1;
                    self.stack.push(Frame {
                        array: c == b'[',
                        count: 0,
                        ptr_upper,
                        key: (0, 0),
                        record: false,
                        has_marker: false,
                        open: i,
                        kids_base: self.kid_stack.len(),
                        keys_base: self.keys.len(),
                        escaped_key: false,
                    });
                    self.skip_ws();
                    let close = if c == b'[' { b']' } else { b'}' };
                    if self.byte()? == close {
                        self.i += 1;
                        self.close_container();
                    } else if c == b'[' {
                        continue 'value;
                    } else {
                        self.key()?;
                        continue 'value;
                    }
                }
                b'"' => self.string_value()?,
                b'-' | b'0'..=b'9' => self.number()?,
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                _ => return None,
            }
            // A value is complete at `self.i`: climb while containers close.
            loop {
                let Some(top) = self.stack.last_mut() else {
                    return Some(());
                };
                top.count += 1;
                let array = top.array;
                self.skip_ws();
                match self.byte()? {
                    b',' => {
                        self.i += 1;
                        if !array {
                            self.skip_ws();
                            self.key()?;
                        }
                        continue 'value;
                    }
                    b']' if array => {
                        self.i += 1;
                        self.close_container();
                    }
                    b'}' if !array => {
                        self.i += 1;
                        self.close_container();
                    }
                    _ => return None,
                }
            }
        }
    }

    /// Pops the top container (its closing bracket already consumed) and records it
    /// when its middle could be elided.
    fn close_container(&mut self) {
        let Some(f) = self.stack.pop() else { return };
        let close = self.i - 1;
        if !f.has_marker && f.count >= MIN_KIDS {
            let from = self.out.kids.len();
            self.out
                .kids
                .extend_from_slice(&self.kid_stack[f.kids_base..]);
            self.out.containers.push(Container {
                open: f.open,
                close,
                object: !f.array,
                record: f.record,
                kids: (from, self.out.kids.len()),
            });
        }
        self.kid_stack.truncate(f.kids_base);
        if !f.array && self.pointers_on {
            let b = self.b;
            let keys = &mut self.keys[f.keys_base..];
            // An object holding a marker member had members elided by an earlier pass,
            // which may have been what made it ambiguous: its strings restore by byte
            // range as they did then (a pointer's shorter marker would elide more).
            let mut ambiguous = f.escaped_key || f.has_marker;
            if keys.len() > 1 && !ambiguous && !self.ambiguous {
                keys.sort_unstable_by(|x, y| b[x.0..x.1].cmp(&b[y.0..y.1]));
                ambiguous = keys
                    .windows(2)
                    .any(|w| b[w[0].0..w[0].1] == b[w[1].0..w[1].1]);
            }
            self.keys.truncate(f.keys_base);
            if ambiguous {
                // A key twice (or one that could equal another once decoded): a pointer
                // into this object could name the wrong member, so the strings inside
                // it restore by raw byte range. Only these: a document-wide flag made
                // every string's marker depend on whether this object was still there,
                // and a second pass, with the object elided, elided other strings the
                // first pass had kept.
                for c in self.out.strings.iter_mut().rev() {
                    if c.start < f.open {
                        break;
                    }
                    c.ptr = None;
                }
            }
        }
    }

    /// Reads `"key"` and the `:` after it.
    fn key(&mut self) -> Option<()> {
        if self.byte()? != b'"' {
            return None;
        }
        self.kid_stack.push(self.i as Kid);
        let (s, e, _) = self.string()?;
        if let Some(top) = self.stack.last_mut() {
            top.key = (s, e);
        }
        if self.pointers_on {
            let escaped = memchr(b'\\', &self.b[s..e]).is_some();
            if let Some(top) = self.stack.last_mut() {
                top.escaped_key |= escaped;
            }
            self.keys.push((s, e));
        }
        self.skip_ws();
        if self.byte()? != b':' {
            return None;
        }
        self.i += 1;
        Some(())
    }

    /// Scans a string at `self.i` (the opening quote). Returns the content span and
    /// whether it holds `\r`, ESC or several `\n` escapes.
    fn string(&mut self) -> Option<(usize, usize, bool)> {
        let b = self.b;
        let start = self.i + 1;
        let mut j = start;
        let (mut cr_or_esc, mut newlines) = (false, 0u32);
        loop {
            j = next_special(b, j, self.end);
            if j >= self.end {
                return None;
            }
            match b[j] {
                b'"' => break,
                b'\\' => {
                    let esc = *b.get(j + 1).filter(|_| j + 1 < self.end)?;
                    match esc {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b't' => j += 2,
                        b'n' => {
                            newlines += 1;
                            j += 2;
                        }
                        b'r' => {
                            cr_or_esc = true;
                            j += 2;
                        }
                        b'u' => {
                            if j + 6 > self.end
                                || !b[j + 2..j + 6].iter().all(u8::is_ascii_hexdigit)
                            {
                                return None;
                            }
                            cr_or_esc |= b[j + 2..j + 6].eq_ignore_ascii_case(b"001b");
                            j += 6;
                        }
                        _ => return None,
                    }
                }
                _ => return None,
            }
        }
        self.i = j + 1;
        Some((start, j, cr_or_esc || newlines >= 2))
    }

    fn string_value(&mut self) -> Option<()> {
        let open = self.i;
        let (s, e, text_flags) = self.string()?;
        let content = &self.b[s..e];
        let len = e - s;
        let wanted = len >= self.p.min_lossy || (text_flags && len >= LOSSLESS_MIN);
        let element_marker = content.starts_with(b"[snip: ");
        let marked = (wanted || element_marker) && self.p.marker.find(content).is_some();
        self.out.marked |= marked;
        if marked && element_marker {
            if let Some(top) = self.stack.last_mut() {
                top.has_marker = true;
            }
        }
        let lossless = text_flags && len >= LOSSLESS_MIN && !marked;
        let mut lossy = !marked && len >= self.p.min_lossy;
        let mut ptr = None;
        if lossy && self.pointers_on {
            if self.child_ptr_upper() > len {
                lossy = false;
            } else if !has_surrogate_escape(content) {
                ptr = Some(self.build_pointer());
            }
            // A surrogate escape (lone or paired) may decode to no Unicode scalar value,
            // which the store cannot serve by field: the raw byte range serves it.
        }
        if lossy || lossless {
            self.out.strings.push(StrCand {
                start: open,
                end: self.i,
                ptr,
                lossless,
                lossy,
            });
        }
        Some(())
    }

    /// Appends the RFC 6901 pointer of the value about to end to `out.pointers`.
    fn build_pointer(&mut self) -> (usize, usize) {
        let pool = &mut self.out.pointers;
        let start = pool.len();
        for f in &self.stack {
            pool.push('/');
            if f.array {
                let _ = write!(pool, "{}", f.count);
            } else {
                self.scratch.clear();
                decode(&self.b[f.key.0..f.key.1], &mut self.scratch);
                for ch in String::from_utf8_lossy(&self.scratch).chars() {
                    match ch {
                        '~' => pool.push_str("~0"),
                        '/' => pool.push_str("~1"),
                        c => pool.push(c),
                    }
                }
            }
        }
        (start, pool.len())
    }

    fn number(&mut self) -> Option<()> {
        let b = self.b;
        let digits = |s: &mut Self| {
            let st = s.i;
            while s.i < s.end && b[s.i].is_ascii_digit() {
                s.i += 1;
            }
            s.i > st
        };
        if self.byte() == Some(b'-') {
            self.i += 1;
        }
        match self.byte()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => {
                digits(self);
            }
            _ => return None,
        }
        if self.byte() == Some(b'.') {
            self.i += 1;
            if !digits(self) {
                return None;
            }
        }
        if matches!(self.byte(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.byte(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if !digits(self) {
                return None;
            }
        }
        Some(())
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.i.checked_add(word.len())?;
        if end > self.end || &self.b[self.i..end] != word {
            return None;
        }
        self.i = end;
        Some(())
    }
}

/// A child's start offset. Inputs of 4 GiB or more are not scanned (see [`scan`]).
pub(super) type Kid = u32;

/// The end (one past its last byte) of the child starting at `kids[k]` of container
/// `c`: the value ends where the whitespace before the next child's comma (or before
/// the closing bracket) starts.
pub(super) fn kid_end(b: &[u8], kids: &[Kid], c: &Container, k: usize) -> usize {
    let mut j = if c.kids.0 + k + 1 < c.kids.1 {
        let mut j = kids[c.kids.0 + k + 1] as usize;
        while is_ws(b[j - 1]) {
            j -= 1;
        }
        j - 1 // the comma
    } else {
        c.close
    };
    while is_ws(b[j - 1]) {
        j -= 1;
    }
    j
}

pub(super) fn digits(n: usize) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// What every `json-fields` marker holds (the rule between its ` · ` separators).
pub(super) const MARKER_NEEDLE: &str = " \u{b7} json-fields \u{b7} ";

pub(super) const LO: u64 = 0x0101_0101_0101_0101;
pub(super) const HI: u64 = 0x8080_8080_8080_8080;

/// The first offset in `b[j..end]` holding `"`, `\` or a control character (`end` when
/// none), eight bytes at a time.
pub(super) fn next_special(b: &[u8], mut j: usize, end: usize) -> usize {
    while j + 8 <= end {
        let mut word = [0u8; 8];
        word.copy_from_slice(&b[j..j + 8]);
        let x = u64::from_le_bytes(word);
        let quote = x ^ (LO * b'"' as u64);
        let bslash = x ^ (LO * b'\\' as u64);
        // Per byte: zero after the xor, or below 0x20. The lowest flagged byte is exact.
        let m = ((quote.wrapping_sub(LO) & !quote)
            | (bslash.wrapping_sub(LO) & !bslash)
            | (x.wrapping_sub(LO * 0x20) & !x))
            & HI;
        if m != 0 {
            return j + (m.trailing_zeros() / 8) as usize;
        }
        j += 8;
    }
    while j < end && !STR_SPECIAL[b[j] as usize] {
        j += 1;
    }
    j
}

/// Whether `raw` (a JSON string's content) holds a surrogate escape, `\uD800` to `\uDFFF`
/// (or what looks like one after an escaped backslash: a false yes only costs a field
/// pointer).
fn has_surrogate_escape(raw: &[u8]) -> bool {
    memmem::find_iter(raw, b"\\u").any(|k| {
        raw.get(k + 2).is_some_and(|c| matches!(c, b'd' | b'D'))
            && raw
                .get(k + 3)
                .is_some_and(|c| matches!(c, b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F'))
    })
}
