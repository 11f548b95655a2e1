//! Box-drawn output (issue 17, "outputs no one here has seen"): a rich-style traceback
//! padded with spaces to a fixed width inside `│ … │` borders, and tables drawn with
//! `┃`, `│`, `║` or `|` whose cells are padded. Inputs are built here, not copied from a
//! capture.
//!
//! The chosen handling (docs/markers.md, "Box-drawn text"; docs/contract.md, guarantee 1):
//! no rendering step rewrites the padding. Over the budget, `shape-fold` masks runs of
//! spaces (the padding, whatever its width), numbers and name columns, so the lines of
//! a box are one shape and a run of them folds to its first and last lines and one
//! marker; the borders, the first and last frames and the exception line after the box
//! stay. Under the budget a box passes through unchanged. Every output here is checked
//! with the accounting checker (kept bytes and marker ranges tile the original, every
//! restore returns its range) and compressed again to check it changes nothing.

use proptest::prelude::*;
use snip_testkit::accounted_and_idempotent;

const BUDGETS: [usize; 3] = [4_000, 12_000, 24_576];

/// `text` padded with spaces to `width` columns (characters) between two borders.
fn boxed(left: &str, text: &str, width: usize, right: &str) -> String {
    let pad = width.saturating_sub(text.chars().count());
    format!("{left}{text}{}{right}\n", " ".repeat(pad))
}

/// A rich-style traceback: `frames` frames, each a location line, a blank row and
/// three numbered source lines (the failing one marked `❱`) inside a 120-column box,
/// then the exception line under the box.
fn rich_traceback(frames: usize) -> String {
    let inner = 116;
    let mut s = String::new();
    let title = " Traceback (most recent call last) ";
    let side = (inner + 2 - title.chars().count()) / 2;
    let rest = inner + 2 - title.chars().count() - side;
    s.push_str(&format!(
        "╭{}{title}{}╮\n",
        "─".repeat(side),
        "─".repeat(rest)
    ));
    for f in 0..frames {
        let line = 40 + f * 7;
        s.push_str(&boxed(
            "│ ",
            &format!("/srv/billing/handlers/step_{f:03}.py:{line} in settle_batch_{f}"),
            inner,
            " │",
        ));
        s.push_str(&boxed("│ ", "", inner, " │"));
        for k in 0..3 {
            let gutter = if k == 1 { "❱" } else { " " };
            s.push_str(&boxed(
                "│ ",
                &format!(
                    "{gutter} {:>4} │     ledger_{f}.post(amount=row[{k}], batch=batch_{f})",
                    line - 1 + k
                ),
                inner,
                " │",
            ));
        }
        s.push_str(&boxed("│ ", "", inner, " │"));
    }
    s.push_str(&format!("╰{}╯\n", "─".repeat(inner + 2)));
    s.push_str("ZeroDivisionError: division by zero in settle_batch_last\n");
    s
}

/// A table with a heavy header (`┃`) and `border` between padded cells: a name column,
/// a number column and a status column, `rows` rows, one of them failed.
fn table(rows: usize, border: &str) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "┏{}┳{}┳{}┓\n",
        "━".repeat(42),
        "━".repeat(10),
        "━".repeat(12)
    ));
    s.push_str("┃ package                                  ┃ size     ┃ status     ┃\n");
    s.push_str(&format!(
        "┡{}╇{}╇{}┩\n",
        "━".repeat(42),
        "━".repeat(10),
        "━".repeat(12)
    ));
    for r in 0..rows {
        let name = format!(
            "vendor/lib-{}/module_{r}.py",
            ["core", "io", "net", "ui"][r % 4]
        );
        let status = if r == rows / 2 { "FAILED" } else { "ok" };
        s.push_str(&format!(
            "{border} {name:<40} {border} {:>8} {border} {status:<10} {border}\n",
            (r * 7919) % 150_000
        ));
    }
    s.push_str(&format!(
        "└{}┴{}┴{}┘\n",
        "─".repeat(42),
        "─".repeat(10),
        "─".repeat(12)
    ));
    s.push_str(&format!("{rows} rows, 1 failed\n"));
    s
}

fn shape_folds(out: &str) -> usize {
    out.lines()
        .filter(|l| l.starts_with("[snip: ") && l.contains(" · shape-fold · "))
        .count()
}

