//! Properties over random inputs: no panic, never larger, code points never split,
//! deterministic, idempotent.

use proptest::prelude::*;
use snip_core::{compress, Config, NoStore};

fn bytes_with_controls() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        4 => "[a-z0-9 %|#=>:\\[\\]]{0,12}".prop_map(|s| s.into_bytes()),
        2 => Just(b"\n".to_vec()),
        2 => Just(b"\r".to_vec()),
        1 => Just(b"\r\n".to_vec()),
        1 => Just(b"\x1b[2K".to_vec()),
        1 => Just(b"\x1b[1A".to_vec()),
        1 => Just(b"\x1b[31m".to_vec()),
        1 => Just(b"\x1b7\x1b[40;1f".to_vec()),
        1 => Just(b"\x1b8".to_vec()),
        1 => Just(b"\x08".to_vec()),
        1 => Just("日本\u{2588}é".as_bytes().to_vec()),
        1 => Just(b"error: boom".to_vec()),
        1 => Just(b"  File \"x.py\", line 1, in f\n    f()".to_vec()),
        1 => any::<Vec<u8>>(),
    ];
    prop::collection::vec(piece, 0..400).prop_map(|v| v.concat())
}

fn small_budget() -> Config {
    Config::with_budget(512)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, .. ProptestConfig::default() })]

    #[test]
    fn never_panics_never_grows(input in bytes_with_controls()) {
        for cfg in [Config::default(), small_budget()] {
            let o = compress(&input, &cfg, &mut NoStore);
            prop_assert!(o.failed_open.is_none(), "{:?}", o.failed_open);
            prop_assert!(o.output.len() <= input.len());
            if !o.changed { prop_assert_eq!(&o.output, &input); }
        }
    }

    /// Valid UTF-8 stays valid, on text the rules change: multibyte characters mixed
    /// with carriage returns, backspaces, escapes and newlines (so `terminal-render`
    /// and `ansi-strip` run at the default budget too), in inputs up to ~100 KB (over
    /// the default budget, so the lossy rules cut between characters as well).
    #[test]
    fn valid_utf8_stays_valid(pieces in prop::collection::vec(prop::sample::select(vec![
        "日本語", "é", "🎉", "abc ", "error: x", "\r", "\u{8}", "\x1b[31m", "\x1b[0m",
        "\x1b[2K", "\n", "\n", "═══",
    ]), 0..3000), repeat in 1usize..12) {
        let input = pieces.concat().repeat(repeat);
        for cfg in [Config::default(), small_budget()] {
            let o = compress(input.as_bytes(), &cfg, &mut NoStore);
            prop_assert!(std::str::from_utf8(&o.output).is_ok(), "{:?}", o.output);
            if !o.changed { prop_assert_eq!(&o.output, input.as_bytes()); }
        }
    }

    #[test]
    fn deterministic_and_idempotent(input in bytes_with_controls()) {
        let cfg = small_budget();
        let a = compress(&input, &cfg, &mut NoStore);
        let b = compress(&input, &cfg, &mut NoStore);
        prop_assert_eq!(&a.output, &b.output);
        let again = compress(&a.output, &cfg, &mut NoStore);
        prop_assert_eq!(&again.output, &a.output);
    }
}
