//! Salient lines: the words that make a line worth keeping when the middle of an
//! output is elided (errors, failures, panics…, and with lower priority warnings),
//! one searcher over them, and a line's *shape* (digits folded) so that numbered
//! copies of one line count once. Used by `head-tail-elide`, `json-fields`, the sparse
//! reduction and the stream engine. Also the stricter test of whether a whole line
//! reports an error ([`reports_error`]), which the conversation pass (`snip-context`)
//! uses to pick the error line it quotes.

use aho_corasick::{packed, AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use std::sync::OnceLock;
/// Salient words and their priority (higher first). Matched in lower, Title and UPPER case.
const SALIENT: &[(&str, u8)] = &[
    ("error", 3),
    ("failed", 3),
    ("failure", 3),
    ("fail:", 3),
    ("panicked", 3),
    ("panic:", 3),
    ("fatal", 3),
    ("exception", 3),
    ("traceback", 3),
    ("assert", 2),
    ("denied", 2),
    ("not found", 2),
    ("segmentation fault", 3),
    ("aborting", 3),
    ("caused by", 2),
    ("not ok ", 3),
    ("no space left", 3),
    ("no such file", 2),
    ("out of memory", 3),
    ("timed out", 2),
    ("refused", 2),
    ("cannot ", 2),
    ("could not", 2),
    ("unable to", 2),
    ("err!", 3),
    ("fail\t", 3),
    ("fail ", 2),
    ("core dumped", 3),
    ("undefined reference", 3),
    ("killed", 2),
    ("errno", 2),
    ("exit code", 2),
    ("exit status", 2),
    ("exited with code", 2),
    ("exit_code", 2),
    ("exitcode", 2),
    ("exit_status", 2),
    ("exitstatus", 2),
    ("returncode", 2),
    // Before `status`: a leftmost-first scan takes the first word listed at a place.
    ("status_code", 2),
    ("statuscode", 2),
    ("status", 2),
    ("warning", 1),
];

/// The salient words, found by one scan: the searcher holds their lowercase
/// spellings and reads text with ASCII letters folded to lowercase, a chunk at a time;
/// a match counts only if the original bytes are one of the three spellings (lower,
/// Title, UPPER). One searcher of the lowercase words replaced two of their 75
/// spellings (a SIMD (Teddy) searcher takes at most 64): on the middle of a 50 KB
/// rsync log the scan fell from 94 K to 52 K instructions (25 words then), and the
/// one-time build, which a process that compresses one tool result and exits pays in
/// full, from 165 K to 131 K (32 words; callgrind).
struct Salient {
    searcher: Searcher,
    /// Pattern `k`'s spellings: lower, Title, UPPER, camelCase and PascalCase (see
    /// [`spellings`]).
    spellings: Vec<[Vec<u8>; 5]>,
    /// Pattern `k`'s priority.
    priority: Vec<u8>,
    /// The longest pattern (bytes).
    longest: usize,
}

/// The searcher. The packed (Teddy) searcher where the CPU has it: it is built in
/// microseconds, which matters to a process that compresses one tool result and exits
/// (building an Aho-Corasick DFA took 3.5 M of the 8.7 M instructions of a
/// `snip hook claude-code` process on a 50 KB payload, callgrind). Elsewhere an
/// Aho-Corasick automaton, leftmost-first like the packed searcher.
enum Searcher {
    Packed(packed::Searcher),
    Automaton(AhoCorasick),
}

impl Searcher {
    fn new(pats: &[&[u8]]) -> Searcher {
        let mut b = packed::Config::new()
            .match_kind(packed::MatchKind::LeftmostFirst)
            .builder();
        match b.extend(pats).build() {
            Some(s) => Searcher::Packed(s),
            None => Searcher::automaton(pats),
        }
    }

    fn automaton(pats: &[&[u8]]) -> Searcher {
        let ac = AhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostFirst)
            .kind(Some(AhoCorasickKind::ContiguousNFA))
            .build(pats)
            .expect("static patterns build");
        Searcher::Automaton(ac)
    }

    /// `f(start, pattern)` for every match in `hay`, leftmost-first, in order.
    #[inline]
    fn each(&self, hay: &[u8], mut f: impl FnMut(usize, usize)) {
        match self {
            Searcher::Packed(s) => {
                for m in s.find_iter(hay) {
                    f(m.start(), m.pattern().as_usize());
                }
            }
            Searcher::Automaton(ac) => {
                for m in ac.find_iter(hay) {
                    f(m.start(), m.pattern().as_usize());
                }
            }
        }
    }
}

