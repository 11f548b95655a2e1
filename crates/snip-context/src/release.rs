//! The release rule: how many of the oldest tool results a request sends as summaries.
//!
//! Replacing an older result changes the request from that result on, so the provider
//! re-writes everything after it into its prompt cache at the write price instead of
//! reading it at the read price. Three conditions must hold for a release:
//!
//! - **It is paid for already.** The pass replays every earlier call of the
//!   conversation (the request sent before each model turn) and keeps a ledger of what
//!   it saved against sending everything: each call's cost with the pass minus the same
//!   call's cost without it, at the settings' prices. Without it means the originals:
//!   the bytes per-result compression already took out of a result, as its markers
//!   state them ([`banked`]), count as sent. A release is allowed only when the
//!   ledger, after paying this call's re-write, is still at or above zero. So the
//!   pass never costs more than no compression at any session length, whenever the
//!   session stops: the first release waits until it pays for itself on the call that
//!   makes it (the released results are so large that sending their summaries, even
//!   re-written at the write price, costs less than reading them), and later ones
//!   are paid from what the earlier ones saved.
//! - **It is worth it.** The tokens saved on each later call, times the calls expected
//!   to follow, exceed the re-write it causes:
//!
//! ```text
//! expected_calls × read × saved  >  write × suffix_after − read × suffix_before
//! ```
//!
//! where `saved` is what the newly released results shrink by, `suffix_before` the
//! request from the first of them to the end as it was (what the cache would have
//! read), and `suffix_after` the same span after the release (what the cache now
//! writes).
//! - **It is due.** What the pass gave up since its last release, by sending whole
//!   results it could have released (read price × their saving, summed over the calls
//!   since), is at least that re-write. This is the rent-or-buy rule: releases come in
//!   batches sized so that the re-writes and the savings given up while waiting stay
//!   in balance, instead of one re-write of the protected window per call.
//!
//! Prices are the settings' percentages of an uncached input token; sizes are bytes of
//! the text the model reads (string values of the messages, unescaped, plus a few
//! bytes of framing per message), the same unit on both sides.
//!
//! The decision is replayed from the start of the conversation at every call, seeing
//! only the messages that call sent. So the released count is a function of the
//! conversation's prefix: it never decreases as the conversation grows, it is the same
//! on every call and in every process, and between two releases each request is the
//! previous one with messages appended.

use crate::ContextSettings;

/// The sizes the rule reads, all indexed as in the request.
pub(crate) struct Shape<'a> {
    /// Size of each message, in bytes of text.
    pub msg_bytes: &'a [usize],
    /// For each tool result (oldest first), the index of its message (non-decreasing).
    pub result_msg: &'a [usize],
    /// For each tool result, the bytes its summary would save (0: it would stay whole).
    /// Read only for results that may leave the protected window.
    pub saving: &'a [usize],
    /// The calls of the conversation: for each, the number of leading messages its
    /// request sent (strictly increasing; the last is the whole request in hand).
    pub calls: &'a [usize],
    /// For each tool result, the bytes per-result compression already took out of it,
    /// as its markers state ([`banked`]): sending everything would have sent them too.
    pub banked: &'a [usize],
}

