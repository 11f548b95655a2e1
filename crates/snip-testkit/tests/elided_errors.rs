//! Every error line of an elided middle is shown or counted, with its line number, in
//! the gap marker that covers it: on the reduced path (inputs of 4 MiB and more) and
//! on the stream, as in memory (contract row 5, issue 17). Both once dropped error
//! lines past the first of each shape (or past a full island budget) without a word.

use snip_core::stream::StreamCompressor;
use snip_core::Config;
use snip_testkit::{compress_and_check, TempStore};
use std::collections::BTreeSet;

/// A small deterministic generator (64-bit LCG, high bits).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// `i` spelled in letters (`305` → `dae`): distinct error lines differ in shape.
fn name(i: u64) -> String {
    i.to_string()
        .bytes()
        .map(|d| (d - b'0' + b'a') as char)
        .collect()
}

/// A log of about `bytes` bytes of filler lines with `k` error lines at random
/// positions (about half sharing one shape with digits changed, half distinct), and
/// the 0-based numbers of the error lines.
fn log(seed: u64, bytes: usize, k: usize) -> (Vec<u8>, BTreeSet<u64>) {
    let filler = "ok ".repeat(20);
    let line_len = format!("line {:07} {filler}\n", 0).len();
    let n = (bytes / line_len) as u64;
    let mut r = Lcg(seed);
    let mut errors = BTreeSet::new();
    while errors.len() < k {
        // Away from the head and tail, which are shown whole anyway.
        errors.insert(2_000 + r.below(n - 4_000));
    }
    let mut v = Vec::with_capacity(bytes + 4096);
    for i in 0..n {
        if errors.contains(&i) {
            let line = if r.below(2) == 0 {
                format!("line {i:07} ERROR boom code {}\n", r.below(100_000))
            } else {
                format!("line {i:07} error: disk {} failed to spin up\n", name(i))
            };
            v.extend_from_slice(line.as_bytes());
        } else {
            v.extend_from_slice(format!("line {i:07} {filler}\n").as_bytes());
        }
    }
    (v, errors)
}

/// Checks that each error line is shown in `out` or counted by the one marker whose
/// line range holds it, and that each marker's count and named line numbers are
/// exactly those of the error lines it holds that are not shown.
fn every_error_shown_or_counted(out: &[u8], errors: &BTreeSet<u64>) -> Result<(), String> {
    let text = String::from_utf8_lossy(out);
    let mut shown = BTreeSet::new();
    let mut markers: Vec<(u64, u64, u64, Vec<u64>)> = Vec::new();
    for l in text.lines() {
        if let Some(m) = l.strip_prefix("[snip: ") {
            let Some(at) = m.find(" · lines ") else {
                continue;
            };
            let range = &m[at + " · lines ".len()..];
            let range = &range[..range.find(' ').unwrap_or(range.len())];
            let (a, b) = range.split_once('-').ok_or(format!("range in {l}"))?;
            let (a, b): (u64, u64) = (a.parse().map_err(|_| l)?, b.parse().map_err(|_| l)?);
            let (n, named) = match m.find(" salient line") {
                None => (0, Vec::new()),
                Some(p) => {
                    let head = &m[..p];
                    let n: u64 = head[head.rfind(' ').ok_or(l)? + 1..]
                        .parse()
                        .map_err(|_| l)?;
                    let rest = &m[p..];
                    let list = &rest[rest.find(" at ").ok_or(l)? + 4..rest.find(" · ").ok_or(l)?];
                    let named = list
                        .split(", ")
                        .filter(|s| *s != "…")
                        .map(|s| s.parse::<u64>().map_err(|_| l.to_string()))
                        .collect::<Result<Vec<_>, _>>()?;
                    (n, named)
                }
            };
            markers.push((a, b, n, named));
        } else if l.contains("ERROR boom") || l.contains("error: disk") {
            let num = l.get(5..12).and_then(|s| s.parse::<u64>().ok());
            shown.insert(num.ok_or(format!("line number in {l}"))?);
        }
    }
    for e in errors {
        if shown.contains(e) {
            continue;
        }
        let line = e + 1;
        if !markers.iter().any(|m| m.0 <= line && line <= m.1) {
            return Err(format!("error line {line} neither shown nor in a marker"));
        }
    }
    for (a, b, n, named) in &markers {
        let hidden: Vec<u64> = errors
            .iter()
            .map(|e| e + 1)
            .filter(|l| (a..=b).contains(&l) && !shown.contains(&(l - 1)))
            .collect();
        if *n != hidden.len() as u64 {
            return Err(format!(
                "marker of lines {a}-{b} counts {n} salient lines, holds {} unshown error lines {hidden:?}",
                hidden.len()
            ));
        }
        let want: Vec<u64> = hidden.iter().take(4).copied().collect();
        if *named != want {
            return Err(format!(
                "marker of lines {a}-{b} names {named:?}, its first error lines are {want:?}"
            ));
        }
    }
    Ok(())
}

