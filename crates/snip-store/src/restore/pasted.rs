//! Reading a restore request as a person gives it on a command line: a restore call
//! pasted from a marker (plain or JSON-escaped), `A:B` ranges, and the command that
//! fetches the next page. The `snip restore` command is flags around these.
use super::{RestoreMode, RestoreRequest, RestoreStatus};

/// Parses a pasted restore call: as a marker quotes it, or JSON-escaped as it reads
/// inside a JSON string (`snip_restore(id=\"sn_…\", mode=\"lines\", …)`, copied from
/// a tool result or a transcript), which is unescaped once and parsed again. The
/// escaped form never parses as it is (a value cannot start with `\`), so the two
/// readings cannot disagree. The error is the protocol's message for the call (the
/// unescaped one when the escaped form unescapes).
pub fn parse_pasted_call(call: &str) -> Result<RestoreRequest, String> {
    let plain = RestoreRequest::from_call(call);
    if plain.is_err() && call.contains("\\\"") {
        if let Ok(unescaped) = serde_json::from_str::<String>(&format!("\"{}\"", call.trim())) {
            return RestoreRequest::from_call(&unescaped);
        }
    }
    plain
}

/// The restore call of a pasted marker line (`[snip: … · restore: snip_restore(…)]`,
/// as an output shows it), read as [`parse_pasted_call`] reads a call.
///
/// # Errors
/// One line saying what to do: the marker quotes no call (its original was not
/// kept), or `line` is not one whole marker line (paste the call it quotes).
pub fn parse_pasted_marker(line: &str) -> Result<RestoreRequest, String> {
    match snip_core::marker::parse(line.trim()) {
        Some(m) => match m.call {
            Some(call) => parse_pasted_call(&call),
            None if m.not_retained => Err("this marker's original was not kept (the store was off or full when it was made), so nothing restores it; re-run the command to see its output again".into()),
            None => Err("this marker quotes no restore call: nothing restores it".into()),
        },
        None => Err("paste the restore call a marker quotes, snip_restore(id=\"sn_…\", …), not the marker line around it".into()),
    }
}

