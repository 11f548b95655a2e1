//! The receipt of one compression call: what `snip --format json` prints and what
//! the Python module's `compress` returns (there with `output` as the `str` or
//! `bytes` the caller gave). The fields are in `docs/cli.md`.

use crate::restore::{Encoding, JsonText};
use serde::{Serialize, Serializer};
use snip_core::{Outcome, Retention, RuleReport};

/// The receipt of an [`Outcome`], serialized as one JSON object with its keys in
/// this order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Receipt {
    /// The output as text: exact when `output_encoding` is `utf-8`; with
    /// `utf-8-lossy`, invalid UTF-8 shows as U+FFFD and `output_base64` holds the
    /// exact bytes.
    pub output: String,
    /// Whether `output` is exact.
    pub output_encoding: Encoding,
    /// Whether the output differs from the input.
    pub changed: bool,
    /// Size of the input in bytes.
    pub original_bytes: usize,
    /// Size of the output in bytes (the real bytes, not `output`'s UTF-8 length).
    pub output_bytes: usize,
    /// The rules that changed something, in order: `{"id": …, <count name>: n, …}`.
    #[serde(serialize_with = "rules")]
    pub rules: Vec<RuleReport>,
    /// Whether anything lossy (elision) happened.
    pub lossy: bool,
    /// The store id of the original (`sn_` + hex), when it was retained.
    pub id: Option<String>,
    /// Whether the original was retained (`id` is set).
    pub retained: bool,
    /// What the store did with the original: `retained`, `off`, `failed`, or `null`
    /// when it was not asked (nothing lossy to keep).
    pub retention: Option<&'static str>,
    /// Why the store could not keep the original (`retention` is `failed`).
    pub retention_error: Option<String>,
    /// Set when the call failed open: the output is the input, and this says why.
    pub failed_open: Option<String>,
    /// The output's exact bytes in base64, only when `output_encoding` is
    /// `utf-8-lossy`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_base64: Option<String>,
}

impl Receipt {
    /// The receipt of `o`.
    pub fn of(o: &Outcome) -> Receipt {
        let text = JsonText::of(&o.output);
        let (retention, retention_error) = match &o.retention {
            None => (None, None),
            Some(Retention::Retained { .. }) => (Some("retained"), None),
            Some(Retention::Off) => (Some("off"), None),
            Some(Retention::Failed { reason }) => (Some("failed"), Some(reason.clone())),
        };
        Receipt {
            output: text.text,
            output_encoding: text.encoding,
            changed: o.changed,
            original_bytes: o.original_bytes,
            output_bytes: o.output_bytes(),
            rules: o.rules.clone(),
            lossy: o.lossy,
            id: o.id().map(str::to_string),
            retained: o.id().is_some(),
            retention,
            retention_error,
            failed_open: o.failed_open.clone(),
            output_base64: text.base64,
        }
    }
}

/// Each rule report as one flat object: its id, then its counts in order.
fn rules<S: Serializer>(rules: &[RuleReport], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::{SerializeMap, SerializeSeq};
    struct Flat<'a>(&'a RuleReport);
    impl Serialize for Flat<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut m = s.serialize_map(Some(1 + self.0.counts.len()))?;
            m.serialize_entry("id", self.0.id.as_str())?;
            for (k, v) in &self.0.counts {
                m.serialize_entry(k, v)?;
            }
            m.end()
        }
    }
    let mut seq = s.serialize_seq(Some(rules.len()))?;
    for r in rules {
        seq.serialize_element(&Flat(r))?;
    }
    seq.end()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receipt_keys_in_order_and_lossy_bytes_exact() {
        let mut o = Outcome::unchanged(b"a\xffb");
        o.rules.push(RuleReport {
            id: snip_core::RuleId::AnsiStrip,
            counts: vec![("sequences", 3)],
        });
        o.retention = Some(Retention::Failed {
            reason: "full".into(),
        });
        let v = serde_json::to_value(Receipt::of(&o)).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "output",
                "output_encoding",
                "changed",
                "original_bytes",
                "output_bytes",
                "rules",
                "lossy",
                "id",
                "retained",
                "retention",
                "retention_error",
                "failed_open",
                "output_base64"
            ]
        );
        assert_eq!(v["output"], "a\u{fffd}b");
        assert_eq!(v["output_encoding"], "utf-8-lossy");
        assert_eq!(v["output_base64"], "Yf9i");
        assert_eq!(v["output_bytes"], 3);
        assert_eq!(
            v["rules"],
            serde_json::json!([{"id": "ansi-strip", "sequences": 3}])
        );
        assert_eq!(v["retention"], "failed");
        assert_eq!(v["retention_error"], "full");
        let plain = serde_json::to_value(Receipt::of(&Outcome::unchanged(b"ok"))).unwrap();
        assert!(plain.get("output_base64").is_none());
        assert_eq!(plain["retention"], serde_json::Value::Null);
    }
}