/// The reduced path (inputs of at least 4 MiB): K error lines from 1 to 40, logs of
/// 4.2 to 6 MB, through the real store with the accounting checked.
#[test]
fn reduced_path_shows_or_counts_every_error_line() {
    let store = TempStore::new();
    let cfg = Config::default();
    for (seed, mb10, k) in [
        (1, 42, 1),
        (2, 45, 6),
        (3, 50, 13),
        (4, 55, 27),
        (5, 60, 40),
    ] {
        let (input, errors) = log(seed, mb10 * 100_000, k);
        assert!(input.len() >= 4 << 20, "{}", input.len());
        let (out, _) = compress_and_check(&input, &cfg, &store.handle)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert!(out.len() <= cfg.max_bytes, "seed {seed}: {}", out.len());
        every_error_shown_or_counted(&out, &errors)
            .unwrap_or_else(|e| panic!("seed {seed}, {k} errors: {e}"));
    }
}

/// The case of the report: six error lines of one shape in 4.2 MB, all shown (as the
/// in-memory pipeline shows them just under the threshold), not one of six.
#[test]
fn reduced_path_shows_copies_of_one_shape_within_the_island_budget() {
    let mut input = Vec::new();
    for i in 0..58_000 {
        let rest = if i % 10_000 == 5_000 {
            "ERROR boom".to_string()
        } else {
            "ok ".repeat(20)
        };
        input.extend_from_slice(format!("line {i:06} {rest}\n").as_bytes());
    }
    assert!(input.len() >= 4 << 20);
    let store = TempStore::new();
    let (out, _) = compress_and_check(&input, &Config::default(), &store.handle).expect("checked");
    let text = String::from_utf8_lossy(&out);
    assert_eq!(text.matches("ERROR boom").count(), 6, "{text}");
}

/// Runs the stream over `input` in 64 KiB chunks.
fn stream(input: &[u8], cfg: &Config, window: Option<usize>) -> Vec<u8> {
    let mut s = match window {
        Some(w) => StreamCompressor::with_window(cfg, w, w),
        None => StreamCompressor::new(cfg),
    };
    let mut out = Vec::new();
    for c in input.chunks(64 << 10) {
        s.push(c, &mut out).expect("write to a Vec");
    }
    s.finish(&mut out).expect("write to a Vec");
    out
}

/// The stream: the same logs through small windows, and one through the real window.
#[test]
fn stream_shows_or_counts_every_error_line() {
    let cfg = Config::default();
    for (seed, kb, k) in [
        (11, 900, 1),
        (12, 1_200, 5),
        (13, 1_500, 17),
        (14, 2_000, 40),
    ] {
        let (input, errors) = log(seed, kb * 1_000, k);
        let out = stream(&input, &cfg, Some(16 << 10));
        assert!(
            out.len() <= cfg.max_bytes + 4096,
            "seed {seed}: {}",
            out.len()
        );
        every_error_shown_or_counted(&out, &errors)
            .unwrap_or_else(|e| panic!("seed {seed}, {k} errors: {e}"));
    }
    let (input, errors) = log(15, 4_500_000, 33);
    let out = stream(&input, &cfg, None);
    every_error_shown_or_counted(&out, &errors).unwrap_or_else(|e| panic!("{e}"));
}

/// Five error lines of one shape in a long stream: copies of a shown shape take
/// islands while half the island budget lasts (four of them at the default budget),
/// and the rest are counted.
#[test]
fn stream_shows_a_few_copies_of_one_shape() {
    let cfg = Config::default();
    let mut input = Vec::new();
    let mut errors = BTreeSet::new();
    for i in 0..40_000u64 {
        let rest = if i % 8_000 == 4_000 {
            errors.insert(i);
            format!("ERROR boom code {i}")
        } else {
            "ok ".repeat(20)
        };
        input.extend_from_slice(format!("line {i:07} {rest}\n").as_bytes());
    }
    let out = stream(&input, &cfg, Some(64 << 10));
    let text = String::from_utf8_lossy(&out);
    assert_eq!(text.matches("ERROR boom").count(), 4, "{text}");
    every_error_shown_or_counted(&out, &errors).unwrap_or_else(|e| panic!("{e}"));
}
