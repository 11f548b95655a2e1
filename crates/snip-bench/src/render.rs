//! Renders a [`Report`] as an aligned text table, a Markdown table or JSON.

use crate::report::{RecoveredBy, Report, Row, Section, Totals};

/// The report as pretty JSON: `{"shapes": {"rows", "totals", "targets"}, "captures": …,
/// "new_captures": …}`.
pub fn json(report: &Report) -> String {
    serde_json::to_string_pretty(report).expect("the report always serializes")
}

/// The report as aligned plain-text tables, totals last, then the targets.
pub fn text(report: &Report) -> String {
    let mut s = String::new();
    for (title, section) in sections(report) {
        s.push_str(&format!("{title}\n\n"));
        let (head, align, body) = table(section);
        s.push_str(&aligned(&head, &align, &body));
        s.push_str(
            "\ntargets (the issues' goals, measured; not pass/fail, see docs/benchmark.md):\n",
        );
        for t in &section.targets {
            let verdict = if t.met { "met" } else { "MISSED" };
            s.push_str(&format!("  {verdict:<6}  {}: {}\n", t.goal, t.measured));
        }
        s.push('\n');
    }
    s
}

/// The report as GitHub-flavoured Markdown: a table per section, totals last, then the
/// targets as a list.
pub fn markdown(report: &Report) -> String {
    let mut s = String::new();
    for (title, section) in sections(report) {
        s.push_str(&format!("### {title}\n\n"));
        let (head, align, body) = table(section);
        s.push_str(&format!("| {} |\n", head.join(" | ")));
        let rule: Vec<&str> = align
            .iter()
            .map(|right| if *right { "---:" } else { "---" })
            .collect();
        s.push_str(&format!("| {} |\n", rule.join(" | ")));
        for (i, row) in body.iter().enumerate() {
            let cells: Vec<String> = if i + 1 == body.len() {
                row.iter()
                    .map(|c| {
                        if c.is_empty() {
                            c.clone()
                        } else {
                            format!("**{c}**")
                        }
                    })
                    .collect()
            } else {
                row.iter().map(|c| c.replace('|', "\\|")).collect()
            };
            s.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        s.push('\n');
        for t in &section.targets {
            let verdict = if t.met { "met" } else { "**missed**" };
            s.push_str(&format!("- {}: {} — {verdict}\n", t.goal, t.measured));
        }
        s.push('\n');
    }
    s
}

fn sections(report: &Report) -> [(String, &Section); 3] {
    [
        (
            format!("Generated shapes ({})", report.shapes.rows.len()),
            &report.shapes,
        ),
        (
            format!("Real captures ({})", report.captures.rows.len()),
            &report.captures,
        ),
        (
            format!(
                "New real captures ({}), not tuned on",
                report.new_captures.rows.len()
            ),
            &report.new_captures,
        ),
    ]
}

type Table = (Vec<&'static str>, Vec<bool>, Vec<Vec<String>>);

/// Header, right-alignment per column, and body rows (the totals row last).
fn table(section: &Section) -> Table {
    let head = vec![
        "input",
        "kind",
        "bytes before",
        "after",
        "tokens before",
        "after",
        "saved",
        "clue",
        "restore bytes",
        "diff",
        "json",
        "µs/call",
    ];
    let align = vec![
        false, false, true, true, true, true, true, false, true, false, false, true,
    ];
    let mut body: Vec<Vec<String>> = section.rows.iter().map(row_cells).collect();
    body.push(totals_cells(&section.totals));
    (head, align, body)
}

fn row_cells(r: &Row) -> Vec<String> {
    let clue = if r.clue_visible {
        "visible".to_string()
    } else {
        match r.recovered_by {
            Some(RecoveredBy::MarkerCall) => "restore call".to_string(),
            Some(RecoveredBy::Search) => "search call".to_string(),
            None => "LOST".to_string(),
        }
    };
    vec![
        r.name.clone(),
        format!("{:?}", r.kind).to_lowercase(),
        thousands(r.bytes_before),
        if r.within_bound {
            thousands(r.bytes_after)
        } else {
            format!("{} OVER", thousands(r.bytes_after))
        },
        thousands(r.tokens_before),
        thousands(r.tokens_after),
        format!("{:.1}%", r.tokens_saved_pct),
        clue,
        if r.clue_visible {
            String::new()
        } else {
            r.restore_response_bytes.map(thousands).unwrap_or_default()
        },
        match (r.diff_identical, r.diff_by_hunks) {
            (Some(true), _) => "same".into(),
            (Some(false), Some(true)) => "by hunks".into(),
            (Some(false), _) => "CHANGED".into(),
            (None, _) => String::new(),
        },
        match r.json_valid {
            Some(true) => "valid".into(),
            Some(false) => "INVALID".into(),
            None => String::new(),
        },
        format!("{:.1}", r.median_us),
    ]
}

fn totals_cells(t: &Totals) -> Vec<String> {
    vec![
        "TOTAL".into(),
        String::new(),
        thousands(t.bytes_before),
        thousands(t.bytes_after),
        thousands(t.tokens_before),
        thousands(t.tokens_after),
        format!("{:.1}%", t.tokens_saved_pct),
        format!(
            "{}/{} visible, {}/{} recoverable",
            t.clues_visible, t.rows, t.clues_recoverable, t.rows
        ),
        String::new(),
        if t.diffs_by_hunks > 0 {
            format!("{} changed, {} by hunks", t.diffs_changed, t.diffs_by_hunks)
        } else {
            format!("{} changed", t.diffs_changed)
        },
        format!("{} invalid", t.json_invalid),
        format!("{:.1}", t.median_us_sum),
    ]
}

fn aligned(head: &[&str], right: &[bool], body: &[Vec<String>]) -> String {
    let width = |c: usize| {
        body.iter()
            .map(|r| r[c].chars().count())
            .chain([head[c].chars().count()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..head.len()).map(width).collect();
    let line = |cells: Vec<String>| {
        let parts: Vec<String> = cells
            .iter()
            .enumerate()
            .map(|(c, v)| {
                let pad = widths[c].saturating_sub(v.chars().count());
                if right[c] {
                    format!("{}{v}", " ".repeat(pad))
                } else {
                    format!("{v}{}", " ".repeat(pad))
                }
            })
            .collect();
        format!("{}\n", parts.join("  ").trim_end())
    };
    let mut s = line(head.iter().map(|h| h.to_string()).collect());
    for (i, r) in body.iter().enumerate() {
        if i + 1 == body.len() {
            let total: usize = widths.iter().sum::<usize>() + 2 * (widths.len() - 1);
            s.push_str(&format!("{}\n", "-".repeat(total)));
        }
        s.push_str(&line(r.clone()));
    }
    s
}

/// `1234567` → `1,234,567`.
pub use snip_core::util::group_digits as thousands;

#[cfg(test)]
mod tests {
    use super::thousands;

    #[test]
    fn groups_thousands() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
