//! Whether a diff that snip shortened was shortened as the contract allows: by whole
//! hunks, every kept line byte-identical. The bench's own check, independent of
//! `diff-protect`'s code.

/// Whether `output` is `input` (a diff) shortened by whole hunks: every line of
/// `output` that is not a marker line (one that `snip_core::marker::parse` reads) is a
/// line of `input`, byte for byte and in the input's order, and every hunk header
/// kept (`@@ -a,b +c,d @@`) is followed by exactly `b` old and `d` new lines (context
/// lines count as both, `\ No newline at end of file` as neither) before the next
/// marker, header or the end. Line endings are part of neither comparison's lines
/// (`\n`, and a `\r` before it, are split off).
pub fn shortened_by_hunks(input: &[u8], output: &[u8]) -> bool {
    let lines = |b: &[u8]| -> Vec<Vec<u8>> {
        let b = b.strip_suffix(b"\n").unwrap_or(b);
        b.split(|&c| c == b'\n')
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l).to_vec())
            .collect()
    };
    let src = lines(input);
    let out = lines(output);
    let is_marker = |l: &[u8]| {
        std::str::from_utf8(l)
            .ok()
            .and_then(snip_core::marker::parse)
            .is_some()
    };
    // Kept lines: a subsequence of the input's lines.
    let mut at = 0;
    let mut kept: Vec<Option<&[u8]>> = Vec::with_capacity(out.len());
    for l in &out {
        if is_marker(l) {
            kept.push(None);
            continue;
        }
        match src[at..].iter().position(|s| s == l) {
            Some(k) => at += k + 1,
            None => return false,
        }
        kept.push(Some(l));
    }
    // Kept hunks: complete.
    let mut k = 0;
    while k < kept.len() {
        let Some((old, new)) = kept[k].and_then(hunk_counts) else {
            k += 1;
            continue;
        };
        let (mut o, mut n) = (0u64, 0u64);
        k += 1;
        while o < old || n < new {
            let Some(Some(l)) = kept.get(k) else {
                return false;
            };
            match l.first() {
                Some(b' ') | None => {
                    o += 1;
                    n += 1;
                }
                Some(b'-') => o += 1,
                Some(b'+') => n += 1,
                Some(b'\\') => {}
                _ => return false,
            }
            k += 1;
        }
        if o != old || n != new {
            return false;
        }
        // A `\ No newline at end of file` after the last line belongs to the hunk.
        while kept
            .get(k)
            .is_some_and(|l| l.is_some_and(|l| l.starts_with(b"\\")))
        {
            k += 1;
        }
    }
    true
}

/// The old and new line counts of a unified diff hunk header `@@ -a[,b] +c[,d] @@…`
/// (a count left out is 1).
fn hunk_counts(line: &[u8]) -> Option<(u64, u64)> {
    let rest = line.strip_prefix(b"@@ -")?;
    let end = rest.windows(3).position(|w| w == b" @@")?;
    let s = std::str::from_utf8(&rest[..end]).ok()?;
    let (old, new) = s.split_once(" +")?;
    let count = |r: &str| -> Option<u64> {
        match r.split_once(',') {
            Some((a, b)) => {
                a.parse::<u64>().ok()?;
                b.parse().ok()
            }
            None => r.parse::<u64>().ok().map(|_| 1),
        }
    };
    Some((count(old)?, count(new)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -10,2 +10,3 @@\n j\n+k\n l\ndiff --git a/y b/y\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-y\n+Y\n";

    const MARKER: &str = "[snip: 1 hunk (20 bytes) elided · diff-protect · lines 9-12 · bytes 40-60 · restore: snip_restore(id=\"sn_0123456789abcdef01234567\", mode=\"lines\", start=9, end=12)]";

    #[test]
    fn whole_hunks_with_a_marker_pass() {
        let out = DIFF.replace("@@ -10,2 +10,3 @@\n j\n+k\n l\n", &format!("{MARKER}\n"));
        assert!(snip_core::marker::parse(MARKER).is_some());
        assert!(shortened_by_hunks(DIFF.as_bytes(), out.as_bytes()));
        assert!(shortened_by_hunks(DIFF.as_bytes(), DIFF.as_bytes()));
    }

    #[test]
    fn a_cut_hunk_or_an_altered_line_fails() {
        // A hunk cut inside: its header says 3 new lines, 1 is kept.
        let cut = DIFF.replace(" j\n+k\n l\n", &format!("+k\n{MARKER}\n"));
        assert!(!shortened_by_hunks(DIFF.as_bytes(), cut.as_bytes()));
        // A kept line altered.
        let altered = DIFF.replace("+B\n", "+b\n");
        assert!(!shortened_by_hunks(DIFF.as_bytes(), altered.as_bytes()));
        // Lines out of order.
        let swapped = DIFF.replace(" a\n-b\n", "-b\n a\n");
        assert!(!shortened_by_hunks(DIFF.as_bytes(), swapped.as_bytes()));
    }
}