/// The number of oldest tool results released (summarised where they can be).
pub(crate) fn released(s: &ContextSettings, shape: &Shape<'_>) -> usize {
    let n = shape.result_msg.len();
    // cum[i] = bytes of messages[..i]; gsum[i] = saving of results[..i].
    let mut cum = Vec::with_capacity(shape.msg_bytes.len() + 1);
    cum.push(0usize);
    for b in shape.msg_bytes {
        cum.push(cum.last().copied().unwrap_or(0) + b);
    }
    // whole[i] = bytes of messages[..i] as sending everything would have sent them:
    // with what per-result compression took out of the results put back.
    let mut extra = vec![0usize; shape.msg_bytes.len()];
    for (i, &m) in shape.result_msg.iter().enumerate() {
        if let (Some(e), Some(b)) = (extra.get_mut(m), shape.banked.get(i)) {
            *e += b;
        }
    }
    let mut whole = Vec::with_capacity(cum.len());
    whole.push(0usize);
    for (b, e) in shape.msg_bytes.iter().zip(&extra) {
        whole.push(whole.last().copied().unwrap_or(0) + b + e);
    }
    let mut gsum = Vec::with_capacity(n + 1);
    gsum.push(0usize);
    for g in shape.saving {
        gsum.push(gsum.last().copied().unwrap_or(0) + g);
    }
    let w = s.cache_write_pct as i128;
    let r = s.cache_read_pct as i128;
    // Bytes of the pass's request `messages[..upto]` with the oldest `f` results
    // released.
    let sent = |f: usize, upto: usize| -> usize {
        let before = shape.result_msg.partition_point(|&m| m < upto);
        cum[upto] - gsum[f.min(before)]
    };
    // A call's cost when `common` leading bytes are read from the cache and the rest of
    // its `total` bytes is written.
    // Saturating here and below: the prices and `expected_calls` may be set as large
    // as `usize::MAX`, and their products then pass `i128::MAX`.
    let cost = |common: usize, total: usize| -> i128 {
        let common = common.min(total);
        r.saturating_mul(common as i128)
            .saturating_add(w.saturating_mul((total - common) as i128))
    };
    let mut f = 0usize;
    let mut k = 0usize;
    // What the pass saved so far against no compression (percent × bytes).
    let mut ledger: i128 = 0;
    // What the pass gave up since its last release by not releasing the results that
    // could have been (percent × bytes).
    let mut forgone: i128 = 0;
    let (mut prev_all, mut prev_sent) = (0usize, 0usize);
    for (c, &p) in shape.calls.iter().enumerate() {
        let p = p.min(shape.msg_bytes.len());
        while k < n && shape.result_msg[k] < p {
            k += 1;
        }
        let none = cost(prev_all, whole[p]);
        // This call's cost with `to` results released, coming from `f`.
        let cost_to = |to: usize| -> i128 {
            let total = sent(to, p);
            match (f..to).find(|&i| shape.saving[i] > 0) {
                Some(first) => cost(prev_sent.min(sent(f, shape.result_msg[first])), total),
                None => cost(prev_sent, total),
            }
        };
        let target = k.saturating_sub(s.keep_last);
        let mut to = f;
        if p >= s.min_messages && target > f {
            if let Some(b) = s.batch {
                to = f.max(target / b.max(1) * b.max(1));
            } else if (f..target).all(|i| shape.saving[i] == 0) {
                // Nothing in the span would change: moving past it costs nothing.
                to = target;
            } else {
                let gain = (gsum[target] - gsum[f]) as i128;
                let keep = cost_to(f);
                let release = cost_to(target);
                let expected = s.expected_calls.unwrap_or(c + 1) as i128;
                let more = release.saturating_sub(keep);
                let worth = expected.saturating_mul(r).saturating_mul(gain) > more;
                let due = forgone >= more;
                let paid = ledger.saturating_add(none).saturating_sub(release) >= 0;
                if worth && due && paid {
                    to = target;
                } else {
                    forgone = forgone.saturating_add(r.saturating_mul(gain));
                }
            }
        }
        if to > f {
            forgone = 0;
        }
        ledger = ledger.saturating_add(none.saturating_sub(cost_to(to)));
        f = to;
        prev_all = whole[p];
        prev_sent = sent(f, p);
    }
    f
}

/// The bytes per-result compression already took out of a tool result's text, as its
/// markers state them (docs/markers.md): for each `[snip: …]` marker with a
/// `bytes A-B` range (of the original, 0-based, half-open), `B - A` less the marker's
/// own length, when positive. Markers without a byte range (repeats, footers, the
/// middle of a JSON string) count nothing, and a range of a decoded JSON string counts
/// fewer bytes than its escaped text had, so the figure errs low. Text that quotes
/// markers it did not come from (a read of this documentation) is counted as if it
/// had.
pub(crate) fn banked(text: &str) -> usize {
    const OPEN: &str = "[snip: ";
    let mut total = 0usize;
    let mut rest = text;
    while let Some(at) = rest.find(OPEN) {
        let tail = &rest[at..];
        // A marker is one line and ends at its first `]` (its `what` has none); one
        // that does not end so is not counted.
        let end = tail.find([']', '\n']).unwrap_or(tail.len());
        if tail.as_bytes().get(end) == Some(&b']') {
            let marker = &tail[..=end];
            if let Some((a, b)) = elided_range(marker) {
                total = total.saturating_add(b.saturating_sub(a).saturating_sub(marker.len()));
            }
        }
        rest = &tail[end.max(OPEN.len())..];
    }
    total
}

