//! `compress_parts`: several outputs a reader sees together share one budget.

mod common;

use common::temp_store;
use snip_core::Config;
use snip_store::{compress_parts, StoreHandle};

/// A log of `lines` distinct lines: each names a crate spelled from its number in
/// letters, so no two lines share a shape and `shape-fold` has nothing to fold (the
/// budget split is what these tests are about).
fn log(lines: usize, tag: &str) -> Vec<u8> {
    let name = |mut i: usize| {
        let mut s = String::new();
        loop {
            s.push((b'a' + (i % 26) as u8) as char);
            i /= 26;
            if i == 0 {
                break s;
            }
        }
    };
    (0..lines)
        .map(|i| {
            format!(
                "{tag} {i} of the build: compiling crate {} in release mode\n",
                name(i)
            )
        })
        .collect::<String>()
        .into_bytes()
}

fn config(max_bytes: usize) -> Config {
    Config::from_lookup(|k| (k == "SNIP_MAX_BYTES").then(|| max_bytes.to_string())).unwrap()
}

#[test]
fn a_short_part_takes_what_it_needs_and_the_long_one_the_rest() {
    let (_d, store) = temp_store(|_| {});
    let handle = StoreHandle::Open(store);
    let long = log(5000, "out");
    let short = log(40, "err");
    let c = config(24_576);
    let got = compress_parts(&[&long, &short], &c, &handle, "test");
    // The short part fits half the budget: left as it is.
    assert!(!got[1].changed);
    assert_eq!(got[1].output, short);
    // The long part has the rest, and the two together fit the budget.
    assert!(got[0].changed && got[0].lossy);
    assert!(got[0].output.len() + short.len() <= c.max_bytes);
    assert!(
        got[0].output.len() > c.max_bytes / 2,
        "the long part used only half"
    );
}

#[test]
fn two_long_parts_split_the_budget_and_none_gets_less_than_the_core_minimum() {
    let (_d, store) = temp_store(|_| {});
    let handle = StoreHandle::Open(store);
    let a = log(3000, "out");
    let b = log(2000, "err");
    let c = config(24_576);
    let got = compress_parts(&[&a, &b], &c, &handle, "test");
    let total: usize = got.iter().map(|o| o.output.len()).sum();
    assert!(total <= c.max_bytes, "{total} over {}", c.max_bytes);
    assert!(got.iter().all(|o| o.changed));
    // At the smallest budget the core accepts, halves would be 512 bytes, which a
    // budget may not be: each part gets the minimum, 1024.
    let c = config(1024);
    let got = compress_parts(&[&a, &b], &c, &handle, "test");
    for o in &got {
        assert!(o.changed && o.output.len() <= 1024, "{}", o.output.len());
        assert!(
            o.output.len() > 600,
            "a part was cut to half the minimum: {}",
            o.output.len()
        );
    }
    // Three parts: the outcomes come back in the order given.
    let small = b"small\n".to_vec();
    let got = compress_parts(&[&a, &small, &b], &config(24_576), &handle, "test");
    assert_eq!(got[1].output, small);
    assert!(got[0].output.starts_with(b"out 0 ") && got[2].output.starts_with(b"err 0 "));
}