/// Salient words that are two words written as one identifier, and the offset of the
/// second word: their camelCase and PascalCase spellings count too (`exitCode`,
/// `ExitStatus`, `returnCode`).
const COMPOUNDS: [(&str, usize); 4] = [
    ("exitcode", 4),
    ("exitstatus", 4),
    ("returncode", 6),
    ("statuscode", 6),
];

/// `word` in lower, Title, UPPER, camelCase and PascalCase (the last two are the
/// lower and Title spellings but for a word of [`COMPOUNDS`]).
fn spellings(word: &str) -> [Vec<u8>; 5] {
    let lower = word.as_bytes().to_vec();
    let mut title = lower.clone();
    if let Some(c) = title.first_mut() {
        c.make_ascii_uppercase();
    }
    let (mut camel, mut pascal) = (lower.clone(), title.clone());
    if let Some(&(_, at)) = COMPOUNDS.iter().find(|(w, _)| *w == word) {
        camel[at].make_ascii_uppercase();
        pascal[at].make_ascii_uppercase();
    }
    [
        lower,
        title,
        word.to_ascii_uppercase().into_bytes(),
        camel,
        pascal,
    ]
}

fn salient() -> &'static Salient {
    static S: OnceLock<Salient> = OnceLock::new();
    S.get_or_init(|| {
        let words: Vec<&[u8]> = SALIENT.iter().map(|(w, _)| w.as_bytes()).collect();
        Salient {
            searcher: Searcher::new(&words),
            spellings: SALIENT.iter().map(|(w, _)| spellings(w)).collect(),
            priority: SALIENT.iter().map(|(_, p)| *p).collect(),
            longest: words.iter().map(|w| w.len()).max().unwrap_or(1),
        }
    })
}

/// Whether the match `word` at `start` of `hay` is the lowercase spelling `lower`
/// joined to a name before it by `-`, `_`, `.`, `/` or `@` (itself after a letter or a
/// digit, so an ellipsis `Downloading...failed` or a leading `/errors` joins no name):
/// part of a file, package or
/// identifier name (`es-errors/index.d.ts`, `http-errors@2.0.0`,
/// `compile/errors.d.ts`, `ref_error`, `requests.exceptions`), not a report of an
/// error. Such a match does not count. In a listing of paths or packages these names
/// otherwise made islands of `head-tail-elide` and split `shape-fold`'s runs, each
/// with a marker of its own. Title and UPPER spellings still count there
/// (`schema-utils/ValidationError`, `ERR_CONNECTION_REFUSED`), as does a lowercase
/// word after a space, a quote, a bracket, `=`, `:` or a letter.
#[inline]
fn in_name(hay: &[u8], start: usize, word: &[u8], lower: &[u8]) -> bool {
    start > 1
        && matches!(hay[start - 1], b'-' | b'_' | b'.' | b'/' | b'@')
        && hay[start - 2].is_ascii_alphanumeric()
        && word == lower
}

/// Whether the salient word `word` at `start` of `hay` is counted zero (`0 errors`,
/// `0 failed`, `errors: 0`, `"failures": 0`, `failed=0`): a tally that nothing went
/// wrong, not a report that something did. Lines that differ only in such counts
/// (`checked m_0001.c: 0 warnings, 0 errors` a thousand times) would otherwise all be
/// salient, and the one with `5 errors` among them would be counted with them instead
/// of shown. A count other than a lone `0` (`10 errors`, `0.5 failed`, `errors: 03`)
/// still counts.
///
/// An exit status (`exit code`, `exit status`, `exited with code`, and as a name:
/// `exit_code`, `exitCode`, `exit_status`, `returncode`) reports a failure only when a
/// number other than zero follows it, after an optional `"`, an optional `:` or `=`
/// with spaces or tabs on either side, and an optional `-`: `exit code 1`, `exit
/// status: 2`, `exited with code 137`, `exit_code=3`, `"exitCode": -9`, `"exit_code" :
/// 3` (a pretty-printer's spacing), `exit_code = 3`; `exit code 0` and `exit code
/// was` are tallies too.
#[inline]
fn zero_count(hay: &[u8], start: usize, word: &[u8]) -> bool {
    if is_status_word(word) {
        return !http_error_after(hay, start + word.len());
    }
    if is_exit_word(word) {
        let mut i = value_after(hay, start + word.len());
        if hay.get(i) == Some(&b'-') {
            i += 1;
        }
        return !hay.get(i).is_some_and(|c| (b'1'..=b'9').contains(c));
    }
    let lone_zero_before = start >= 2
        && &hay[start - 2..start] == b"0 "
        && (start == 2 || !(hay[start - 3].is_ascii_digit() || hay[start - 3] == b'.'));
    if lone_zero_before {
        return true;
    }
    let mut i = start + word.len();
    for skip in [b's', b'S', b'"'] {
        if hay.get(i) == Some(&skip) {
            i += 1;
        }
    }
    match hay.get(i) {
        Some(b':' | b'=') => i += 1,
        _ => return false,
    }
    while hay.get(i) == Some(&b' ') {
        i += 1;
    }
    hay.get(i) == Some(&b'0')
        && hay
            .get(i + 1)
            .is_none_or(|&c| !(c.is_ascii_digit() || c == b'.' || c == b'x'))
}