/// The original byte range a marker stands for: its `bytes A-B`, or for a
/// `json-fields` marker in a long string (which has none), its restore call's
/// `start`/`end` (bytes of the decoded string). A footer's call covers the whole
/// original, not what was removed, so no other call is read.
fn elided_range(marker: &str) -> Option<(usize, usize)> {
    let number = |s: &str| -> Option<usize> {
        let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        s[..end].parse().ok()
    };
    let mut parts = marker.split(" \u{b7} ");
    let rule = parts.nth(1)?;
    let mut call = None;
    for p in parts {
        if let Some((a, b)) = p.strip_prefix("bytes ").and_then(|r| r.split_once('-')) {
            return Some((number(a)?, number(b)?));
        }
        call = p.strip_prefix("restore: ").or(call);
    }
    let call = call.filter(|_| rule == "json-fields")?;
    if !call.contains("mode=\"bytes\"") && !call.contains("mode=\\\"bytes\\\"") {
        return None;
    }
    let start = number(&call[call.find(" start=")? + " start=".len()..])?;
    let end = number(&call[call.find(" end=")? + " end=".len()..])?;
    Some((start, end))
}

/// Bytes of framing counted per message (its role, keys and separators as the model
/// reads them: a few tokens).
const MESSAGE_FRAMING: usize = 16;

