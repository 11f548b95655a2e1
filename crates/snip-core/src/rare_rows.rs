//! Rare rows of a status column: failures that print no error word. A table whose
//! rows are aligned in columns (`kubectl get pods`, `docker ps -a`, `systemctl
//! list-units`), a test runner's marks (`✓` / `✕`), a log's level column: one column
//! holds the same word on almost every row (`Running`, `Up`, `✓`, `INFO`), and the
//! rows that matter hold another (`CrashLoopBackOff`, `Exited`, `✕`, `WARN`). Those
//! rows are as telling as a line with an error word: `head-tail-elide` and
//! `shape-fold` treat them as salient (priority [`RARE_PRIORITY`]).
//!
//! A status column is found by where words start, in bytes from the line's start
//! (0-based): columns a program aligns start at the same byte on every row; or by a
//! word's rank on its row (the 4th word), for tables whose columns are separated by
//! spaces but not aligned; or by a comma-separated field's rank, for a CSV table
//! (rows of at least [`FIELDS_MIN`] fields; its first row is its header). Read from
//! the first [`SAMPLE`] lines: a byte column where
//! at least three quarters of them start a word (or a rank at least three quarters
//! of them reach), and where one word (a *status word*: no digit, at most
//! [`WORD_MAX`] bytes, starting with a letter, a non-ASCII character or one of the
//! marks `+`, `~`, `!`, `*`, `?`) is on at least three quarters of those. Then every
//! line is read at that byte: a status word other than the common one there (or a
//! word starting with a letter that holds digits too, a state with a count in it:
//! `Init:0/1`), held by
//! at most [`RARE_SHARE_PERCENT`] % of the rows with a word there (at least one row,
//! and at least [`MIN_ROWS`] such rows), makes its rows rare. A column where more
//! than a quarter of the rows differ is not a status column, nor is the rows' first
//! word when the common one holds a lower-case letter (`test …`, `Compiling …`: a log
//! line's verb; a mark or a level such as `INFO` may be).
//!
//! An access log's status column holds numbers: a column where HTTP statuses of
//! success or redirection (`200`, `304`, `206`: three digits, `100` to `399`, counted
//! as one word) are the common word is a status column too, and its rare words are
//! the error codes alone (`404`, `503`: `400` to `599`), never a count.
//!
//! The cost is one pass over the sample's bytes and a comparison of at most
//! [`MAX_COLUMNS`] words per line: a few microseconds on a 50 KB output.

use crate::doc::Line;

/// The priority of a rare row, as a salient word's (see `crate::salience`): counted
/// in gap markers and kept in folded runs, like `not found` or `denied`.
pub(crate) const RARE_PRIORITY: u8 = 2;

/// Lines read to find the status columns.
const SAMPLE: usize = 64;
/// Fewest rows with a word at a column for it to be read as a status column.
const MIN_ROWS: usize = 20;
/// A rare word is on at most this share of the rows with a word at its column.
const RARE_SHARE_PERCENT: usize = 5;
/// Longest status word, bytes.
const WORD_MAX: usize = 32;
/// Byte columns past this are not read (a word that starts further is in free text).
const COL_MAX: usize = 256;
/// Status columns read at most.
const MAX_COLUMNS: usize = 6;
/// Different rare words a column may hold before it is read as free text.
const MAX_RARE_WORDS: usize = 16;

/// The indices (ascending) of the lines of `lines` (text in `buf`; marker lines are
/// skipped) whose word in a status column is rare (see the module docs).
pub(crate) fn rare_rows(buf: &[u8], lines: &[Line]) -> Vec<usize> {
    rare_rows_apart(buf, lines, &[])
}

