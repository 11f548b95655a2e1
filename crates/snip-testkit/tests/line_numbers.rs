//! A marker's line range is the original's, whatever controls came before it: every
//! line feed of the original counts as one line, in memory and on the stream. An
//! escape once swallowed the line feed after it (`ESC \n`, `ESC ( \n`), and every
//! later marker cited lines one too early, so a restore by lines returned the wrong
//! ones (the accounting checker cannot see that on rendered text: which row a marker
//! stands for is the renderer's).

use snip_core::stream::StreamCompressor;
use snip_core::Config;
use snip_testkit::{compress_and_check, TempStore};
use std::collections::BTreeSet;

/// Controls that once shifted the line numbers, or could: each is put on a line of
/// its own between numbered items.
const CONTROLS: &[&[u8]] = &[
    b"\x1b\n",
    b"\x1b(\n",
    b"\x1b#\n",
    b"\x1b\r\n",
    b"\x1b]0;title\n",
    b"\x1b[31\n",
    b"\x1bP data\n",
    b"\x1b\x1b\n",
    b"\x1b[1;31mred\x1b[0m\n",
    b"get 10%\rget 100%\n",
    b"\x1b[2K\rdone\n",
];

/// A log of `n` numbered items (long runs of one shape, so that they are folded and
/// elided), with controls on their own lines at pseudo-random places.
fn log(seed: u64, n: u64) -> Vec<u8> {
    let mut next = {
        let mut s = seed;
        move || {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            s >> 33
        }
    };
    let mut v = Vec::new();
    for i in 0..n {
        if next() % 97 == 0 {
            let c = CONTROLS[(next() % CONTROLS.len() as u64) as usize];
            v.extend_from_slice(c);
        }
        v.extend_from_slice(
            format!("item {i:06} worker processed the request in time\n").as_bytes(),
        );
    }
    v
}

/// The item number a line shows, if it is an item.
fn item(line: &[u8]) -> Option<u64> {
    let rest = line.strip_prefix(b"item ")?;
    std::str::from_utf8(rest.get(..6)?).ok()?.parse().ok()
}

/// Checks that the items `out` shows and the items the original's lines in its
/// markers' ranges hold are every item of `original`, each exactly once.
fn ranges_hold_the_hidden_items(original: &[u8], out: &[u8]) -> Result<usize, String> {
    let lines: Vec<&[u8]> = original.split(|&b| b == b'\n').collect();
    let all: BTreeSet<u64> = lines.iter().filter_map(|l| item(l)).collect();
    let mut seen = BTreeSet::new();
    let mut markers = 0;
    for l in out.split(|&b| b == b'\n') {
        if let Some(k) = item(l) {
            if !seen.insert(k) {
                return Err(format!("item {k} shown twice"));
            }
            continue;
        }
        let text = String::from_utf8_lossy(l);
        let Some(at) = text.find(" · lines ") else {
            continue;
        };
        let range = &text[at + " · lines ".len()..];
        let range = &range[..range.find(' ').unwrap_or(range.len())];
        let (a, b) = range.split_once('-').ok_or(format!("range in {text}"))?;
        let (a, b): (usize, usize) = (
            a.parse().map_err(|_| text.to_string())?,
            b.parse().map_err(|_| text.to_string())?,
        );
        markers += 1;
        for (k, l) in lines.iter().enumerate().take(b).skip(a - 1) {
            if let Some(i) = item(l) {
                if !seen.insert(i) {
                    return Err(format!(
                        "item {i} (line {}) is shown or in another marker, and in {text}",
                        k + 1
                    ));
                }
            }
        }
    }
    if seen != all {
        let missing: Vec<_> = all.difference(&seen).take(5).collect();
        return Err(format!("items neither shown nor in a marker: {missing:?}…"));
    }
    Ok(markers)
}

#[test]
fn in_memory_markers_cite_the_original_lines() {
    let store = TempStore::new();
    for seed in 0..6 {
        let input = log(seed, 4_000);
        for budget in [2_048, 8_192, 24_576] {
            let (out, _) = compress_and_check(&input, &Config::with_budget(budget), &store.handle)
                .unwrap_or_else(|e| panic!("seed {seed}, budget {budget}: {e}"));
            let markers = ranges_hold_the_hidden_items(&input, &out)
                .unwrap_or_else(|e| panic!("seed {seed}, budget {budget}: {e}"));
            assert!(markers > 0, "seed {seed}, budget {budget}: nothing elided");
        }
    }
}

#[test]
fn stream_markers_cite_the_original_lines() {
    for seed in 0..4 {
        let input = log(seed, 60_000);
        for window in [4_096, 65_536] {
            let cfg = Config::with_budget(8_192);
            let mut s = StreamCompressor::with_window(&cfg, window, window * 2);
            let mut out = Vec::new();
            for c in input.chunks(10_007) {
                s.push(c, &mut out).unwrap();
            }
            s.finish(&mut out).unwrap();
            let markers = ranges_hold_the_hidden_items(&input, &out)
                .unwrap_or_else(|e| panic!("seed {seed}, window {window}: {e}"));
            assert!(markers > 0, "seed {seed}, window {window}: nothing elided");
        }
    }
}
