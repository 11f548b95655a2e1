//! Small pure helpers every crate shares: a panic payload's message, digit grouping,
//! and a deterministic pseudo-random generator for generated inputs.

use std::any::Any;

/// The message of a panic payload (what `panic!` was given, `&str` or `String`), or
/// `fallback` when the payload is something else.
///
/// ```
/// let p = std::panic::catch_unwind(|| panic!("boom {}", 1)).unwrap_err();
/// assert_eq!(snip_core::util::panic_message(p.as_ref(), "?"), "boom 1");
/// ```
pub fn panic_message(payload: &(dyn Any + Send), fallback: &str) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| fallback.to_string())
}

/// `n` in decimal with a comma between groups of three digits: `1234567` →
/// `1,234,567`, `999` → `999`.
pub fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    // Digits before the first comma: 1 to 3.
    let lead = (digits.len() + 2) % 3 + 1;
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    out.push_str(&digits[..lead]);
    for group in digits.as_bytes()[lead..].chunks(3) {
        out.push(',');
        out.extend(group.iter().map(|b| *b as char));
    }
    out
}

/// SplitMix64: a 64-bit state, one multiply-xorshift step per output; the same
/// numbers on every machine, for generated inputs (benchmarks, tests).
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 pseudo-random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_digits_at_every_length() {
        let cases = [
            (0, "0"),
            (7, "7"),
            (999, "999"),
            (1000, "1,000"),
            (12_345, "12,345"),
            (123_456, "123,456"),
            (1_234_567, "1,234,567"),
            (u64::MAX, "18,446,744,073,709,551,615"),
        ];
        for (n, want) in cases {
            assert_eq!(group_digits(n), want);
        }
    }

    /// The published SplitMix64 reference outputs for seed 0.
    #[test]
    fn splitmix_matches_the_reference_sequence() {
        let mut r = SplitMix64(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(r.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn panic_message_reads_both_payload_kinds() {
        let s = std::panic::catch_unwind(|| panic!("static")).unwrap_err();
        assert_eq!(panic_message(s.as_ref(), "x"), "static");
        let f = std::panic::catch_unwind(|| panic!("n={}", 2)).unwrap_err();
        assert_eq!(panic_message(f.as_ref(), "x"), "n=2");
        let o = std::panic::catch_unwind(|| std::panic::panic_any(5u8)).unwrap_err();
        assert_eq!(panic_message(o.as_ref(), "fallback"), "fallback");
    }
}