/// [`rare_rows`], told which lines differ from the line before them only in digits:
/// `apart[k]` when line `k` is as long as line `k - 1` and their bytes differ only
/// where both are ASCII digits (`apart` may be empty: not known). Such a line has the
/// line before's blanks and commas at the same places, so its word in a column is
/// where that line's is, and is the same word when that one holds no digit: it is not
/// read again (a log of lines a counter apart reads each column's word once).
pub(crate) fn rare_rows_apart(buf: &[u8], lines: &[Line], apart: &[bool]) -> Vec<usize> {
    let text = |l: &Line| &buf[l.start..l.end];
    let rows = lines.iter().filter(|l| l.marker.is_none());
    let sample: Vec<&[u8]> = rows.clone().take(SAMPLE).map(text).collect();
    if lines.len() < MIN_ROWS || sample.len() < MIN_ROWS {
        return Vec::new();
    }
    let columns = status_columns(&sample);
    if columns.is_empty() {
        return Vec::new();
    }
    let first = lines.iter().position(|l| l.marker.is_none()).unwrap_or(0);
    let mut out = Vec::new();
    for (col, common) in columns {
        // Rows with a word at `col`, and the other status words there with their rows.
        let mut with_word = 0usize;
        let mut others: Vec<(&[u8], Vec<usize>)> = Vec::new();
        let mut free_text = false;
        // The word at `col` of the line before (`None`: none there), when that line
        // is not a marker and the word holds no digit.
        let mut before: Option<Option<&[u8]>> = None;
        for (k, l) in lines.iter().enumerate() {
            if l.marker.is_some() {
                before = None;
                continue;
            }
            let word = match before {
                Some(w) if apart.get(k) == Some(&true) => w,
                _ => {
                    let w = col.word(text(l));
                    before = match w {
                        Some(w) if w.iter().any(u8::is_ascii_digit) => None,
                        _ => Some(w),
                    };
                    w
                }
            };
            let Some(w) = word else {
                continue;
            };
            with_word += 1;
            if w == common {
                continue;
            }
            // A table's header row (`STATUS` over the statuses) is not a rare row.
            // A CSV table's first row names its fields (`status`).
            let header = k == first
                && (matches!(col, Col::Field(_))
                    || w.iter().all(|b| b.is_ascii_uppercase() || *b == b'_'));
            let rare = if common == HTTP_OK {
                is_http_error(w)
            } else {
                is_rare_word(w)
            };
            if header || !rare {
                continue;
            }
            if let Some((_, at)) = others.iter_mut().find(|(o, _)| *o == w) {
                at.push(k);
            } else if others.len() < MAX_RARE_WORDS {
                others.push((w, vec![k]));
            } else {
                free_text = true;
                break;
            }
        }
        let differ: usize = others.iter().map(|(_, at)| at.len()).sum();
        if free_text || with_word < MIN_ROWS || differ * 4 > with_word {
            continue;
        }
        let most = (with_word * RARE_SHARE_PERCENT / 100).max(1);
        for (_, at) in others {
            if at.len() <= most {
                out.extend(at);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Where a column's word is on a row: starting at a byte (columns a program aligns),
/// or the row's `k`-th word (0-based; a table whose columns are separated by spaces
/// but not aligned).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    Byte(usize),
    Word(usize),
    /// The row's `k`-th comma-separated field (0-based, spaces around it trimmed), on
    /// rows of at least [`FIELDS_MIN`] fields: a CSV table, whose rows have no spaces
    /// to split on.
    Field(usize),
}

impl Col {
    /// This column's word on row `t`.
    fn word(self, t: &[u8]) -> Option<&[u8]> {
        match self {
            Col::Byte(c) => word_at(t, c),
            Col::Word(k) => nth_word(t, k),
            Col::Field(k) => fields(t).and_then(|mut f| f.nth(k)),
        }
    }
}

/// Fewest comma-separated fields on a row for its fields to be read as columns.
const FIELDS_MIN: usize = 3;

/// The comma-separated fields of `t` (spaces around each trimmed), when it has at
/// least [`FIELDS_MIN`] of them.
fn fields(t: &[u8]) -> Option<impl Iterator<Item = &[u8]>> {
    let commas = memchr::memchr_iter(b',', t).take(FIELDS_MIN - 1).count();
    (commas == FIELDS_MIN - 1).then(|| t.split(|&b| b == b',').map(<[u8]>::trim_ascii))
}

/// Words (runs of bytes other than spaces and tabs) a row starts with, read at most
/// (an access log's status is its 9th).
const WORDS_MAX: usize = 12;

/// Word `k` (0-based) of `t`, words being runs of bytes other than spaces and tabs.
/// Every row of a column is read this way: 16 bytes at a time, as a mask of their
/// blanks, whose words' first bytes are counted without a branch a byte (a `split` and
/// a `filter` of the row's bytes, or a loop over them, took a fifth of `shape-fold`
/// on a 50 KB `cargo test` log, most of it in branches mispredicted at word ends).
fn nth_word(t: &[u8], k: usize) -> Option<&[u8]> {
    // Words started before `at`, and whether the byte before `at` is blank (or none).
    let (mut seen, mut after_blank) = (0usize, true);
    let mut at = 0;
    while at < t.len() {
        let n = (t.len() - at).min(16);
        let blank = blank_mask(t, at);
        let firsts = !blank & ((blank << 1) | u32::from(after_blank)) & ((1 << n) - 1);
        let count = firsts.count_ones() as usize;
        if seen + count > k {
            let mut f = firsts;
            for _ in seen..k {
                f &= f - 1;
            }
            let start = at + f.trailing_zeros() as usize;
            let end = t[start..]
                .iter()
                .position(|&b| b == b' ' || b == b'\t')
                .map_or(t.len(), |e| start + e);
            return Some(&t[start..end]);
        }
        seen += count;
        after_blank = blank >> (n - 1) & 1 == 1;
        at += n;
    }
    None
}

/// Bit `i` set when byte `at + i` of `t` is a space or a tab, for `i` below 16 and
/// `at + i` below `t.len()` (the bits for bytes past the end mean nothing). Read from
/// `t` in place, its last 16 bytes for its last bytes: copied to a buffer first, each
/// row's bytes were read back as one 16-byte load before the copy was done, a stall
/// on every row. Only a row shorter than 16 bytes is copied.
fn blank_mask(t: &[u8], at: usize) -> u32 {
    use wide::u8x16;
    let blanks = |b: &[u8]| {
        let v = u8x16::new(b.try_into().expect("16 bytes"));
        (v.simd_eq(u8x16::splat(b' ')) | v.simd_eq(u8x16::splat(b'\t'))).to_bitmask()
    };
    let n = t.len() - at;
    if n >= 16 {
        blanks(&t[at..at + 16])
    } else if t.len() >= 16 {
        blanks(&t[t.len() - 16..]) >> (16 - n)
    } else {
        let mut padded = [b' '; 16];
        padded[..n].copy_from_slice(&t[at..]);
        blanks(&padded)
    }
}

/// The status columns of `sample` (see the module docs): where, and the common word.
fn status_columns<'a>(sample: &[&'a [u8]]) -> Vec<(Col, &'a [u8])> {
    // Rows that start a word at each byte column, and rows with a `k`-th word.
    let mut starts = [0u16; COL_MAX];
    let mut nth = [0u16; WORDS_MAX];
    let mut nth_field = [0u16; WORDS_MAX];
    for t in sample {
        if let Some(f) = fields(t) {
            for (k, _) in f.take(WORDS_MAX).enumerate() {
                nth_field[k] += 1;
            }
        }
        let t = &t[..t.len().min(COL_MAX)];
        let mut prev_space = true;
        let mut k = 0;
        for (c, &b) in t.iter().enumerate() {
            let space = b == b' ' || b == b'\t';
            if prev_space && !space {
                starts[c] += 1;
                if k < WORDS_MAX {
                    nth[k] += 1;
                }
                k += 1;
            }
            prev_space = space;
        }
    }
    let need = (sample.len() * 3 / 4).max(MIN_ROWS);
    let by_byte = starts.iter().enumerate().map(|(c, &n)| (Col::Byte(c), n));
    let by_word = nth.iter().enumerate().map(|(k, &n)| (Col::Word(k), n));
    let by_field = nth_field
        .iter()
        .enumerate()
        .map(|(k, &n)| (Col::Field(k), n));
    let mut out: Vec<(Col, &[u8])> = Vec::new();
    // The sample rows each column of `out` reaches.
    let mut reach: Vec<u16> = Vec::new();
    for (col, n) in by_byte.chain(by_word).chain(by_field) {
        if (n as usize) < need {
            continue;
        }
        // The most common word at `col` in the sample, and on how many rows.
        // Only words that may be a column's common word are counted (a column of
        // names or numbers, a word of its own on each row, compared every pair of
        // rows). The column found is the same: a status word is taken on at least
        // three quarters of `n`, itself at least three quarters of the sample, so
        // no other word is as common.
        let mut words: Vec<(&[u8], usize)> = Vec::new();
        for t in sample {
            let Some(w) = col.word(t).map(status_key) else {
                continue;
            };
            if w == HTTP_OK || is_status_word(w) {
                match words.iter_mut().find(|(o, _)| *o == w) {
                    Some((_, c)) => *c += 1,
                    None => words.push((w, 1)),
                }
            }
        }
        let Some(&(common, count)) = words.iter().max_by_key(|(_, c)| *c) else {
            continue;
        };
        // A column found both ways (an aligned table) is read once; a word's rank is
        // read too when the byte column with its word reaches fewer rows (an access
        // log's status after client addresses of different lengths).
        let seen = out
            .iter()
            .zip(&reach)
            .any(|(&(_, w), &r)| w == common && r >= n);
        // The rows' first word (`test …`, `Compiling …`, `running …`) is the verb of a
        // log line, not a status, unless it is a mark or a level (`✓`, `+`, `INFO`): a
        // first word in lower case makes every other line of free text "rare".
        let leads = match col {
            Col::Word(k) | Col::Field(k) => k == 0,
            Col::Byte(c) => {
                sample
                    .iter()
                    .filter(|t| col.word(t) == Some(common))
                    .filter(|t| t[..c].iter().all(|&b| b == b' ' || b == b'\t'))
                    .count()
                    * 2
                    > count
            }
        };
        let verb = leads && common.iter().any(u8::is_ascii_lowercase);
        let status = is_status_word(common) || common == HTTP_OK;
        if status && count * 4 >= n as usize * 3 && !seen && !verb {
            out.push((col, common));
            reach.push(n);
            if out.len() == MAX_COLUMNS {
                break;
            }
        }
    }
    out
}

/// The word starting at byte `col` of `t` (after a space or tab, or at the start),
/// up to the next space or tab.
fn word_at(t: &[u8], col: usize) -> Option<&[u8]> {
    let first = *t.get(col)?;
    if first == b' ' || first == b'\t' || (col > 0 && !matches!(t[col - 1], b' ' | b'\t')) {
        return None;
    }
    let rest = &t[col..];
    let len = rest
        .iter()
        .position(|&b| b == b' ' || b == b'\t')
        .unwrap_or(rest.len());
    Some(&rest[..len])
}

/// A status word: no ASCII digit, at most [`WORD_MAX`] bytes, starting with a letter
/// or one of `+ ~ ! * ?` (a plan's or a checker's marks), or one non-ASCII character
/// that draws no line or block (`✓`, `✕`; not a tree's `├──` or `│`).
fn is_status_word(w: &[u8]) -> bool {
    if w.len() > WORD_MAX || w.iter().any(u8::is_ascii_digit) {
        return false;
    }
    match w.first() {
        Some(&b) if b.is_ascii_alphabetic() || b"+~!*?".contains(&b) => true,
        Some(&b) if b >= 0x80 => std::str::from_utf8(w).is_ok_and(|s| {
            let mut cs = s.chars();
            // Box drawing and block elements: U+2500 to U+259F.
            cs.next()
                .is_some_and(|c| !('\u{2500}'..='\u{259f}').contains(&c))
                && cs.next().is_none()
        }),
        _ => false,
    }
}

/// The common word of an access log's status column: its HTTP success and
/// redirection codes counted as one ([`status_key`]; `200`, `304` and `206` mixed).
const HTTP_OK: &[u8] = b"1XX-3XX";

/// The word a column's rows are counted by: `w`, or [`HTTP_OK`] for an HTTP success or
/// redirection code.
fn status_key(w: &[u8]) -> &[u8] {
    if is_http_success(w) {
        HTTP_OK
    } else {
        w
    }
}

/// Whether `w` is an HTTP status code of success or redirection (three digits, `100`
/// to `399`: `200`, `204`, `304`): the common word of an access log's status column.
/// Its rare words are then the error codes alone ([`is_http_error`]): a count column
/// (`ls -l`'s links, `1` on most rows) is not one, nor a `201` among `200`s.
fn is_http_success(w: &[u8]) -> bool {
    w.len() == 3 && (b'1'..=b'3').contains(&w[0]) && w[1..].iter().all(u8::is_ascii_digit)
}

/// Whether `w` is an HTTP error status code (`400` to `599`).
fn is_http_error(w: &[u8]) -> bool {
    w.len() == 3 && (b'4'..=b'5').contains(&w[0]) && w[1..].iter().all(u8::is_ascii_digit)
}

/// Whether `w` may be a rare word of a status column: a status word
/// ([`is_status_word`]), or a word of at most [`WORD_MAX`] bytes that starts with an
/// ASCII letter and holds another letter, digits and marks allowed (`Init:0/1`,
/// `Init:CrashLoopBackOff`, `Exit:137`): a state with a count in it. The common word
/// has no digit, so a column of names or numbers never has one.
fn is_rare_word(w: &[u8]) -> bool {
    is_status_word(w)
        || (w.len() <= WORD_MAX
            && w.first().is_some_and(u8::is_ascii_alphabetic)
            && w[1..].iter().any(u8::is_ascii_alphabetic))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::Doc;

    #[test]
    fn a_rows_nth_word_is_the_nth_run_of_bytes_between_blanks() {
        let rows = [
            "",
            " ",
            "\t\t",
            "a",
            " a",
            "a ",
            "ab  cd\tef",
            "  x\t y z  ",
            "a\t\tb",
            "test tests::record_0001 ... ok",
            "\u{2713} renders case 7 (3 ms)",
        ];
        // Rows across 16-byte blocks: words and blank runs that start or end at a
        // block's edge.
        let long: Vec<String> = (0..300)
            .map(|i| {
                let mut r = crate::text::splitmix(i);
                (0..40 + r() % 150)
                    .map(|_| match r() % 5 {
                        0 => ' ',
                        1 => '\t',
                        _ => 'w',
                    })
                    .collect()
            })
            .collect();
        for row in rows.into_iter().chain(long.iter().map(String::as_str)) {
            let reference: Vec<&[u8]> = row
                .as_bytes()
                .split(|&b| b == b' ' || b == b'\t')
                .filter(|w| !w.is_empty())
                .collect();
            for k in 0..reference.len() + 2 {
                assert_eq!(
                    nth_word(row.as_bytes(), k),
                    reference.get(k).copied(),
                    "{row:?} {k}"
                );
            }
        }
    }

    #[test]
    fn rows_a_counter_apart_read_as_rows_read_afresh() {
        // Whether each line differs from the one before only where both hold digits.
        let apart = |doc: &Doc<'_>| -> Vec<bool> {
            let t = |k: usize| doc.text(&doc.lines[k]);
            (0..doc.lines.len())
                .map(|k| {
                    k > 0
                        && t(k).len() == t(k - 1).len()
                        && t(k)
                            .iter()
                            .zip(t(k - 1))
                            .all(|(a, b)| a == b || (a.is_ascii_digit() && b.is_ascii_digit()))
                })
                .collect()
        };
        // Fixed-width rows: an HTTP error a counter apart from the success before it
        // (its word holds digits: read again), a state with a count (`Init:0/1`, then
        // `Init:1/1`), statuses among rows a counter apart.
        let access: String = (0..80)
            .map(|i| {
                let st = if i % 37 == 5 { 503 } else { 200 };
                format!(
                    "10.0.0.{:03} \"GET /items/{i:04} HTTP/1.1\" {st} {:05}\n",
                    i % 7,
                    i * 13
                )
            })
            .collect();
        let table = pods(
            70,
            &[(20, "Init:0/1"), (21, "Init:1/1"), (50, "CrashLoopBackOff")],
        );
        for text in [access.as_str(), table.as_str()] {
            let doc = Doc::from_raw(text.as_bytes());
            let apart = apart(&doc);
            assert!(apart.iter().filter(|&&a| a).count() > doc.lines.len() / 2);
            let want = rare_rows(&doc.buf, &doc.lines);
            assert!(!want.is_empty());
            assert_eq!(rare_rows_apart(&doc.buf, &doc.lines, &apart), want);
        }
        assert_eq!(rare(&access), [5, 42, 79]);
    }

    fn rare(text: &str) -> Vec<usize> {
        let doc = Doc::from_raw(text.as_bytes());
        rare_rows(&doc.buf, &doc.lines)
    }

    fn pods(n: usize, bad: &[(usize, &str)]) -> String {
        let mut s = String::from(
            "NAME                         READY   STATUS             RESTARTS   AGE\n",
        );
        for i in 0..n {
            let status = bad
                .iter()
                .find(|(k, _)| *k == i)
                .map_or("Running", |(_, s)| s);
            s.push_str(&format!(
                "web-{i:05}-7d9f8c-abcde      1/1     {status:<18} {}          3d\n",
                i % 7
            ));
        }
        s
    }

    #[test]
    fn an_http_error_status_among_successes() {
        let line = |i: usize, st: u16| {
            format!(
                "10.0.{}.{} - - [01/May/2026:12:{:02}:{:02} +0000] \"GET /api/items?page={} HTTP/1.1\" {st} {} \"-\" \"curl/8.5.0\"\n",
                i % 256,
                i % 200 + 1,
                i / 60 % 60,
                i % 60,
                i % 97,
                (i * 7919) % 99_991 + 100
            )
        };
        let log: String = (0..600)
            .map(|i| match i {
                333 => line(i, 503),
                444 => line(i, 404),
                _ if i % 50 == 7 => line(i, 304),
                _ if i % 40 == 3 => line(i, 201),
                _ => line(i, 200),
            })
            .collect();
        assert_eq!(rare(&log), [333, 444]);
        // `200` on fewer than three rows in four: successes and redirections are one
        // status.
        let mixed: String = (0..600)
            .map(|i| match i {
                101 => line(i, 500),
                404 => line(i, 429),
                _ => line(i, [200, 304, 200, 302, 206, 200, 301, 200][i % 8]),
            })
            .collect();
        assert_eq!(rare(&mixed), [101, 404]);
        // Successes and redirections alone: nothing is rare.
        let ok: String = (0..600)
            .map(|i| line(i, [200, 200, 200, 301, 204][i % 5]))
            .collect();
        assert!(rare(&ok).is_empty());
        // A column of counts (`ls -l`'s links) is not a status column.
        let ls: String = (0..300)
            .map(|i| {
                let links = if i == 100 { 404 } else { 1 };
                format!(
                    "-rw-r--r-- {links} user user {} May  1 12:00 file{i}.txt\n",
                    i * 13
                )
            })
            .collect();
        assert!(rare(&ls).is_empty());
    }

    #[test]
    fn a_rare_status_in_an_aligned_table() {
        let t = pods(
            500,
            &[
                (100, "CrashLoopBackOff"),
                (300, "Pending"),
                (450, "CrashLoopBackOff"),
            ],
        );
        assert_eq!(rare(&t), [101, 301, 451]);
        // A state with a count in it (a pod still in its init containers).
        let t = pods(300, &[(40, "Init:0/1"), (41, "Init:CrashLoopBackOff")]);
        assert_eq!(rare(&t), [41, 42]);
    }

    #[test]
    fn a_rare_status_in_a_table_not_aligned() {
        let mut s = String::from("NAMESPACE NAME READY STATUS RESTARTS AGE\n");
        for i in 0..400 {
            let st = if i == 222 {
                "ImagePullBackOff"
            } else {
                "Running"
            };
            let pad = " ".repeat(i % 4 + 1);
            s.push_str(&format!(
                "ns-{}{pad}pod-{i} 1/1   {st}   0   {}d\n",
                i % 3,
                i % 90
            ));
        }
        assert_eq!(rare(&s), [223]);
    }

    #[test]
    fn a_rare_status_in_a_csv_table() {
        let mut s = String::from("order_id,customer_id,status,amount_cents,sku\n");
        for i in 0..3000 {
            let st = if matches!(i, 1234 | 2718) {
                "chargeback"
            } else {
                "paid"
            };
            s.push_str(&format!(
                "{},{},{st},{},SKU-{}\n",
                100_000 + i,
                i * 7 % 9973,
                i * 13 % 99_991,
                i % 89
            ));
        }
        // Its header row's `status` is not a rare row.
        assert_eq!(rare(&s), [1235, 2719]);
        // Two fields are not a table.
        let pairs: String = (0..300)
            .map(|i| format!("key{i},{}\n", if i == 150 { "failed" } else { "ok" }))
            .collect();
        assert!(rare(&pairs).is_empty());
        assert_eq!(rare(&pairs.replace(",", ",x,")), [150]);
    }

    #[test]
    fn a_common_second_status_is_not_rare() {
        // A third of the rows hold `Completed`: not a few rows that stand out.
        let bad: Vec<(usize, &str)> = (0..500).step_by(3).map(|k| (k, "Completed")).collect();
        assert!(rare(&pods(500, &bad)).is_empty());
    }

    #[test]
    fn marks_and_levels_are_status_columns() {
        let mut s = String::new();
        for i in 0..200 {
            let mark = if i == 77 { "✕" } else { "✓" };
            s.push_str(&format!("  {mark} renders case {i} ({} ms)\n", i % 13));
        }
        assert_eq!(rare(&s), [77]);
        let mut s = String::new();
        for i in 0..200 {
            let level = if i % 50 == 7 { "WARN " } else { "INFO " };
            s.push_str(&format!(
                "2026-12-01T10:00:{:02} {level} request {i} handled\n",
                i % 60
            ));
        }
        assert_eq!(rare(&s), [7, 57, 107, 157]);
    }

    #[test]
    fn a_leading_verb_is_not_a_status_column() {
        // A test runner's lines all start with `test`: the lines among them that do
        // not (`running 600 tests`, `failures:`, `stack backtrace:`) are not rare rows.
        let mut s = String::from("running 600 tests\n");
        for i in 0..600 {
            s.push_str(&format!("test tests::record_{i:04} ... ok\n"));
            if i % 100 == 50 {
                s.push_str("stack backtrace:\nfailures:\n");
            }
        }
        assert_eq!(rare(&s), Vec::<usize>::new());
    }

    #[test]
    fn a_tree_has_no_status_column() {
        let mut s = String::new();
        for i in 0..300 {
            let branch = if i % 30 == 29 {
                "└──"
            } else {
                "├──"
            };
            s.push_str(&format!(
                "{branch} crate-{i} v1.0.{i}\n│   └── dep v0.1.{i}\n"
            ));
        }
        assert!(rare(&s).is_empty());
    }

    #[test]
    fn free_text_and_numbers_have_no_status_column() {
        let words = ["alpha", "beta", "gamma", "delta", "eps"];
        let mut s = String::new();
        for i in 0..300 {
            s.push_str(&format!(
                "{} went to {} at {i}\n",
                words[i % 5],
                words[(i * 7) % 5]
            ));
        }
        assert!(rare(&s).is_empty());
        let nums: String = (0..300).map(|i| format!("{i}\n")).collect();
        assert!(rare(&nums).is_empty());
        // `ls -l`: modes are not status words (`-rw-r--r--`), so directories are not
        // rare rows.
        let mut s = String::new();
        for i in 0..300 {
            let mode = if i % 40 == 0 {
                "drwxr-xr-x"
            } else {
                "-rw-r--r--"
            };
            s.push_str(&format!("{mode} 1 user user {i:>6} Dec  1 10:00 file{i}\n"));
        }
        assert!(rare(&s).is_empty());
    }
}
