//! Several parts under one budget: outputs a reader sees together (a command's
//! `stdout` and `stderr`, the two sides of a host's own truncation notice), each
//! compressed on its own, sharing one `max_bytes`.

use crate::{compress_recorded, StoreHandle};
use snip_core::config::MIN_MAX_BYTES;
use snip_core::{Config, Outcome};

/// Compresses each of `parts` (kept and recorded like [`compress_recorded`]) so that
/// together they fit `config.max_bytes`, and returns their outcomes in the order of
/// `parts`.
///
/// The rule: parts are compressed shortest first (ties in the given order); each gets
/// the budget the parts before it left, shared evenly among the parts still to come,
/// and never less than `max_bytes / n` nor than the core's minimum budget (1024
/// bytes, the least `SNIP_MAX_BYTES` accepts). So a short part takes what it needs and
/// leaves the rest to the longer ones, and with two parts the shorter one has at most
/// half. A part's head, tail and salient shares are scaled with its budget (see
/// [`within`]). A part that fits its budget is left as it is. A part whose outcome is
/// not shorter than it counts at its own size (the reader is shown it as it was).
pub fn compress_parts(
    parts: &[&[u8]],
    config: &Config,
    store: &StoreHandle,
    source: &str,
) -> Vec<Outcome> {
    let budget = config.max_bytes;
    let n = parts.len().max(1);
    let floor = (budget / n).max(MIN_MAX_BYTES);
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by_key(|&i| parts[i].len());
    let mut out: Vec<Option<Outcome>> = vec![None; parts.len()];
    let mut used = 0usize;
    for (k, &i) in order.iter().enumerate() {
        let left = parts.len() - k;
        let share = (budget.saturating_sub(used) / left).max(floor);
        let o = compress_recorded(parts[i], &within(config, share), store, source);
        used += if o.changed && o.output.len() < parts[i].len() {
            o.output.len()
        } else {
            parts[i].len()
        };
        out[i] = Some(o);
    }
    out.into_iter()
        .zip(parts)
        .map(|(o, p)| o.unwrap_or_else(|| Outcome::unchanged(p)))
        .collect()
}

/// `config` with its budget lowered to `max_bytes` (never raised), and the head, tail
/// and salient shares scaled with it, so they keep their proportions.
pub fn within(config: &Config, max_bytes: usize) -> Config {
    if max_bytes >= config.max_bytes {
        return config.clone();
    }
    let scale = |v: usize| (v as u128 * max_bytes as u128 / config.max_bytes as u128) as usize;
    Config {
        max_bytes,
        head_bytes: scale(config.head_bytes),
        tail_bytes: scale(config.tail_bytes),
        salient_bytes: scale(config.salient_bytes),
        ..config.clone()
    }
}
