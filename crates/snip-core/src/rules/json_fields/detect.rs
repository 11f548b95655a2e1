//! Detection: does an input look like (or is it) one JSON document or JSON Lines?

use super::*;

/// Cheap check: does `input` look like one JSON document or JSON Lines? After optional
/// whitespace it must start with `{` or `[`, the next token must be able to follow that
/// bracket, and the last non-whitespace byte must be `}` or `]`; or, for JSON Lines
/// whose first or last line is a scalar (`"start"`, `42`, `null`), that line must be one
/// JSON scalar and the other end open or close a container or be a scalar line too.
/// Looks only at the leading and trailing whitespace, a few bytes and those scalar
/// lines; [`apply`] does the full parse.
pub fn looks_like_json(input: &[u8]) -> bool {
    let input = input.strip_prefix(BOM).unwrap_or(input);
    let Some(first) = input.iter().position(|b| !is_ws(*b)) else {
        return false;
    };
    let Some(last) = input.iter().rposition(|b| !is_ws(*b)) else {
        return false;
    };
    let open = input[first];
    if !matches!(input[last], b'}' | b']') || !matches!(open, b'{' | b'[') || last == first {
        return lines_with_a_scalar_end(&input[first..=last]);
    }
    let Some(next) = input[first + 1..].iter().find(|b| !is_ws(**b)) else {
        return false;
    };
    match open {
        b'{' => matches!(next, b'"' | b'}'),
        _ => matches!(
            next,
            b'{' | b'[' | b']' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n'
        ),
    }
}

/// [`looks_like_json`] for JSON Lines that open or end with a scalar line: `text`
/// (trimmed) holds a line feed, its first line is one JSON scalar or opens a container,
/// its last line is one JSON scalar or closes a container, and some line opens one (a
/// column of numbers, `seq`'s output, stays text).
fn lines_with_a_scalar_end(text: &[u8]) -> bool {
    let (Some(a), Some(b)) = (memchr(b'\n', text), memchr::memrchr(b'\n', text)) else {
        return false;
    };
    let (head, tail) = (&text[..a], &text[b + 1..]);
    let opens = matches!(text[0], b'{' | b'[');
    let closes = matches!(text[text.len() - 1], b'}' | b']');
    (opens || is_json_scalar(head))
        && (closes || is_json_scalar(tail))
        && !(opens && closes)
        && (opens || memmem::find(text, b"\n{").is_some() || memmem::find(text, b"\n[").is_some())
}

/// Whether `input` is one JSON scalar (a number, `true`, `false`, `null` or a string)
/// with only JSON whitespace (space, tab, `\r`, `\n`) around it, so that a JSON
/// parser reads it as a document. Looks at its first and last bytes first; a string
/// is checked whole only when it starts and ends with `"`.
pub fn is_json_scalar(input: &[u8]) -> bool {
    let Some(first) = input.iter().position(|b| !is_ws(*b)) else {
        return false;
    };
    let last = input.iter().rposition(|b| !is_ws(*b)).unwrap_or(first);
    let v = &input[first..=last];
    match v[0] {
        b'-' | b'0'..=b'9' => number_len(v) == Some(v.len()),
        b't' | b'f' | b'n' => matches!(v, b"true" | b"false" | b"null"),
        // One string holds no raw line feed (JSON escapes it): lines of strings are
        // JSON Lines, not one scalar.
        b'"' => v.len() >= 2 && v.ends_with(b"\"") && memchr(b'\n', v).is_none() && is_json(v),
        _ => false,
    }
}

/// The UTF-8 byte-order mark, which some tools write before JSON.
pub(super) const BOM: &[u8] = b"\xef\xbb\xbf";

/// Where the first byte that is not JSON whitespace is in `head` (after any
/// byte-order mark was taken off).
fn first_text(head: &[u8]) -> Option<usize> {
    head.iter().position(|b| !is_ws(*b))
}

/// Whether `head` holds all that [`opens_multiline_document`] reads of an input that
/// starts with it: its first line after a byte-order mark and whitespace, ended.
pub(crate) fn holds_first_line(head: &[u8]) -> bool {
    if head.len() < BOM.len() && BOM.starts_with(head) {
        return false;
    }
    let head = head.strip_prefix(BOM).unwrap_or(head);
    first_text(head).is_some_and(|p| memchr::memchr(b'\n', &head[p..]).is_some())
}