/// Over the budget, the traceback box folds: its borders, its first and last frames
/// and the exception line stay, and the padded frame lines in between are one fold
/// (their padding's width does not split the run). Accounted for and idempotent at
/// every budget.
#[test]
fn a_padded_traceback_box_folds_between_its_first_and_last_frames() {
    let input = rich_traceback(60);
    assert!(input.len() > 24_576, "{} bytes", input.len());
    let outs =
        accounted_and_idempotent(input.as_bytes(), BUDGETS).unwrap_or_else(|e| panic!("{e}"));
    for (out, budget) in outs.iter().zip(BUDGETS) {
        let out = String::from_utf8(out.clone()).expect("utf-8");
        assert!(
            out.len() <= budget,
            "budget {budget}: {} bytes\n{out}",
            out.len()
        );
        assert!(shape_folds(&out) >= 1, "budget {budget}: no fold\n{out}");
        for clue in [
            "Traceback (most recent call last)",
            "step_000.py:40 in settle_batch_0 ",
            "step_059.py:453 in settle_batch_59 ",
            "╰──",
            "ZeroDivisionError: division by zero in settle_batch_last",
        ] {
            assert!(
                out.contains(clue),
                "budget {budget}: {clue:?} missing\n{out}"
            );
        }
        // Kept box lines are whole: padding and the closing border as printed.
        for line in out.lines().filter(|l| l.starts_with("│ ")) {
            assert!(
                line.ends_with(" │"),
                "budget {budget}: cut box line {line:?}"
            );
            assert_eq!(line.chars().count(), 120, "budget {budget}: {line:?}");
        }
    }
}

/// A box-drawn table with padded cells, in each border style: over the budget its
/// rows fold between the first and last, the header and the bottom border stay, and
/// the failed row (a salient word) stays as a line of its own.
#[test]
fn a_padded_table_folds_its_rows_and_keeps_the_failed_one() {
    for border in ["│", "┃", "║", "|"] {
        let input = table(900, border);
        assert!(input.len() > 24_576, "{} bytes", input.len());
        let outs =
            accounted_and_idempotent(input.as_bytes(), BUDGETS).unwrap_or_else(|e| panic!("{e}"));
        for (out, budget) in outs.iter().zip(BUDGETS) {
            let out = String::from_utf8(out.clone()).expect("utf-8");
            assert!(
                out.len() <= budget,
                "{border} {budget}: {} bytes\n{out}",
                out.len()
            );
            assert!(shape_folds(&out) >= 1, "{border} {budget}: no fold\n{out}");
            for clue in [
                "┃ package ",
                "vendor/lib-core/module_0.py ",
                "vendor/lib-ui/module_899.py ",
                "module_450.py",
                "FAILED",
                "└──",
                "900 rows, 1 failed",
            ] {
                assert!(
                    out.contains(clue),
                    "{border} {budget}: {clue:?} missing\n{out}"
                );
            }
        }
    }
}

/// Under the budget a box is returned byte for byte: its padding is not rewritten
/// (no lossless step changes box-drawn text, so outputs under the budget stay
/// byte-stable for prompt caches).
#[test]
fn a_box_under_the_budget_is_unchanged() {
    for input in [rich_traceback(8), table(40, "│")] {
        assert!(input.len() < 24_576);
        let outs =
            accounted_and_idempotent(input.as_bytes(), [24_576]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(outs[0], input.as_bytes());
    }
}

/// Random boxed content: cells of random words padded to a random width between one of
/// the border characters, with random blank rows and a random exception line after the
/// box. Every output is accounted for, deterministic, idempotent and never longer than
/// the input; over the budget it ends within it plus one marker line's room.
fn boxed_text() -> impl Strategy<Value = (String, usize)> {
    let word = prop::sample::select(vec![
        "alpha",
        "beta",
        "x",
        "value",
        "42",
        "0x1f",
        "self.run()",
        "/srv/a.py",
        "é",
        "─",
        "❱",
        "error",
        "ok",
        "",
    ]);
    let row = prop::collection::vec(word, 0..8);
    (
        prop::sample::select(vec!["│", "┃", "║", "|"]),
        20usize..140,
        prop::collection::vec(row, 1..400),
        prop::sample::select(vec![1_024usize, 2_000, 4_000, 12_000]),
        any::<bool>(),
    )
        .prop_map(|(border, width, rows, budget, crlf)| {
            let nl = if crlf { "\r\n" } else { "\n" };
            let mut s = format!("╭{}╮{nl}", "─".repeat(width + 2));
            for words in rows {
                let line = boxed(
                    &format!("{border} "),
                    &words.join(" "),
                    width,
                    &format!(" {border}"),
                );
                s.push_str(line.trim_end_matches('\n'));
                s.push_str(nl);
            }
            s.push_str(&format!("╰{}╯{nl}", "─".repeat(width + 2)));
            s.push_str(&format!("RuntimeError: boxed content failed{nl}"));
            (s, budget)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn boxed_content_is_accounted_for_and_idempotent((input, budget) in boxed_text()) {
        let outs = accounted_and_idempotent(input.as_bytes(), [budget]);
        prop_assert!(outs.is_ok(), "{}", outs.unwrap_err());
        let out = &outs.unwrap()[0];
        prop_assert!(out.len() <= input.len());
        if input.len() > budget {
            prop_assert!(
                String::from_utf8_lossy(out).contains("RuntimeError: boxed content failed"),
                "{}",
                String::from_utf8_lossy(out)
            );
        }
    }
}
