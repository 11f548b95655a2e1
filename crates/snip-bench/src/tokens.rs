//! o200k_base token counts, offline.
//!
//! The vocabulary is the one embedded in the `tiktoken-rs` crate (`o200k_base`, the
//! encoding of GPT-4o-class models). Text is encoded as ordinary text: special-token
//! spellings such as `<|endoftext|>` count as the plain characters they are. Bytes that
//! are not valid UTF-8 are counted as U+FFFD (the way a host decodes tool output
//! before sending it). Counting happens only in benchmark code, never on the hot path.
//!
//! A test cross-checks these counts against a second implementation (`bpe-openai`).

/// The number of o200k_base tokens of `bytes` (invalid UTF-8 decoded lossily).
pub fn count(bytes: &[u8]) -> u64 {
    let text = String::from_utf8_lossy(bytes);
    tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(&text)
        .len() as u64
}

/// The share of tokens saved, in percent (0–100; negative if the output grew).
/// Zero when there was nothing to save.
pub fn saved_pct(before: u64, after: u64) -> f64 {
    if before == 0 {
        return 0.0;
    }
    (before as f64 - after as f64) * 100.0 / before as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_known_text() {
        // "hello world" is two tokens in every GPT-era encoding.
        assert_eq!(count(b"hello world"), 2);
        assert_eq!(count(b""), 0);
        assert!(count(&[0xff, 0xfe, b'a']) >= 1);
    }

    #[test]
    fn percent_saved() {
        assert_eq!(saved_pct(200, 50), 75.0);
        assert_eq!(saved_pct(0, 0), 0.0);
        assert!(saved_pct(10, 20) < 0.0);
    }
}
