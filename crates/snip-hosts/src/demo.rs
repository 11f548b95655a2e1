//! The demo of `snip demo`: the main job on real captures bundled into the binary.
//!
//! For each capture: bytes before → after, the rules that fired, and a short excerpt of
//! what the model would read; then the totals and one restore round trip (the lines a
//! marker elided, back from the store, compared with the original). Originals go to a
//! temporary store removed at the end, or to `SNIP_STORE_DIR` when it is set (tagged
//! `demo` in its ledger).

use snip_core::Config;
use std::fmt::Write as _;

macro_rules! capture {
    ($name:literal, $what:literal) => {
        (
            $name,
            $what,
            include_bytes!(concat!("../../../fixtures/corpus/", $name, ".txt")).as_slice(),
        )
    };
}

/// The bundled captures: (name, command, bytes). Real output of real programs.
pub const CAPTURES: &[(&str, &str, &[u8])] = &[
    capture!("tqdm-single-tty", "python tqdm_single.py (80 redraws)"),
    capture!(
        "git-clone-progress-tty",
        "git clone --progress (5,928 objects)"
    ),
    capture!("pip-download-tty", "pip download scipy pyarrow (rich bars)"),
    capture!(
        "rich-progress-tty",
        "rich Live: 4 bars + log lines between redraws"
    ),
    capture!(
        "apt-install-ffmpeg-tty",
        "apt install -y ffmpeg (status line, scroll region)"
    ),
    capture!(
        "pytest-2000-one-fail-tty",
        "pytest: 2,000 tests, one failure"
    ),
    capture!(
        "cargo-test-fail-notty",
        "cargo test: 1,400 ok lines, a panic in the middle"
    ),
    capture!(
        "python-traceback-deep-recursion-notty",
        "Python: 1,000-frame recursion traceback"
    ),
    capture!(
        "http-server-access-log-notty",
        "http.server log: 3,000 health checks"
    ),
    capture!(
        "cargo-metadata-json-notty",
        "cargo metadata: one 500 KB JSON line"
    ),
    capture!("git-diff-requests-notty", "git diff (never touched)"),
];

/// The demo's report: `lines` lines of output excerpt per capture, or with `only`,
/// that one capture (by name) and its whole output. Fails with `InvalidInput` when
/// `only` names no bundled capture (the message lists them), or when the temporary
/// store cannot be made.
pub fn report(config: &Config, lines: usize, only: Option<&str>) -> std::io::Result<String> {
    // A temporary store unless the user named one: the demo leaves nothing behind.
    let tmp = match std::env::var_os("SNIP_STORE_DIR") {
        Some(_) => None,
        None => Some(tempfile::tempdir()?),
    };
    let store = snip_store::StoreHandle::from_lookup(|k| match (k, &tmp) {
        ("SNIP_STORE_DIR", Some(t)) => Some(t.path().display().to_string()),
        _ => std::env::var(k).ok(),
    });
    // The first marker that names original lines, for the closing round trip.
    let mut round_trip: Option<(String, String, &'static [u8])> = None;
    let mut out = String::new();
    let (mut before, mut after) = (0usize, 0usize);
    let mut shown = 0;
    for (name, what, bytes) in CAPTURES {
        if only.is_some_and(|o| o != *name) {
            continue;
        }
        shown += 1;
        let o = snip_store::compress_recorded(bytes, config, &store, "demo");
        if round_trip.is_none() {
            round_trip = String::from_utf8_lossy(&o.output)
                .lines()
                .filter_map(snip_core::marker::parse)
                .find(|m| {
                    m.lines.is_some()
                        && m.call
                            .as_deref()
                            .is_some_and(|c| c.contains("mode=\"lines\""))
                })
                .and_then(|m| Some((name.to_string(), m.call?, *bytes)));
        }
        before += bytes.len();
        after += o.output.len();
        let pct = 100.0 * (1.0 - o.output.len() as f64 / bytes.len() as f64);
        let _ = writeln!(out, "── {name}: {what}");
        let _ = writeln!(
            out,
            "   {} → {} bytes ({pct:.1}% smaller)",
            group(bytes.len()),
            group(o.output.len())
        );
        let rules: Vec<String> = o
            .rules
            .iter()
            .map(|r| {
                let counts: Vec<String> = r
                    .counts
                    .iter()
                    .filter(|(_, v)| *v > 0)
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                format!("{} ({})", r.id, counts.join(", "))
            })
            .collect();
        let _ = writeln!(
            out,
            "   rules: {}",
            if rules.is_empty() {
                "none".into()
            } else {
                rules.join("; ")
            }
        );
        let _ = writeln!(out, "   before: {}", excerpt(bytes, 110));
        let text = String::from_utf8_lossy(&o.output);
        if only.is_some() {
            let _ = writeln!(out, "   after:\n{text}");
        } else {
            let _ = writeln!(out, "   after (last {} lines):", lines);
            let all: Vec<&str> = text.lines().collect();
            for l in &all[all.len().saturating_sub(lines)..] {
                let _ = writeln!(out, "   │ {}", cut(l.trim_end_matches('\r'), 150));
            }
        }
        out.push('\n');
    }
    if shown == 0 {
        let names: Vec<&str> = CAPTURES.iter().map(|c| c.0).collect();
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "no bundled capture named {:?}; try one of: {}",
                only.unwrap_or_default(),
                names.join(", ")
            ),
        ));
    }
    let _ = writeln!(
        out,
        "total: {} → {} bytes ({:.1}% smaller) over {shown} real captures",
        group(before),
        group(after),
        100.0 * (1.0 - after as f64 / before.max(1) as f64)
    );
    if let (Some(s), Some((name, call, original))) = (store.store(), &round_trip) {
        // One restore round trip: the lines a marker elided, back from the store.
        if let Ok(req) = snip_store::RestoreRequest::from_call(call) {
            let resp = s.restore(&req);
            let got = resp.content.as_deref().unwrap_or("");
            let (a, b) = (resp.start.unwrap_or(1), resp.end.unwrap_or(0));
            let want: String = String::from_utf8_lossy(original)
                .split_inclusive('\n')
                .skip(a.saturating_sub(1) as usize)
                .take((b + 1).saturating_sub(a) as usize)
                .collect();
            let _ = writeln!(out, "\nrestore round trip ({name}): {call}");
            let _ = writeln!(
                out,
                "   lines {a}-{b}: {} bytes back, identical to the original's: {}",
                group(got.len()),
                if got == want { "yes" } else { "NO" }
            );
        }
    }
    match (&tmp, store.store()) {
        (Some(_), Some(_)) => {
            let _ = writeln!(out, "(originals were kept in a temporary store, removed now; set SNIP_STORE_DIR to keep them)");
        }
        (None, Some(s)) => {
            let _ = writeln!(out, "originals kept in {}; get any elided part back with the restore call its marker quotes", s.dir().display());
        }
        _ => {}
    }
    Ok(out)
}