/// Whether the salient word `word` names an exit status (`exit code`, `exit_status`,
/// `exitCode`, `returncode`, `exited with code`): it reports a failure only with a
/// number other than 0 after it (see [`zero_count`]).
#[inline]
fn is_exit_word(word: &[u8]) -> bool {
    (word.len() >= 4 && word[..4].eq_ignore_ascii_case(b"exit"))
        || (word.len() >= 6 && word[..6].eq_ignore_ascii_case(b"return"))
}

/// Where the value of a name ending at `hay[i]` starts: past an optional `"` (the
/// name's closing quote), an optional `:` or `=`, and spaces or tabs on either side of
/// it (`exit_code=3`, `"exitCode": -9`, `"status" : 503`, `exit code 1`).
fn value_after(hay: &[u8], mut i: usize) -> usize {
    if hay.get(i) == Some(&b'"') {
        i += 1;
    }
    let blank = |i: &mut usize| {
        while matches!(hay.get(*i), Some(b' ' | b'\t')) {
            *i += 1;
        }
    };
    blank(&mut i);
    if matches!(hay.get(i), Some(b':' | b'=')) {
        i += 1;
    }
    blank(&mut i);
    i
}

/// Whether the salient word `word` names a status (`status`, `status_code`,
/// `statusCode`): it reports a failure only with an HTTP error code after it (see
/// [`http_error_after`]).
#[inline]
fn is_status_word(word: &[u8]) -> bool {
    word.len() >= 6 && word[..6].eq_ignore_ascii_case(b"status")
}

/// Whether an HTTP error code (`400` to `599`, three digits and no fourth) follows
/// `hay[i..]`, after an optional `"`, an optional `:` or `=` with spaces or tabs on
/// either side: `"status": 503`, `status=404`, `Status: 500`, `status_code 502`; not
/// `status: 200`, `status: Running` or `status 4040`.
fn http_error_after(hay: &[u8], i: usize) -> bool {
    let i = value_after(hay, i);
    matches!(hay.get(i), Some(b'4' | b'5'))
        && hay.get(i + 1).is_some_and(u8::is_ascii_digit)
        && hay.get(i + 2).is_some_and(u8::is_ascii_digit)
        && !hay.get(i + 3).is_some_and(u8::is_ascii_digit)
}

/// Whether `name` (a JSON member's key) is a salient word that names an exit status
/// as one identifier (`exit_code`, `exitcode`, `exit_status`, `exitstatus`,
/// `returncode`) in one of its spellings ([`spellings`]: `exitCode`, `EXIT_STATUS`,
/// `ReturnCode`).
pub(crate) fn names_an_exit_status(name: &[u8]) -> bool {
    let s = salient();
    SALIENT.iter().zip(&s.spellings).any(|((w, _), spelled)| {
        !w.contains(' ')
            && is_exit_word(w.as_bytes())
            && spelled.iter().any(|sp| sp.as_slice() == name)
    })
}

/// Bytes folded and searched at a time (a stack buffer).
const FOLD_CHUNK: usize = 4096;

/// The buffer for text up to this long (most calls are one line: a 4 KiB buffer
/// zeroed for each would cost more than the search).
const FOLD_SMALL: usize = 256;

