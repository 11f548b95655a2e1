//! Rendered text elided against a terminal emulator (the `vt100` crate): every token a
//! terminal shows at the end of an output is shown by snip or inside the original
//! lines of an elision marker (whose restore [`compress_and_check`] checks). The
//! inputs are seeded terminal outputs that redraw rows: progress frames, rows
//! rewritten from far below by a cursor move (some by a line that is itself an error,
//! so an island shows it while the row it wrote is in a gap), saves and restores of
//! the cursor, runs of one shape, errors and plain lines of varied shape.
//!
//! `terminal-render`'s own marker restores the whole original and is not counted: it
//! stands for the frames and escapes rendering removed, not for rows elided.

use snip_core::marker;
use snip_core::Config;
use snip_testkit::{compress_and_check, Rng, TempStore};

const WORDS: [&str; 12] = [
    "alpha",
    "compiling",
    "fetch",
    "resolve",
    "linking",
    "gamma",
    "build",
    "delta",
    "index",
    "crate",
    "module",
    "sigma",
];

/// One seeded output of about `size` bytes; every token `id=NNNNNN` in it is unique.
fn output(seed: u64, size: usize) -> Vec<u8> {
    let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut n = 0u32;
    let mut tok = || {
        n += 1;
        format!("id={n:06}")
    };
    let mut s = String::new();
    let mut rows = 0usize;
    while s.len() < size {
        let k = r.below(100);
        let mut line = String::new();
        if k < 40 {
            for _ in 0..1 + r.below(9) {
                line.push_str(WORDS[r.below(WORDS.len())]);
                line.push(' ');
            }
            line.push_str(&tok());
            line.push('\n');
        } else if k < 50 {
            for f in 0..2 + r.below(5) {
                if f > 0 {
                    line.push('\r');
                }
                line.push_str(&format!("[{:<6}] {:>3}% {}", "#".repeat(f), f * 10, tok()));
            }
            line.push('\n');
        } else if k < 60 && rows > 3 {
            // A row far above rewritten, then back to the row this one starts.
            let up = 1 + r.below(rows.min(80));
            let word = WORDS[r.below(WORDS.len())];
            line.push_str(&format!("\r\x1b[{up}A{word} {}\x1b[K\r\x1b[{up}B", tok()));
            if r.below(2) == 0 {
                line.push_str(&format!("error: build failed {}\n", tok()));
            }
        } else if k < 65 && rows > 3 {
            let up = 1 + r.below(rows.min(40));
            let word = WORDS[r.below(WORDS.len())];
            line.push_str(&format!("\x1b7\x1b[{up}A\r{word} {}\x1b[K\x1b8", tok()));
        } else if k < 69 {
            line.push_str(&format!("error: failed to build {}\n", tok()));
        } else if k < 71 {
            line.push_str(&format!("warning: unused {}\n", tok()));
        } else if k < 85 {
            let word = WORDS[r.below(WORDS.len())];
            for i in 0..3 + r.below(40) {
                line.push_str(&format!("{word} item {i} {}\n", tok()));
            }
        } else {
            let word = WORDS[r.below(WORDS.len())];
            line.push_str(&format!("\x1b[32m{word}\x1b[0m ok {}\n", tok()));
        }
        rows += line.bytes().filter(|&b| b == b'\n').count();
        s.push_str(&line);
    }
    s.into_bytes()
}

/// The tokens on the screen a terminal shows after `input` (line feeds as a
/// terminal in cooked mode writes them: carriage return, line feed).
fn shown(input: &[u8]) -> Vec<String> {
    let feeds = input.iter().filter(|&&b| b == b'\n').count();
    let mut tty = Vec::with_capacity(input.len() + feeds);
    for &b in input {
        if b == b'\n' {
            tty.push(b'\r');
        }
        tty.push(b);
    }
    let rows = u16::try_from(feeds + 2).expect("fewer rows than a screen holds");
    let mut p = vt100::Parser::new(rows, 400, 0);
    p.process(&tty);
    p.screen()
        .rows(0, 400)
        .flat_map(|row| tokens(&row))
        .collect()
}

