//! Larger inputs for the criterion benches, built deterministically in memory from the
//! bundled captures.

use crate::captures::FILES;
use crate::Kind;
use snip_core::RuleId;

/// A mixed log of exactly `len` bytes, or less when cut back to the last whole line:
/// the text captures (every capture that is neither JSON nor a diff), concatenated in
/// manifest order and repeated.
pub fn mixed_log(len: usize) -> Vec<u8> {
    let texts: Vec<&[u8]> = FILES
        .iter()
        .filter(|f| f.kind == Kind::Text)
        .map(|f| f.bytes)
        .collect();
    let mut out = Vec::with_capacity(len);
    'fill: loop {
        for t in &texts {
            if out.len() + t.len() > len {
                out.extend_from_slice(&t[..len - out.len()]);
                break 'fill;
            }
            out.extend_from_slice(t);
        }
    }
    cut_to_line(out)
}

/// Drops everything after the last `\n` (keeps the input when it has none).
fn cut_to_line(mut v: Vec<u8>) -> Vec<u8> {
    if let Some(i) = v.iter().rposition(|b| *b == b'\n') {
        v.truncate(i + 1);
    }
    v
}

fn capture(name: &str) -> &'static [u8] {
    FILES
        .iter()
        .find(|f| f.file == name)
        .map(|f| f.bytes)
        .unwrap_or_else(|| panic!("capture {name} is embedded"))
}

/// The first whole lines of `bytes`, at most `len` bytes.
fn head(bytes: &[u8], len: usize) -> Vec<u8> {
    cut_to_line(bytes[..len.min(bytes.len())].to_vec())
}

/// The last whole lines of `bytes`, at most `len` bytes.
fn tail(bytes: &[u8], len: usize) -> Vec<u8> {
    let from = bytes.len().saturating_sub(len);
    let start = bytes[from..]
        .iter()
        .position(|b| *b == b'\n')
        .map_or(from, |i| from + i + 1);
    bytes[start..].to_vec()
}

/// One input of about `len` bytes per kind of tool output, each named after the rule
/// that should do the work on it (`rule id`, input). The traceback keeps its end; the
/// JSON is a valid array of objects.
pub fn rule_inputs(len: usize) -> Vec<(RuleId, Vec<u8>)> {
    let mut traceback = b"Traceback (most recent call last):\n".to_vec();
    traceback.extend(tail(
        capture("python-traceback-deep-recursion-notty.txt"),
        len,
    ));
    let mut json = String::from("[");
    let mut i = 0u32;
    while json.len() + 64 < len {
        if i > 0 {
            json.push(',');
        }
        json.push_str(&format!(
            "{{\"id\":{i},\"name\":\"item-{i:05}\",\"tags\":[\"a\",\"b\"],\"ok\":{}}}",
            !i.is_multiple_of(7)
        ));
        i += 1;
    }
    json.push_str("]\n");
    vec![
        (
            RuleId::DiffProtect,
            head(capture("git-diff-requests-notty.txt"), len),
        ),
        (RuleId::JsonFields, json.into_bytes()),
        (
            RuleId::TerminalRender,
            head(capture("rsync-progress-tty.txt"), len),
        ),
        (
            RuleId::AnsiStrip,
            head(capture("rustc-error-flood-tty.txt"), len),
        ),
        (
            RuleId::RepeatCollapse,
            head(capture("http-server-access-log-notty.txt"), len),
        ),
        (RuleId::TracebackKeep, traceback),
        (
            RuleId::ShapeFold,
            head(capture("cargo-test-fail-notty.txt"), len),
        ),
        (
            RuleId::HeadTailElide,
            head(capture("ls-laR-site-packages-notty.txt"), len),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixed_log_is_sized_and_line_cut() {
        let log = mixed_log(3_000_000);
        assert!(log.len() <= 3_000_000 && log.len() > 2_900_000);
        assert_eq!(log.last(), Some(&b'\n'));
        assert_eq!(log, mixed_log(3_000_000));
    }

    #[test]
    fn rule_inputs_are_about_the_size_asked() {
        for (rule, input) in rule_inputs(50 * 1024) {
            assert!(
                input.len() <= 51 * 1024 && input.len() > 40 * 1024,
                "{rule}: {}",
                input.len()
            );
            assert!(snip_core::rules::REGISTRY.iter().any(|r| r.id == rule));
        }
    }
}