/// `dst[i]` = `src[i]` with ASCII `A`–`Z` made lowercase (an element-wise map, which
/// the compiler vectorises).
fn fold(src: &[u8], dst: &mut [u8]) {
    for (d, &c) in dst.iter_mut().zip(src) {
        *d = c | (u8::from(c.wrapping_sub(b'A') < 26) << 5);
    }
}

/// `f(offset, priority)` for every salient word in `hay`, in offset order.
pub(crate) fn each_salient(hay: &[u8], f: impl FnMut(usize, u8)) {
    if hay.len() <= FOLD_SMALL {
        scan_folded(hay, &mut [0u8; FOLD_SMALL], f);
    } else {
        scan_folded(hay, &mut [0u8; FOLD_CHUNK], f);
    }
}

/// [`each_salient`], folding `buf.len()` bytes at a time into `buf`.
fn scan_folded(hay: &[u8], buf: &mut [u8], mut f: impl FnMut(usize, u8)) {
    let s = salient();
    let mut at = 0;
    loop {
        let end = (at + buf.len()).min(hay.len());
        let src = &hay[at..end];
        let folded = &mut buf[..src.len()];
        fold(src, folded);
        let last = end == hay.len();
        // A match starting before `limit` ends inside this chunk; later ones are
        // found by the next chunk, which starts at `limit`.
        let limit = if last {
            src.len()
        } else {
            src.len() + 1 - s.longest
        };
        s.searcher.each(folded, |start, k| {
            let word = &src[start..start + s.spellings[k][0].len()];
            if start < limit
                && s.spellings[k].iter().any(|w| w.as_slice() == word)
                && !in_name(hay, at + start, word, &s.spellings[k][0])
                && !zero_count(hay, at + start, word)
            {
                f(at + start, s.priority[k]);
            }
        });
        if last {
            return;
        }
        at += limit;
    }
}

/// Every match of the salient words' searcher in `hay`, in one leftmost-first scan
/// (no chunks), as `f(start, end, priority)` (offsets into `hay`, half-open;
/// priority 0 for a match whose bytes are not one of the word's spellings). `hay` is
/// folded into `folded` (reused across calls, so a long text costs no allocation after
/// the first). For a span of `hay` that no match crosses into or out of, the matches
/// inside it are the ones a scan of the span alone finds: a line's [`salience`] for a
/// line of at most 4 KiB (one chunk of [`each_salient`]).
pub(crate) fn each_match_whole(
    hay: &[u8],
    folded: &mut Vec<u8>,
    mut f: impl FnMut(usize, usize, u8),
) {
    let s = salient();
    // `fold` writes every byte: only a longer haystack than the last one costs a fill.
    folded.resize(hay.len(), 0);
    fold(hay, folded);
    s.searcher.each(folded, |start, k| {
        let end = start + s.spellings[k][0].len();
        let word = &hay[start..end];
        let spelled = s.spellings[k].iter().any(|w| w.as_slice() == word)
            && !in_name(hay, start, word, &s.spellings[k][0])
            && !zero_count(hay, start, word);
        f(start, end, if spelled { s.priority[k] } else { 0 });
    });
}

/// The start offsets (ascending) of every match of the salient words' searcher in
/// `hay`, spelled or not, from one leftmost-first scan of the whole of it: a pre-check
/// for many lines' [`salience`]. A line of `hay` that starts it or follows a `\n` and
/// holds no start has salience 0 (no salient word holds a `\n`, so no match crosses
/// into the line, and a word the line's own scan finds, this scan finds or finds a
/// match starting earlier in the line).
pub(crate) fn match_starts(hay: &[u8]) -> Vec<usize> {
    let mut starts = Vec::new();
    each_match_whole(hay, &mut Vec::new(), |start, _, _| starts.push(start));
    starts
}

/// Every salient word in `hay` as `(offset, priority)`, in offset order.
pub(crate) fn salient_matches(hay: &[u8]) -> Vec<(usize, u8)> {
    let mut out = Vec::new();
    each_salient(hay, |at, prio| out.push((at, prio)));
    out
}

/// The priority of the most salient word in `t` (0: not salient; 1: a warning; 2 and
/// 3: an error or failure, the lines a marker counts).
pub fn salience(t: &[u8]) -> u8 {
    let mut best = 0;
    each_salient(t, |_, prio| best = best.max(prio));
    best
}

