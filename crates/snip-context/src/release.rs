//! The release rule: how many of the oldest tool results a request sends as summaries.
//!
//! Replacing an older result changes the request from that result on, so the provider
//! re-writes everything after it into its prompt cache at the write price instead of
//! reading it at the read price. A release pays when the tokens it saves on the calls
//! that follow outweigh that re-write:
//!
//! ```text
//! expected_calls × read × saved  >  write × suffix_after − read × suffix_before
//! ```
//!
//! where `saved` is what the newly released results shrink by, `suffix_before` the
//! request from the first of them to the end as it was (what the cache would have
//! read), and `suffix_after` the same span after the release (what the cache now
//! writes). Prices are the settings' percentages of an uncached input token; sizes are
//! bytes of the serialized messages (the same unit on both sides, so the ratio of bytes
//! to tokens cancels out).
//!
//! The decision is replayed from the start of the conversation at every message that
//! carries tool results, seeing only the messages up to it. So the released count is a
//! function of the conversation's prefix: it never decreases as the conversation
//! grows, it is the same on every call and in every process, and between two releases
//! each request is the previous one with messages appended.

use crate::ContextSettings;

/// The sizes the rule reads, all indexed as in the request.
pub(crate) struct Shape<'a> {
    /// Serialized size of each message, in bytes.
    pub msg_bytes: &'a [usize],
    /// For each tool result (oldest first), the index of its message (non-decreasing).
    pub result_msg: &'a [usize],
    /// For each tool result, the bytes its summary would save (0: it would stay whole).
    /// Read only for results that may leave the protected window.
    pub saving: &'a [usize],
    /// For each message, the assistant messages among `messages[..=i]` (the API calls
    /// made so far when that message was sent).
    pub calls: &'a [usize],
}

/// The number of oldest tool results released (summarised where they can be).
pub(crate) fn released(s: &ContextSettings, shape: &Shape<'_>) -> usize {
    let n = shape.result_msg.len();
    // cum[i] = bytes of messages[..i].
    let mut cum = Vec::with_capacity(shape.msg_bytes.len() + 1);
    cum.push(0usize);
    for b in shape.msg_bytes {
        cum.push(cum.last().copied().unwrap_or(0) + b);
    }
    let write = s.cache_write_pct as i128;
    let read = s.cache_read_pct as i128;
    let mut f = 0usize;
    let mut k = 0usize;
    while k < n {
        let m = shape.result_msg[k];
        while k < n && shape.result_msg[k] == m {
            k += 1;
        }
        if m + 1 < s.min_messages {
            continue;
        }
        let target = k.saturating_sub(s.keep_last);
        if target <= f {
            continue;
        }
        if let Some(b) = s.batch {
            let b = b.max(1);
            f = f.max(target / b * b);
            continue;
        }
        let gain: usize = shape.saving[f..target].iter().sum();
        let Some(first) = (f..target).find(|&i| shape.saving[i] > 0) else {
            // Nothing in the span would change: moving past it costs nothing.
            f = target;
            continue;
        };
        let before = cum[m + 1] - cum[shape.result_msg[first]];
        let after = before.saturating_sub(gain);
        let expected = s.expected_calls.unwrap_or(shape.calls[m]) as i128;
        let benefit = expected * read * gain as i128;
        let cost = write * after as i128 - read * before as i128;
        if benefit > cost {
            f = target;
        }
    }
    f
}

/// Bytes of `s` as a JSON string body (escapes counted as serde_json writes them).
pub(crate) fn json_len(s: &str) -> usize {
    s.bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 2,
            0..=0x1f => 6,
            _ => 1,
        })
        .sum()
}

/// Serialized size of a JSON value in bytes, without building the text.
pub(crate) fn value_len(v: &serde_json::Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` results of `size` bytes, one per message pair, saving `save` each.
    fn run(s: &ContextSettings, n: usize, size: usize, save: usize) -> Vec<usize> {
        // messages: 0 system, then (assistant, tool) pairs.
        let mut msg_bytes = vec![100];
        let mut result_msg = Vec::new();
        let mut calls = vec![0];
        for i in 0..n {
            msg_bytes.push(50);
            calls.push(i + 1);
            msg_bytes.push(size);
            calls.push(i + 1);
            result_msg.push(msg_bytes.len() - 1);
        }
        let saving = vec![save; n];
        // The released count after each result.
        (1..=n)
            .map(|k| {
                let last = result_msg[k - 1];
                released(
                    s,
                    &Shape {
                        msg_bytes: &msg_bytes[..=last],
                        result_msg: &result_msg[..k],
                        saving: &saving[..k],
                        calls: &calls[..=last],
                    },
                )
            })
            .collect()
    }

    #[test]
    fn never_decreases_and_waits_until_it_pays() {
        let s = ContextSettings {
            min_messages: 0,
            keep_last: 2,
            expected_calls: Some(5),
            ..ContextSettings::default()
        };
        let got = run(&s, 60, 10_000, 9_500);
        assert!(got.windows(2).all(|w| w[0] <= w[1]), "{got:?}");
        // Not at the first chance: the first result leaves the window at k = 3.
        assert_eq!(got[2], 0, "{got:?}");
        assert!(*got.last().unwrap() > 0, "{got:?}");
        // Releases are few: the count changes far less often than once per result.
        let changes = got.windows(2).filter(|w| w[0] != w[1]).count();
        assert!(changes < 15, "{changes} releases: {got:?}");
        // Learned from the session (as many calls again as so far), releases start.
        let learned = ContextSettings {
            expected_calls: None,
            ..s
        };
        let got = run(&learned, 60, 10_000, 9_500);
        assert!(got.windows(2).all(|w| w[0] <= w[1]), "{got:?}");
        assert_eq!(got[2], 0, "{got:?}");
        assert!(got[59] >= 50, "{got:?}");
    }

    #[test]
    fn small_savings_are_never_worth_it_and_free_moves_are_taken() {
        let s = ContextSettings {
            min_messages: 0,
            keep_last: 2,
            expected_calls: Some(3),
            ..ContextSettings::default()
        };
        assert_eq!(*run(&s, 40, 10_000, 100).last().unwrap(), 0);
        // Nothing to save: the window moves (no bytes change).
        assert_eq!(*run(&s, 40, 10_000, 0).last().unwrap(), 38);
    }

    #[test]
    fn a_fixed_batch_is_the_old_rule() {
        let s = ContextSettings {
            min_messages: 0,
            keep_last: 20,
            batch: Some(10),
            ..ContextSettings::default()
        };
        let got = run(&s, 45, 1_000, 900);
        assert_eq!((got[28], got[29], got[39], got[44]), (0, 10, 20, 20));
    }

    #[test]
    fn json_len_matches_serde() {
        for s in ["", "plain", "a\"b\\c\nd\te\u{1}f\u{7f}é→"] {
            assert_eq!(json_len(s) + 2, serde_json::to_string(s).unwrap().len());
        }
    }
}