/// Size of one message as the model reads it: the bytes of every string in it
/// (unescaped), plus [`MESSAGE_FRAMING`].
pub(crate) fn message_len(v: &serde_json::Value) -> usize {
    fn text(v: &serde_json::Value) -> usize {
        match v {
            serde_json::Value::String(s) => s.len(),
            serde_json::Value::Array(a) => a.iter().map(text).sum(),
            serde_json::Value::Object(o) => o.values().map(text).sum(),
            _ => 0,
        }
    }
    text(v) + MESSAGE_FRAMING
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A conversation of `n` calls, each answered by one tool call whose result has
    /// `size` bytes and would save `save`: messages are a system prompt, then
    /// (assistant, tool) pairs. Returns, for each call `k` (1-based: the request holds
    /// `k` results), the sizes of its messages as the pass sends them.
    fn session(s: &ContextSettings, n: usize, size: usize, save: usize) -> Vec<Vec<usize>> {
        session_banked(s, n, size, save, 0)
    }

    /// [`session`] where per-result compression already took `banked` bytes out of
    /// each result.
    fn session_banked(
        s: &ContextSettings,
        n: usize,
        size: usize,
        save: usize,
        banked: usize,
    ) -> Vec<Vec<usize>> {
        let mut msg_bytes = vec![100];
        let mut result_msg = Vec::new();
        for _ in 0..n {
            msg_bytes.push(50);
            msg_bytes.push(size);
            result_msg.push(msg_bytes.len() - 1);
        }
        let saving = vec![save; n];
        let banked = vec![banked; n];
        (1..=n)
            .map(|k| {
                let len = result_msg[k - 1] + 1;
                // Requests were sent before each assistant message, and now.
                let mut calls: Vec<usize> = (0..k).map(|i| 1 + 2 * i).collect();
                calls.push(len);
                let f = released(
                    s,
                    &Shape {
                        msg_bytes: &msg_bytes[..len],
                        result_msg: &result_msg[..k],
                        saving: &saving[..k],
                        calls: &calls,
                        banked: &banked[..k],
                    },
                );
                let mut sent = msg_bytes[..len].to_vec();
                for &m in &result_msg[..f] {
                    sent[m] -= save;
                }
                sent
            })
            .collect()
    }

    /// The number of summarised results of each request.
    fn released_counts(requests: &[Vec<usize>], size: usize) -> Vec<usize> {
        requests
            .iter()
            .map(|r| r.iter().skip(2).step_by(2).filter(|&&b| b < size).count())
            .collect()
    }

    /// Cost of each call of `requests` and of the same calls sent whole, priced
    /// independently of the rule: a call reads from the cache the leading messages
    /// equal to the previous call's and writes the rest.
    fn costs(
        s: &ContextSettings,
        requests: &[Vec<usize>],
        whole: &[Vec<usize>],
    ) -> Vec<(i128, i128)> {
        let price = |prev: &[usize], cur: &[usize]| -> i128 {
            let same = prev.iter().zip(cur).take_while(|(a, b)| a == b).count();
            let read: usize = cur[..same].iter().sum();
            let all: usize = cur.iter().sum();
            s.cache_read_pct as i128 * read as i128
                + s.cache_write_pct as i128 * (all - read) as i128
        };
        let mut out = Vec::new();
        let (mut pp, mut pw): (&[usize], &[usize]) = (&[], &[]);
        for (r, w) in requests.iter().zip(whole) {
            out.push((price(pp, r), price(pw, w)));
            pp = r;
            pw = w;
        }
        out
    }

    fn settings(keep_last: usize, write: usize, read: usize) -> ContextSettings {
        ContextSettings {
            min_messages: 0,
            keep_last,
            cache_write_pct: write,
            cache_read_pct: read,
            ..ContextSettings::default()
        }
    }

    #[test]
    fn never_costs_more_than_sending_everything_at_any_length() {
        for (write, read) in [(125, 10), (200, 10), (100, 25), (100, 10), (100, 50)] {
            for (size, save) in [(10_000, 9_500), (3_000, 2_000), (800, 300)] {
                let s = settings(2, write, read);
                let n = 300;
                let reqs = session(&s, n, size, save);
                let whole = session(
                    &ContextSettings {
                        keep_last: n,
                        ..s.clone()
                    },
                    n,
                    size,
                    save,
                );
                let (mut pass, mut none) = (0, 0);
                for (k, (p, w)) in costs(&s, &reqs, &whole).into_iter().enumerate() {
                    pass += p;
                    none += w;
                    assert!(
                        pass <= none,
                        "{write}/{read} {size}/{save}: call {k}: {pass} > {none}"
                    );
                }
                let got = released_counts(&reqs, size);
                assert!(got.windows(2).all(|w| w[0] <= w[1]), "{got:?}");
                // Each request extends the previous one, except where the count grew.
                for k in 1..n {
                    if got[k] == got[k - 1] {
                        assert_eq!(reqs[k][..reqs[k - 1].len()], reqs[k - 1][..]);
                    }
                }
            }
        }
    }

    #[test]
    fn waits_until_the_first_release_pays_for_itself() {
        // Anthropic's prices: the released results must outweigh the re-written tail
        // ~11.5 times over, so the first release comes late and at once.
        let got = released_counts(&session(&settings(2, 125, 10), 200, 10_000, 9_500), 10_000);
        let first = got.iter().position(|&f| f > 0).unwrap();
        assert!(
            (25..120).contains(&first),
            "first release at call {first}: {got:?}"
        );
        assert!(got[first] > 20, "{got:?}");
        // Releases are few: the count changes far less often than once per call.
        let changes = got.windows(2).filter(|w| w[0] != w[1]).count();
        assert!(changes < 40, "{changes} releases: {got:?}");
        // Cheaper writes (OpenAI: no premium, reads at 25%) release sooner.
        let cheap = released_counts(&session(&settings(2, 100, 25), 200, 10_000, 9_500), 10_000);
        let sooner = cheap.iter().position(|&f| f > 0).unwrap();
        assert!(sooner < first, "{sooner} vs {first}");
        // Short sessions: nothing is released.
        let short = released_counts(&session(&settings(2, 125, 10), 30, 10_000, 9_500), 10_000);
        assert!(short.iter().all(|&f| f == 0), "{short:?}");
    }

    #[test]
    fn small_savings_are_never_worth_it_and_free_moves_are_taken() {
        let s = settings(2, 125, 10);
        let got = released_counts(&session(&s, 300, 10_000, 100), 10_000);
        assert_eq!(*got.last().unwrap(), 0);
        // Nothing to save: the window moves (no bytes change).
        let shape_calls: Vec<usize> = (0..40).map(|i| 1 + 2 * i).chain([81]).collect();
        let msg_bytes: Vec<usize> = std::iter::once(100)
            .chain((0..40).flat_map(|_| [50, 10_000]))
            .collect();
        let result_msg: Vec<usize> = (0..40).map(|i| 2 + 2 * i).collect();
        let f = released(
            &s,
            &Shape {
                msg_bytes: &msg_bytes,
                result_msg: &result_msg,
                saving: &[0; 40],
                calls: &shape_calls,
                banked: &[],
            },
        );
        assert_eq!(f, 38);
    }

    #[test]
    fn what_per_result_compression_banked_pays_for_releases() {
        // Results of 3,000 bytes that were 20,000 before per-result compression:
        // sending everything would have sent 20,000 each.
        let s = settings(2, 125, 10);
        let n = 200;
        let (size, save, banked) = (3_000, 2_500, 17_000);
        let alone = released_counts(&session(&s, n, size, save), size);
        let credited = released_counts(&session_banked(&s, n, size, save, banked), size);
        let first = |v: &[usize]| v.iter().position(|&f| f > 0).unwrap_or(n);
        assert!(
            first(&credited) < first(&alone),
            "{credited:?} vs {alone:?}"
        );
        // Still never above sending the originals, at any length.
        let reqs = session_banked(&s, n, size, save, banked);
        let originals = session(
            &ContextSettings {
                keep_last: n,
                ..s.clone()
            },
            n,
            size + banked,
            save,
        );
        let (mut pass, mut none) = (0, 0);
        for (k, (p, w)) in costs(&s, &reqs, &originals).into_iter().enumerate() {
            pass += p;
            none += w;
            assert!(pass <= none, "call {k}: {pass} > {none}");
        }
    }

    #[test]
    fn banked_reads_the_byte_ranges_of_markers() {
        let elide = "[snip: 287 lines (8897 bytes) elided \u{b7} head-tail-elide \u{b7} lines 316-602 \u{b7} bytes 9811-18708 \u{b7} restore: snip_restore(id=\"sn_d20a249d6d680916d10b4b09\", mode=\"lines\", start=316, end=602)]";
        let repeat = "[snip: previous line repeated 1341 more times \u{b7} repeat-collapse \u{b7} lines 9-1349 \u{b7} restore: snip_restore(id=\"sn_39c58ac398d4125a87f3b0b8\", mode=\"lines\", start=9, end=1349)]";
        let want = 18_708 - 9_811 - elide.len();
        assert_eq!(banked(&format!("head\n{elide}\ntail\n")), want);
        // No byte range: nothing is counted.
        assert_eq!(banked(&format!("a\n{repeat}\nb")), 0);
        // Inside a JSON string (quotes escaped), twice.
        let json = serde_json::to_string(
            &serde_json::json!({"output": format!("x\n{elide}\ny\n{elide}")}),
        )
        .unwrap();
        let escaped = serde_json::to_string(elide).unwrap().len() - 2;
        assert_eq!(banked(&json), 2 * (18_708 - 9_811 - escaped));
        // A marker whose range is shorter than itself, a cut one, a summary: nothing.
        assert_eq!(banked("[snip: 1 line (3 bytes) elided \u{b7} head-tail-elide \u{b7} bytes 0-3 \u{b7} lossless]"), 0);
        assert_eq!(
            banked("[snip: 5 bytes elided \u{b7} head-tail-elide \u{b7} bytes 0-900"),
            0
        );
        assert_eq!(banked("[snip: x \u{b7} y \u{b7} bytes 9-"), 0);
        assert_eq!(banked("no markers [snip: at all"), 0);
        // A long JSON string's middle: the call's range, escaped or not.
        let field = "[snip: 28083 bytes elided from this string \u{b7} json-fields \u{b7} restore: snip_restore(id=\"sn_2d985c68fc82ca9cf934fe72\", mode=\"bytes\", field=\"/content\", start=512, end=28595)]";
        assert_eq!(banked(field), 28_083 - field.len());
        let json =
            serde_json::to_string(&serde_json::json!({"content": format!("a…{field}…b")})).unwrap();
        let escaped = serde_json::to_string(field).unwrap().len() - 2;
        assert_eq!(banked(&json), 28_083 - escaped);
        // A footer's call is the whole original, not what was removed.
        assert_eq!(banked("x\n[snip: removed 404 redrawn progress frames \u{b7} terminal-render \u{b7} restore: snip_restore(id=\"sn_7523e762f3f2a430ddfbd929\", mode=\"bytes\", start=0, end=18102)]"), 0);
    }

    #[test]
    fn a_fixed_batch_is_the_old_rule() {
        let s = ContextSettings {
            min_messages: 0,
            keep_last: 20,
            batch: Some(10),
            ..ContextSettings::default()
        };
        let got = released_counts(&session(&s, 45, 1_000, 900), 1_000);
        assert_eq!((got[28], got[29], got[39], got[44]), (0, 10, 20, 20));
    }

    #[test]
    fn message_len_counts_text_not_escapes() {
        let m = serde_json::json!({"role": "tool", "content": "a\"b\nc"});
        assert_eq!(message_len(&m), "tool".len() + 5 + MESSAGE_FRAMING);
    }
}