/// The `id="…"` of a pasted call that could not be read, for the `invalid` answer
/// to echo ("" when there is none).
pub fn pasted_call_id(call: &str) -> String {
    let unescaped = call.replace("\\\"", "\"");
    unescaped
        .split_once("id=\"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .map(|(id, _)| id.to_string())
        .unwrap_or_default()
}

/// Parses `A:B`, `A:`, `:B` (or a single `A`, meaning from A on) into whole numbers;
/// the units are the mode's (bytes 0-based half-open, lines 1-based inclusive). The
/// error names `flag` and shows an example.
pub fn parse_range(s: &str, flag: &str) -> Result<(Option<u64>, Option<u64>), String> {
    let err = || format!("{flag} takes A:B with whole numbers, e.g. {flag} 100:200");
    let num = |t: &str| -> Result<Option<u64>, String> {
        let t = t.trim();
        if t.is_empty() {
            return Ok(None);
        }
        t.parse::<u64>()
            .map(Some)
            .map_err(|e| format!("{}: {e}", err()))
    };
    match s.split_once(':') {
        Some((a, b)) => Ok((num(a)?, num(b)?)),
        None if !s.trim().is_empty() => Ok((num(s)?, None)),
        None => Err(err()),
    }
}

/// The `snip restore` command that fetches the next page of `req` from `next`, with
/// every other setting of the request (`--field`, `--max-bytes`, `--context`,
/// `--align`) kept and `--raw` at the end. A search continues through a pasted call
/// (there is no flag for its start line). `quote` quotes one shell word.
pub fn continue_command(req: &RestoreRequest, next: u64, quote: impl Fn(&str) -> String) -> String {
    let end = req.end.map(|e| e.to_string()).unwrap_or_default();
    let mut cmd = match req.mode {
        RestoreMode::Lines => format!("snip restore {} --lines {next}:{end}", req.id),
        RestoreMode::Search => format!(
            "snip restore {}",
            quote(&format!(
                "snip_restore(id=\"{}\", mode=\"search\", query=\"{}\", start={next})",
                req.id,
                req.query
                    .as_deref()
                    .unwrap_or_default()
                    .replace('\\', "\\\\")
                    .replace('"', "\\\"")
            ))
        ),
        _ => format!("snip restore {} --bytes {next}:{end}", req.id),
    };
    if let Some(f) = &req.field {
        cmd.push_str(&format!(" --field {}", quote(f)));
    }
    if let Some(n) = req.max_bytes {
        cmd.push_str(&format!(" --max-bytes {n}"));
    }
    if let Some(n) = req.context {
        cmd.push_str(&format!(" --context {n}"));
    }
    if req.align.is_some() {
        cmd.push_str(" --align token");
    }
    cmd.push_str(" --raw");
    cmd
}

impl RestoreStatus {
    /// The status as the response's JSON spells it (`ok`, `not_found`, …).
    pub fn name(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    }

    /// The `snip restore` exit status: 0 `ok`; 1 `not_found` or `expired`;
    /// 2 `invalid`; 3 `too_large`; 4 `unavailable` or `error`.
    pub fn exit_code(self) -> u8 {
        match self {
            RestoreStatus::Ok => 0,
            RestoreStatus::NotFound | RestoreStatus::Expired => 1,
            RestoreStatus::Invalid => 2,
            RestoreStatus::TooLarge => 3,
            RestoreStatus::Unavailable | RestoreStatus::Error => 4,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(parse_range("3:9", "--bytes").unwrap(), (Some(3), Some(9)));
        assert_eq!(parse_range(":9", "--bytes").unwrap(), (None, Some(9)));
        assert_eq!(parse_range("3:", "--bytes").unwrap(), (Some(3), None));
        assert_eq!(parse_range("3", "--bytes").unwrap(), (Some(3), None));
        assert!(parse_range("a:b", "--bytes").is_err());
        assert!(parse_range("", "--bytes").is_err());
        assert!(parse_range("-1:3", "--lines")
            .unwrap_err()
            .starts_with("--lines takes A:B"));
    }

    #[test]
    fn pasted_calls_plain_and_json_escaped() {
        let id = "sn_0123456789abcdef01234567";
        let plain = format!(r#"snip_restore(id="{id}", mode="lines", start=3, end=9)"#);
        let escaped = format!(r#"snip_restore(id=\"{id}\", mode=\"lines\", start=3, end=9)"#);
        for call in [&plain, &escaped] {
            let r = parse_pasted_call(call).unwrap();
            assert_eq!(
                (r.id.as_str(), r.mode, r.start, r.end),
                (id, RestoreMode::Lines, Some(3), Some(9))
            );
            assert_eq!(pasted_call_id(call), id);
        }
        // A quote inside a query, escaped once more in the JSON form.
        let r = parse_pasted_call(&format!(
            r#"snip_restore(id=\"{id}\", mode=\"search\", query=\"say \\\"hi\\\"\")"#
        ))
        .unwrap();
        assert_eq!(r.query.as_deref(), Some(r#"say "hi""#));
        // Malformed once unescaped: the message is about the unescaped call.
        let e = parse_pasted_call(r#"snip_restore(id=\"sn_x\", mode=\"chars\")"#).unwrap_err();
        assert!(e.contains("not one of bytes"), "{e}");
        assert!(parse_pasted_call(r#"snip_restore(id=\"sn_x)"#).is_err());
        assert_eq!(pasted_call_id("snip_restore(mode=\"x\")"), "");
    }

    #[test]
    fn continue_commands_keep_the_settings() {
        let q = |s: &str| format!("'{s}'");
        let req = RestoreRequest {
            id: "sn_a".into(),
            mode: RestoreMode::Lines,
            end: Some(90),
            field: Some("/x".into()),
            max_bytes: Some(100),
            ..Default::default()
        };
        assert_eq!(
            continue_command(&req, 40, q),
            "snip restore sn_a --lines 40:90 --field '/x' --max-bytes 100 --raw"
        );
        let req = RestoreRequest {
            id: "sn_a".into(),
            mode: RestoreMode::Search,
            query: Some(r#"a"b"#.into()),
            context: Some(1),
            ..Default::default()
        };
        assert_eq!(
            continue_command(&req, 7, q),
            r#"snip restore 'snip_restore(id="sn_a", mode="search", query="a\"b", start=7)' --context 1 --raw"#
        );
        let req = RestoreRequest {
            id: "sn_a".into(),
            align: Some(super::super::Align::Token),
            ..Default::default()
        };
        assert_eq!(
            continue_command(&req, 5, q),
            "snip restore sn_a --bytes 5: --align token --raw"
        );
    }

    #[test]
    fn status_names_and_exit_codes() {
        assert_eq!(RestoreStatus::NotFound.name(), "not_found");
        assert_eq!(RestoreStatus::TooLarge.name(), "too_large");
        assert_eq!(RestoreStatus::Ok.exit_code(), 0);
        assert_eq!(RestoreStatus::Expired.exit_code(), 1);
        assert_eq!(RestoreStatus::Invalid.exit_code(), 2);
        assert_eq!(RestoreStatus::TooLarge.exit_code(), 3);
        assert_eq!(RestoreStatus::Error.exit_code(), 4);
    }
}