/// Whether `head` (the first bytes of an input) opens a JSON document that spans
/// lines, which cutting between lines would break: `{` or `[` after optional
/// whitespace, and a first non-blank line that is not a JSON value by itself (JSON
/// Lines are one document per line, and stay valid when cut between lines).
/// Logs whose lines start with `[` (`[INFO] …`, `[2024-01-01 12:00:00] …`,
/// `[1/3] Building`) are not: the first token after the bracket must be one JSON
/// allows there.
pub fn opens_multiline_document(head: &[u8]) -> bool {
    let head = head.strip_prefix(BOM).unwrap_or(head);
    let Some(p) = first_text(head) else {
        return false;
    };
    if !matches!(head[p], b'{' | b'[') || !starts_json_value(&head[p..]) {
        return false;
    }
    let end = memchr::memchr(b'\n', &head[p..]).map_or(head.len(), |k| p + k);
    !is_json(&head[p..end])
}

/// Whether `b` (starting with `{` or `[`) begins as JSON does: after `{` a string key
/// and `:` or `}`; after `[` a value (a number, string or literal followed by `,`, `]`
/// or whitespace, or an object, array or `]`). What follows is not checked; running
/// out of bytes counts as a yes.
pub(super) fn starts_json_value(b: &[u8]) -> bool {
    let skip = |i: usize| i + b[i..].iter().take_while(|c| is_ws(**c)).count();
    let i = skip(1);
    let Some(&c) = b.get(i) else { return true };
    // The end of a string token starting at `i` (after its closing quote).
    let string_end = |i: usize| {
        let mut k = i + 1;
        while k < b.len() {
            match b[k] {
                b'\\' => k += 2,
                b'"' => return Some(k + 1),
                b'\n' => return None,
                _ => k += 1,
            }
        }
        Some(b.len())
    };
    let followed_by = |k: usize, ok: &[u8]| {
        let k = skip(k);
        k >= b.len() || ok.contains(&b[k])
    };
    if b[0] == b'{' {
        return match c {
            b'}' => true,
            b'"' => string_end(i).is_some_and(|k| followed_by(k, b":")),
            _ => false,
        };
    }
    match c {
        b'{' | b'[' | b']' => true,
        b'"' => string_end(i).is_some_and(|k| followed_by(k, b",]")),
        b'-' | b'0'..=b'9' => number_len(&b[i..]).is_some_and(|n| followed_by(i + n, b",]")),
        b't' | b'f' | b'n' => [&b"true"[..], b"false", b"null"]
            .iter()
            .any(|w| b[i..].starts_with(w) && followed_by(i + w.len(), b",]")),
        _ => false,
    }
}

/// The length of the JSON number at the start of `b` (RFC 8259 §6: `-`? then `0` or
/// digits not starting with `0`, then `.digits`? and `e`/`E` `+`/`-`? `digits`?), or
/// `None`. `2024-01-01` reads as `2024`, followed by `-`: not a value's end.
pub(super) fn number_len(b: &[u8]) -> Option<usize> {
    let digits = |i: usize| {
        b[i.min(b.len())..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count()
    };
    let mut i = usize::from(b.first() == Some(&b'-'));
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i += digits(i),
        _ => return None,
    }
    if b.get(i) == Some(&b'.') {
        let n = digits(i + 1);
        if n == 0 {
            return None;
        }
        i += 1 + n;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1 + usize::from(matches!(b.get(i + 1), Some(b'+' | b'-')));
        let n = digits(i);
        if n == 0 {
            return None;
        }
        i += n;
    }
    Some(i)
}

/// Full check: is `input` what [`apply`] accepts, i.e. one JSON document, or JSON Lines
/// (at least two non-blank lines, each one JSON value)? One pass over the input.
///
/// [`apply`] returns `None` both for "not JSON" and for "valid JSON, nothing to save";
/// a caller that must never cut a JSON payload as text asks this to tell them apart.
pub fn is_json(input: &[u8]) -> bool {
    if std::str::from_utf8(input).is_err() {
        return false;
    }
    let params = ScanParams::new(&Config::default());
    if scan(input, 0, input.len(), &params, false).is_some() {
        return true;
    }
    lines_are_json(input, &params)
}

/// Whether `input` is JSON Lines and not one document: at least two non-blank lines,
/// each one JSON value, and the whole not one JSON value (one document with blank lines
/// before or after it is one document, not JSON Lines). Only JSON Lines may be cut
/// between lines.
pub fn is_json_lines(input: &[u8]) -> bool {
    if std::str::from_utf8(input).is_err() {
        return false;
    }
    let params = ScanParams::new(&Config::default());
    scan(input, 0, input.len(), &params, false).is_none() && lines_are_json(input, &params)
}

fn lines_are_json(input: &[u8], params: &ScanParams) -> bool {
    let mut lines = 0;
    let mut start = 0;
    while start < input.len() {
        let end = memchr(b'\n', &input[start..]).map_or(input.len(), |p| start + p);
        if input[start..end].iter().any(|b| !is_ws(*b)) {
            if scan(input, start, end, params, false).is_none() {
                return false;
            }
            lines += 1;
        }
        start = end + 1;
    }
    lines >= 2
}