fn tokens(text: &str) -> Vec<String> {
    text.match_indices("id=")
        .filter_map(|(i, _)| text.get(i..i + 9))
        .filter(|t| t[3..].bytes().all(|b| b.is_ascii_digit()))
        .map(str::to_string)
        .collect()
}

/// The original's bytes each elision marker of `out` stands for (by its lines, else
/// its bytes), joined.
fn elided(original: &[u8], out: &str) -> String {
    let starts: Vec<usize> = std::iter::once(0)
        .chain(
            original
                .iter()
                .enumerate()
                .filter(|&(_, &b)| b == b'\n')
                .map(|(i, _)| i + 1),
        )
        .collect();
    let mut text = String::new();
    for m in out.lines().filter_map(marker::parse) {
        if m.rule == "terminal-render" {
            continue;
        }
        let range = match (m.lines, m.bytes) {
            (Some((a, b)), _) => {
                let s = starts[a as usize - 1];
                let e = starts.get(b as usize).copied().unwrap_or(original.len());
                (s, e)
            }
            (None, Some((a, b))) => (a as usize, b as usize),
            (None, None) => continue,
        };
        text.push_str(&String::from_utf8_lossy(&original[range.0..range.1]));
        text.push('\n');
    }
    text
}

#[test]
fn every_token_a_terminal_shows_is_shown_or_elided_in_a_marker() {
    let store = TempStore::new();
    let mut failures = Vec::new();
    for seed in 0..60u64 {
        let input = output(seed, 6_000 + (seed as usize * 977) % 40_000);
        let want = shown(&input);
        for budget in [2_048, 4_096, 8_192] {
            let (out, _) = compress_and_check(&input, &Config::with_budget(budget), &store.handle)
                .unwrap_or_else(|e| panic!("seed {seed} at {budget}: accounting: {e}"));
            let out = String::from_utf8(out).expect("UTF-8 in, UTF-8 out");
            let plain: String = out
                .lines()
                .filter(|l| marker::parse(l).is_none())
                .collect::<Vec<_>>()
                .join("\n");
            let elided = elided(&input, &out);
            let lost: Vec<&String> = want
                .iter()
                .filter(|t| !plain.contains(t.as_str()) && !elided.contains(t.as_str()))
                .collect();
            if !lost.is_empty() {
                failures.push(format!("seed {seed} at {budget}: {lost:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The case the generator found first, by hand: a line that is an error rewrites a
/// row 200 rows above it, with an island between them; the row is shown after the
/// first gap's marker (before, the gaps named lines up to the island's and from it
/// on, and the rewrite was in neither).
#[test]
fn a_row_written_by_an_island_from_far_below_is_shown() {
    let mut s = String::new();
    for i in 0..600 {
        match i {
            300 => s.push_str("error: other failure id=900003\n"),
            400 => s.push_str(
                "\r\x1b[200Arewritten id=900001\x1b[K\r\x1b[200Berror: build failed id=900002\n",
            ),
            _ => {
                let words = 1 + (i * 7) % 9;
                for w in 0..words {
                    s.push_str(WORDS[(i + w * 5) % WORDS.len()]);
                    s.push(' ');
                }
                s.push_str(&format!("id={i:06}\n"));
            }
        }
    }
    let store = TempStore::new();
    for budget in [6_000, 8_192] {
        let (out, _) =
            compress_and_check(s.as_bytes(), &Config::with_budget(budget), &store.handle)
                .unwrap_or_else(|e| panic!("accounting: {e}"));
        let out = String::from_utf8(out).unwrap();
        assert!(out.contains("id=900002"), "the island at {budget}:\n{out}");
        let plain = out
            .lines()
            .filter(|l| marker::parse(l).is_none())
            .any(|l| l.contains("id=900001"));
        assert!(
            plain || elided(s.as_bytes(), &out).contains("id=900001"),
            "at {budget}:\n{out}"
        );
    }
}