/// The first `n` characters of a capture, with control bytes made visible.
fn excerpt(b: &[u8], n: usize) -> String {
    let s = String::from_utf8_lossy(&b[..b.len().min(4 * n)]);
    let mut out = String::new();
    for c in s.chars().take(n) {
        match c {
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            '\x1b' => out.push_str("\\e"),
            c if c.is_control() => out.push('·'),
            c => out.push(c),
        }
    }
    out.push('…');
    out
}

fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut t: String = s.chars().take(n).collect();
    t.push('…');
    t
}

/// `12345` → `12,345`.
fn group(n: usize) -> String {
    snip_core::util::group_digits(n as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Config {
        Config::from_lookup(|_| None).unwrap()
    }

    #[test]
    fn an_unknown_capture_lists_the_bundled_ones() {
        let e = report(&config(), 6, Some("nope")).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
        let msg = e.to_string();
        assert!(
            msg.starts_with("no bundled capture named \"nope\""),
            "{msg}"
        );
        assert!(CAPTURES.iter().all(|c| msg.contains(c.0)), "{msg}");
    }

    #[test]
    fn one_capture_shows_its_whole_output() {
        let out = report(&config(), 6, Some("pytest-2000-one-fail-tty")).unwrap();
        assert!(out.starts_with("── pytest-2000-one-fail-tty: "), "{out}");
        assert!(out.contains("   after:\n"), "{out}");
        assert!(out.contains("over 1 real captures"), "{out}");
    }

    #[test]
    fn all_captures_shrink_and_one_round_trips() {
        let out = report(&config(), 2, None).unwrap();
        assert!(CAPTURES
            .iter()
            .all(|c| out.contains(&format!("── {}: ", c.0))));
        assert!(
            out.contains(&format!("over {} real captures", CAPTURES.len())),
            "{out}"
        );
        assert!(out.contains("identical to the original's: yes"), "{out}");
        assert_eq!(
            out.matches("   after (last 2 lines):").count(),
            CAPTURES.len()
        );
    }

    #[test]
    fn helpers() {
        assert_eq!(excerpt(b"a\r\n\x1b[1mb", 6), "a\\r\\n\\e[1…");
        assert_eq!(cut("abcdef", 3), "abc…");
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(group(12345), "12,345");
    }
}