/// Whether `t` holds a word of priority 2 or above standing as a word of its own:
/// neither the byte before it nor the one after it is an ASCII letter, a digit or one
/// of `- _ . / @ # +`, so `"conclusion": "failure"` and `Error: refused` do, while the
/// names `thiserror`, `#errno@0.3.15` and `ERR_CONNECTION_REFUSED` do not. Used for
/// records (a JSON array's items), where names are common and a word inside one is
/// no report of a failure.
pub fn names_a_failure(t: &[u8]) -> bool {
    // Most keys and values hold no salient word: the stack-buffer scan rules them out
    // without the whole-text scan's buffer (called for every member of a record).
    if salience(t) < 2 {
        return false;
    }
    let name = |c: u8| c.is_ascii_alphanumeric() || b"-_./@#+".contains(&c);
    let mut found = false;
    each_match_whole(t, &mut Vec::new(), |s, e, prio| {
        found |= prio >= 2 && (s == 0 || !name(t[s - 1])) && t.get(e).is_none_or(|&c| !name(c));
    });
    found
}

/// A line's *shape*: a hash of its bytes with every run of ASCII digits read as one
/// `0`, so `error: failure 17 at 0x1f` and `error: failure 18 at 0x2a` share a shape.
/// One island per shape: a hundred numbered copies of one error keep the first, and
/// the island budget goes to different lines (the traceback further down).
pub(crate) fn shape(t: &[u8]) -> u64 {
    // FNV-1a, 64-bit.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut in_digits = false;
    for &c in t {
        let c = if c.is_ascii_digit() {
            if in_digits {
                continue;
            }
            in_digits = true;
            b'0'
        } else {
            in_digits = false;
            c
        };
        h ^= u64::from(c);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Longest line an island may hold (bytes); longer salient lines are left elided.
pub(crate) const ISLAND_LINE_MAX: usize = 1024;

/// A cheap pre-check for [`reports_error`]: whether `line` holds a substring every
/// one of its patterns contains (`false`: it does not report an error).
pub fn may_report_error(line: &str) -> bool {
    [
        "rror",
        "ERR",
        "FAIL",
        "fatal",
        "Traceback",
        "E: ",
        "panic",
        "Exception",
    ]
    .iter()
    .any(|p| line.contains(p))
}

/// Whether one line (a whole line, as the conversation pass quotes it) reports an
/// error or a failure (compiler, test runner, shell, Python, Rust, npm, apt): it
/// starts with `error:`, `ERROR`, `FAILED`, `Traceback (most recent call last)`, … or
/// holds `... FAILED`, ` panicked at `, `Error: `, …. Stricter than the salient words
/// above, which rank lines inside one output: case matters, and a word like `errors`
/// inside a sentence does not count.
pub fn reports_error(line: &str) -> bool {
    let starts = [
        "error:",
        "error[",
        "Error:",
        "ERROR",
        "FAILED",
        "FAIL ",
        "fatal:",
        "fatal error",
        "Traceback (most recent call last)",
        "npm error",
        "npm ERR!",
        "E: ",
        "panic:",
    ];
    if starts.iter().any(|p| line.starts_with(p)) {
        return true;
    }
    let contains = [
        "... FAILED",
        " panicked at ",
        "Error: ",
        "Exception: ",
        ": error:",
        " error: ",
        ": fatal error:",
        "rsync error:",
    ];
    contains.iter().any(|p| line.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`match_starts`] as a pre-check: no salient word holds a `\n`, and a line with
    /// no start in it is not salient, whatever its neighbours.
    #[test]
    fn a_line_without_a_match_start_is_not_salient() {
        assert!(SALIENT.iter().all(|(w, _)| !w.contains('\n')));
        let text = b"ok\nan Error here\nfine\nwarning: x not\nfound later\nFAILED\n\
            xx fail\tyy\nnot ok \nerrno\nplain line\nTimed Out\nsegmentation\nfault";
        let starts = match_starts(text);
        let mut at = 0;
        let mut salient_lines = 0;
        for line in text.split(|&c| c == b'\n') {
            let end = at + line.len();
            let has = starts.iter().any(|&s| (at..end).contains(&s));
            if !has {
                assert_eq!(salience(line), 0, "{}", String::from_utf8_lossy(line));
            }
            salient_lines += usize::from(salience(line) > 0);
            at = end + 1;
        }
        assert_eq!(salient_lines, 6);
    }

    /// A whole line reports an error by its start or a marked phrase, case-sensitive;
    /// the pre-check never rules out a line that does.
    #[test]
    fn reports_error_is_strict_and_its_pre_check_never_misses() {
        for yes in [
            "error: boom",
            "ERROR x",
            "npm ERR! code 1",
            "test a ... FAILED",
            "thread 'main' panicked at src/x.rs:1",
            "E: Unable to locate package",
            "Traceback (most recent call last):",
        ] {
            assert!(reports_error(yes), "{yes}");
            assert!(may_report_error(yes), "{yes}");
        }
        for no in [
            "3 errors were found",
            "error",
            "Errors: 0",
            "warning: x",
            "fail",
        ] {
            assert!(!reports_error(no), "{no}");
        }
    }

    /// The packed searcher (used where the CPU has it) and the automaton (used
    /// elsewhere) find the same matches, so salience does not depend on the machine.
    #[test]
    fn packed_searcher_and_automaton_agree() {
        let mut hays = crate::text::corpus_captures();
        assert!(hays.len() >= 20, "captures: {}", hays.len());
        // Short haystacks too (the packed searcher switches strategy below ~a vector).
        hays.push(b"error".to_vec());
        hays.push(b"xfailed: panic! warning".to_vec());
        hays.push(Vec::new());
        let words: Vec<&[u8]> = SALIENT.iter().map(|(w, _)| w.as_bytes()).collect();
        let fast = Searcher::new(&words);
        let slow = Searcher::automaton(&words);
        let mut total = 0;
        for hay in &hays {
            let mut folded = vec![0; hay.len()];
            fold(hay, &mut folded);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            fast.each(&folded, |s, k| a.push((s, k)));
            slow.each(&folded, |s, k| b.push((s, k)));
            assert_eq!(a, b);
            total += a.len();
        }
        assert!(total > 100, "matches: {total}");
        // On x86-64 with SSSE3 or AVX2 (every CI machine) the packed searcher is used.
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("ssse3") {
            assert!(matches!(fast, Searcher::Packed(_)));
        }
    }

    /// The matches a byte-by-byte reading gives: at each offset the first word whose
    /// lowercase form equals the folded text there; it counts if the text spells it
    /// in lower, Title or UPPER case, and (lowercase) not joined to a name before it by
    /// `-`, `_`, `.`, `/` or `@` after a letter or digit, and not counted zero (`0 errors`,
    /// `errors: 0`); the reading goes on after it either way.
    fn reference(hay: &[u8]) -> Vec<(usize, u8)> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < hay.len() {
            let hit = SALIENT.iter().find(|(w, _)| {
                hay.get(i..i + w.len())
                    .is_some_and(|t| t.eq_ignore_ascii_case(w.as_bytes()))
            });
            match hit {
                Some((w, prio)) => {
                    let t = &hay[i..i + w.len()];
                    let named = i > 1
                        && b"-_./@".contains(&hay[i - 1])
                        && hay[i - 2].is_ascii_alphanumeric()
                        && t == w.as_bytes();
                    // Counted zero: `0 ` before (not after a digit or `.`), or
                    // `s`/`S`, `"`, then `:` or `=`, spaces and a lone `0` after.
                    let before = i >= 2
                        && hay[i - 2] == b'0'
                        && hay[i - 1] == b' '
                        && (i < 3 || !(hay[i - 3].is_ascii_digit() || hay[i - 3] == b'.'));
                    let mut rest = &hay[i + w.len()..];
                    if let Some(r) = rest.strip_prefix(b"s").or_else(|| rest.strip_prefix(b"S")) {
                        rest = r;
                    }
                    if let Some(r) = rest.strip_prefix(b"\"") {
                        rest = r;
                    }
                    let after = match rest.first() {
                        Some(b':' | b'=') => {
                            let r: Vec<u8> = rest[1..]
                                .iter()
                                .copied()
                                .skip_while(|&c| c == b' ')
                                .collect();
                            r.first() == Some(&b'0')
                                && !matches!(r.get(1), Some(c) if c.is_ascii_digit() || *c == b'.' || *c == b'x')
                        }
                        _ => false,
                    };
                    // An exit status: a number other than zero after it (`"`, `:`
                    // or `=`, spaces and `-` between).
                    let exit_word = w.starts_with("exit") || w.starts_with("return");
                    let exit_zero = exit_word && {
                        let r = &hay[i + w.len()..];
                        let r = r.strip_prefix(b"\"").unwrap_or(r);
                        let r = &r[r.iter().take_while(|&&c| c == b' ' || c == b'\t').count()..];
                        let r = r
                            .strip_prefix(b":")
                            .or_else(|| r.strip_prefix(b"="))
                            .unwrap_or(r);
                        let k = r.iter().take_while(|&&c| c == b' ' || c == b'\t').count();
                        let r = &r[k..];
                        let r = r.strip_prefix(b"-").unwrap_or(r);
                        !matches!(r.first(), Some(b'1'..=b'9'))
                    };
                    // A status: an HTTP error code after it (`"`, blanks, `:` or `=`,
                    // blanks between), else a tally.
                    let status_word = w.starts_with("status");
                    let status_ok = status_word && {
                        let blank = |c: &u8| *c == b' ' || *c == b'\t';
                        let r = &hay[i + w.len()..];
                        let r = r.strip_prefix(b"\"").unwrap_or(r);
                        let r = &r[r.iter().take_while(|c| blank(c)).count()..];
                        let r = r
                            .strip_prefix(b":")
                            .or_else(|| r.strip_prefix(b"="))
                            .unwrap_or(r);
                        let r = &r[r.iter().take_while(|c| blank(c)).count()..];
                        let code = r.iter().take_while(|c| c.is_ascii_digit()).count();
                        !(code == 3 && matches!(r[0], b'4' | b'5'))
                    };
                    let tally = if status_word {
                        status_ok
                    } else if exit_word {
                        exit_zero
                    } else {
                        before || after
                    };
                    if spellings(w).iter().any(|s| s.as_slice() == t) && !named && !tally {
                        out.push((i, *prio));
                    }
                    i += w.len();
                }
                None => i += 1,
            }
        }
        out
    }

    /// Chunked, folded matching equals [`reference`]: on every capture, and on
    /// generated text whose words straddle the chunk boundaries in every case mix.
    #[test]
    fn a_failure_is_named_by_a_word_standing_alone() {
        for yes in [
            &b"{\"conclusion\": \"failure\"}"[..],
            b"Error: connection refused",
            b"[\"not found\", 3]",
        ] {
            assert!(names_a_failure(yes), "{}", String::from_utf8_lossy(yes));
        }
        for no in [
            &b"{\"name\": \"thiserror\"}"[..],
            b"\"registry+https://x#errno@0.3.15\"",
            b"ERR_CONNECTION_REFUSED",
            b"{\"ok\": true, \"warnings\": 1}",
        ] {
            assert!(!names_a_failure(no), "{}", String::from_utf8_lossy(no));
        }
    }

    #[test]
    fn salient_matches_equal_a_byte_by_byte_reading() {
        for hay in crate::text::corpus_captures() {
            assert_eq!(salient_matches(&hay), reference(&hay));
            // One line at a time too (the small buffer, and lines around its size).
            for line in hay.split(|&c| c == b'\n') {
                let want = reference(line).iter().map(|m| m.1).max().unwrap_or(0);
                assert_eq!(salience(line), want);
            }
        }
        let mut next = crate::text::splitmix(11);
        let pieces: &[&[u8]] = &[
            b"error",
            b"Error",
            b"ERROR",
            b"eRRor",
            b"not found",
            b"Not Found",
            b"NOT FOUND",
            b"segmentation fault",
            b"Segmentation fault",
            b"fail:",
            b"FAILED",
            b"failure",
            b"Warning",
            b"exit code",
            b"Exit status",
            b"exited with code",
            b"exit_code",
            b"exitCode",
            b"ReturnCode",
            b"x",
            b" ",
            b"\n",
            b"abc",
            b"\xc3\xa9",
            b"-",
            b"/",
            b"_",
            b".",
            b"@",
            b"0 ",
            b"0",
            b"1",
            b"s",
            b": ",
            b"=",
            b"\"",
        ];
        for round in 0..40 {
            let mut hay = Vec::new();
            // Padding that moves the words across the 4,096-byte chunk edges.
            hay.resize(FOLD_CHUNK - 20 + round, b'.');
            while hay.len() < 3 * FOLD_CHUNK + 100 {
                hay.extend_from_slice(pieces[(next() % pieces.len() as u64) as usize]);
            }
            let got = salient_matches(&hay);
            assert_eq!(got, reference(&hay), "round {round}");
            assert!(!got.is_empty());
        }
    }

    /// A lowercase salient word joined to a name before it (a path, a package, an
    /// identifier) does not count; after a space, a quote, a bracket or a letter it
    /// does, and Title and UPPER spellings count anywhere.
    #[test]
    fn a_word_counted_zero_is_not_salient() {
        for line in [
            &b"checked src/m_0001.c: 0 warnings, 0 errors, exit status 0"[..],
            b"test result: ok. 12 passed; 0 failed; 0 ignored",
            b"Errors: 0, Warnings: 0",
            b"{\"failures\": 0, \"errors\": 0}",
            b"summary failed=0 error=0",
            b"0 Errors",
            b"Process completed with exit code 0.",
            b"the exit code was checked",
            b"web-1 exited with code 0",
            b"job=build exit_code=0 took=2s",
            b"{\"exitCode\": 0}",
            b"returncode: 0",
            b"\"exit_code\" : 0,",
            b"exit_code = 0",
            b"{\"status\": 200, \"path\": \"/\"}",
            b"status: Running",
            b"Status: 304",
            b"status=4040",
            b"git status",
            b"{\"status\": {\"phase\": \"Running\"}}",
        ] {
            assert_eq!(salience(line), 0, "{}", String::from_utf8_lossy(line));
        }
        for (line, want) in [
            (
                &b"checked src/m_1777.c: 0 warnings, 5 errors, exit status 2"[..],
                3,
            ),
            (b"test result: FAILED. 11 passed; 1 failed; 0 ignored", 3),
            (b"10 errors generated.", 3),
            (b"Errors: 03", 3),
            (b"errors: 0x1f", 3),
            (b"failed=0.5", 3),
            (b"0 warnings, 1 error", 3),
            (b"2.0 errors", 3),
            (b"Process completed with exit code 1.", 2),
            (b"command terminated with exit code 137", 2),
            (b"exit status: 2", 2),
            (b"web-1 exited with code 1", 2),
            (b"job=build exit_code=3 took=2s", 2),
            (b"{\"exitCode\": -9}", 2),
            (b"returncode: 1", 2),
            (b"ExitStatus=2", 2),
            (b"\"exit_code\" : 3,", 2),
            (b"exit_code = 1", 2),
            (b"returncode\t: 2", 2),
            (b"{\"status\": 503, \"path\": \"/\"}", 2),
            (b"level=info status=404 path=/x", 2),
            (b"Status: 503 Service Unavailable", 2),
            (b"{\"statusCode\":429}", 2),
            (b"status_code=502", 2),
        ] {
            assert_eq!(salience(line), want, "{}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn a_lowercase_word_inside_a_name_is_not_salient() {
        for name in [
            &b"node_modules/es-errors/index.d.ts"[..],
            b"node_modules/ajv/dist/compile/errors.d.ts",
            b"\xe2\x94\x82 \xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80 http-errors@2.0.0",
            b"ii  libgpg-error0:amd64   1.46-1   amd64",
            b"ajv/dist/runtime/validation_error.d.ts",
            b"test_assert_rounding PASSED",
            b"import requests.exceptions",
            b"node_modules/@types/node/assert/strict.d.ts",
        ] {
            assert_eq!(salience(name), 0, "{}", String::from_utf8_lossy(name));
        }
        for (line, want) in [
            (&b"src/error.rs:12:5: error: expected `;`"[..], 3),
            (b"schema-utils/declarations/ValidationError.d.ts", 3),
            (b"net::ERR_CONNECTION_REFUSED", 2),
            (b"tests/test_errors.py::test_x FAILED", 3),
            (b"level=error msg=\"disk full\"", 3),
            (b"\"error\": \"boom\"", 3),
            (b"(errno 28) no space left", 3),
            (b"-- error at line 3", 3),
            (b"Downloading...failed", 3),
            (b"see /errors/42 for details", 3),
        ] {
            assert_eq!(salience(line), want, "{}", String::from_utf8_lossy(line));
        }
    }

    #[test]
    fn salience_reads_three_spellings_only() {
        assert_eq!(salience(b"ERROR: disk"), 3);
        assert_eq!(salience(b"an Error here"), 3);
        assert_eq!(salience(b"eRRor"), 0);
        assert_eq!(salience(b"Warning: x"), 1);
        assert_eq!(salience(b"plain"), 0);
    }
}
