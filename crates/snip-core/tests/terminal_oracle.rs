//! `terminal-render` against a terminal emulator (the `vt100` crate): for progress
//! output a terminal would show the same way under snip's rules, the lines snip keeps
//! are the rows the terminal shows.
//!
//! snip's rules and a terminal agree when every redraw of a line shares its stem and
//! is at least as wide as the one before (a terminal then shows the last redraw whole;
//! snip keeps the last frame), and when cursor moves inside a frame stay within what the
//! frame has drawn (snip draws each frame into an emptied row; a terminal keeps the
//! cells a frame skips). The generator keeps to that; what differs on purpose (text
//! written between redraws kept on a line of its own, shorter last frames) is in
//! docs/contract.md.

use proptest::prelude::*;
use snip_core::{compress, Config, NoStore};

/// One progress line: `frames` redraws of `stem` with a fixed-width count and bar,
/// some with a cursor move back over the count and a new count written there, some
/// cleared first (`ESC[2K`), some ending with `ESC[K`; the last may say `, done.`.
#[derive(Debug, Clone)]
struct Progress {
    stem: &'static str,
    steps: Vec<(u16, u8)>,
    done: bool,
    bar: bool,
}

fn progress() -> impl Strategy<Value = Progress> {
    let stems = prop::sample::select(vec![
        "get ",
        "Downloading model.bin ",
        "Receiving objects: ",
        "remote: Counting objects: ",
        "step ",
        "⠋ building crate ",
    ]);
    (
        stems,
        prop::collection::vec((0u16..=100, 0u8..8), 1..40),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(stem, mut steps, done, bar)| {
            steps.sort_by_key(|s| s.0);
            Progress {
                stem,
                steps,
                done,
                bar,
            }
        })
}

impl Progress {
    fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let last = self.steps.len() - 1;
        for (k, &(pct, style)) in self.steps.iter().enumerate() {
            if k > 0 {
                out.push(b'\r');
            }
            if style & 1 == 1 {
                out.extend_from_slice(b"\x1b[2K");
            }
            out.extend_from_slice(self.stem.as_bytes());
            if self.bar {
                let filled = usize::from(pct) / 10;
                out.push(b'|');
                out.extend_from_slice("█".repeat(filled).as_bytes());
                out.extend_from_slice(" ".repeat(10 - filled).as_bytes());
                out.extend_from_slice(b"| ");
            }
            if style & 2 == 2 && pct < 100 {
                // A count drawn, then corrected in place: back over it, write anew.
                out.extend_from_slice(format!("{:>3}%", pct / 2).as_bytes());
                out.extend_from_slice(b"\x1b[4D");
            }
            out.extend_from_slice(format!("{pct:>3}%").as_bytes());
            if k == last && self.done {
                out.extend_from_slice(b", done.");
            }
            if style & 4 == 4 {
                out.extend_from_slice(b"\x1b[K");
            }
        }
        out.push(b'\n');
        out
    }
}

/// The rows a terminal shows for `input` (a tty turns `\n` into `\r\n`), trailing
/// blanks trimmed, trailing empty rows dropped.
fn screen(input: &[u8]) -> Vec<String> {
    let mut tty = Vec::with_capacity(input.len() + 64);
    for (i, &b) in input.iter().enumerate() {
        if b == b'\n' && (i == 0 || input[i - 1] != b'\r') {
            tty.push(b'\r');
        }
        tty.push(b);
    }
    let mut p = vt100::Parser::new(200, 400, 0);
    p.process(&tty);
    let mut rows: Vec<String> = p
        .screen()
        .rows(0, 400)
        .map(|r| r.trim_end().to_string())
        .collect();
    while rows.last().is_some_and(String::is_empty) {
        rows.pop();
    }
    rows
}

/// A first line of 300 redraws, so that rendering pays for its marker and the output
/// is used however short the rest is (small results that would grow are returned as
/// they came).
fn warm_up() -> Vec<u8> {
    let mut v: Vec<u8> = (0..300)
        .flat_map(|i| format!("warm-up {i}\r").into_bytes())
        .collect();
    v.extend_from_slice(b"warm-up done\n");
    v
}

/// The lines snip keeps, without its markers, trailing blanks trimmed, trailing
/// empty lines dropped.
fn kept(input: &[u8]) -> Vec<String> {
    let o = compress(input, &Config::default(), &mut NoStore);
    assert!(o.changed, "{}", String::from_utf8_lossy(input));
    let mut lines: Vec<String> = String::from_utf8(o.output)
        .expect("UTF-8 in, UTF-8 out")
        .lines()
        .filter(|l| !l.starts_with("[snip: "))
        .map(|l| l.trim_end().to_string())
        .collect();
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    /// Progress lines between plain log lines: snip keeps what the terminal shows.
    #[test]
    fn kept_lines_are_the_terminal_rows(
        lines in prop::collection::vec(
            prop_oneof![
                3 => progress().prop_map(|p| p.bytes()),
                1 => "[a-z ]{1,30}".prop_map(|s| format!("{s}\n").into_bytes()),
            ],
            1..8,
        )
    ) {
        let input = [warm_up(), lines.concat()].concat();
        prop_assert_eq!(kept(&input), screen(&input), "{}", String::from_utf8_lossy(&input));
    }
}

/// The oracle itself: a redraw that skips cells shows the older frame there on a
/// terminal, which snip's rules (a frame drawn into an emptied row) do not; the
/// generator above never skips cells.
#[test]
fn the_oracle_sees_what_a_terminal_shows() {
    assert_eq!(screen(b"get 10%\rget 20%\n"), ["get 20%"]);
    assert_eq!(screen(b"get 100%\rget 5%\n"), ["get 5%0%"]);
    assert_eq!(screen(b"a12345b\ra\x1b[5Cb\n"), ["a12345b"]);
    let input = [warm_up(), b"a12345b\ra\x1b[5Cb\n".to_vec()].concat();
    assert_eq!(kept(&input)[1..], ["a12345b", "a     b"]);
}

/// Erasing a row (`ESC[2K`, `ESC[1K`, `ESC[K`) leaves the cursor in its column: what
/// is written next starts there, after blanks, on a terminal and in snip.
#[test]
fn an_erase_leaves_the_cursor_in_its_column() {
    for case in [
        &b"a\x1b[2Kb\n"[..],
        b"build 40%\x1b[2Kdone\n",
        b"\x1b[1mab\x1b[0m\x1b[2Kc\n",
        b"abc\x1b[2K\x1b[1Dx\n",
        b"abc\x1b[1Kx\n",
        b"abc\x1b[Kx\n",
        b"abc\x1b[2D\x1b[2Kx\n",
        b"abc\x1b[2K\rx\n",
        b"\x1b[2Kx\n",
        // A frame drawn over an older one, then the rest of the row erased: nothing of
        // the older one shows.
        b"abcdefgh\rXY\x1b[K\n",
        b"abcdefgh\rXY\x1b[2Kz\n",
        b"Downloading 99%\rDone.\x1b[K\n",
        b"\x1b[1mabcdefgh\x1b[0m\rXY\x1b[0K\n",
    ] {
        let input = [warm_up(), case.to_vec(), b"after\n".to_vec()].concat();
        assert_eq!(
            kept(&input),
            screen(&input),
            "{:?}",
            String::from_utf8_lossy(case)
        );
    }
}

/// A frame of tabs only moves the cursor and writes nothing: a terminal shows the row
/// it was drawn over, and so does snip (the plain `\r` path and the emulator, which
/// an escape in the input selects). A frame of spaces as wide as the row erases it
/// on both (the row shows empty on a terminal; snip drops it).
#[test]
fn a_frame_of_tabs_leaves_the_row_it_is_drawn_over() {
    for case in [
        &b"build ok\r\t\t\n"[..],
        b"ab\r\t\n",
        b"abc\r\t\t\t\t\n",
        b"step 3 of 9\r\t\r\t\t\n",
        b"\x1b[1mbuild\x1b[0m ok\r\t\t\n",
        b"\x1b[32mab\x1b[0m\r\t\t\t\t\n",
        b"ab\r\t \t\n",
    ] {
        let input = [warm_up(), case.to_vec(), b"after\n".to_vec()].concat();
        let shown = screen(&input);
        assert_eq!(kept(&input), shown, "{:?}", String::from_utf8_lossy(case));
        assert_ne!(shown[1], "", "{:?}", String::from_utf8_lossy(case));
    }
    for case in [
        &b"abc\r   \n"[..],
        b"ab\r\t\r  \t\n",
        b"\x1b[1mab\x1b[0m\r    \n",
    ] {
        let input = [warm_up(), case.to_vec(), b"after\n".to_vec()].concat();
        assert_eq!(screen(&input)[1..], ["", "after"], "{case:?}");
        assert_eq!(kept(&input)[1..], ["after"], "{case:?}");
    }
}

/// One step of [`moves_up_count_screen_rows`]'s inputs: a plain line, a line drawn as
/// two frames of different stems (the second at least as wide, so a terminal shows it
/// whole; snip keeps the first on a line of its own), or a move `n` rows up that
/// erases that row and writes over it, then comes back down.
#[derive(Debug, Clone)]
enum Step {
    Plain,
    Frames(usize),
    Up(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => Just(Step::Plain),
        2 => (0usize..12).prop_map(Step::Frames),
        2 => (1usize..6).prop_map(Step::Up),
    ]
}

/// The input of `steps` after the warm-up, each word numbered so that it is unique:
/// `pK` plain lines, `aK` the first frame of a two-frame line (not on a terminal's
/// screen), `dK 5%` its second, `xK` written over a row reached by moving up.
fn moves_up_input(steps: &[Step]) -> Vec<u8> {
    let mut v = warm_up();
    for (k, s) in steps.iter().enumerate() {
        match s {
            Step::Plain => v.extend_from_slice(format!("p{k}\n").as_bytes()),
            Step::Frames(extra) => {
                let first = format!("a{k}{}", "a".repeat(*extra));
                // Spaces cover what the first frame drew past the second's text.
                let second = format!("d{k} 5%");
                let pad = " ".repeat(first.len().saturating_sub(second.len()));
                v.extend_from_slice(format!("{first}\r{second}{pad}\n").as_bytes());
            }
            Step::Up(n) => {
                v.extend_from_slice(format!("\x1b[{n}A\r\x1b[2Kx{k}\x1b[{n}B\r").as_bytes());
            }
        }
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    /// Cursor moves up and down count the rows of the screen: a frame that snip keeps
    /// on a line of its own (an older frame of another stem, which the terminal drew
    /// over) is not a row the cursor stops on. Every row the terminal shows is kept,
    /// in order, and every other line kept is such an older frame.
    #[test]
    fn moves_up_count_screen_rows(steps in prop::collection::vec(step(), 1..14)) {
        let input = moves_up_input(&steps);
        let shown: Vec<String> = screen(&input).into_iter().filter(|r| !r.is_empty()).collect();
        let kept: Vec<String> = kept(&input).into_iter().filter(|r| !r.is_empty()).collect();
        let text = String::from_utf8_lossy(&input).into_owned();
        let mut at = 0;
        for row in &shown {
            let found = kept[at..].iter().position(|l| l == row);
            prop_assert!(found.is_some(), "row {:?} not kept in order: {:?} for {:?}", row, kept, text);
            at += found.unwrap() + 1;
        }
        for line in &kept {
            prop_assert!(
                shown.contains(line) || line.starts_with('a'),
                "{:?} kept but not on the screen: {:?} for {:?}", line, shown, text
            );
        }
    }
}

/// The case a terminal and snip disagreed on: moving up two rows from under a line
/// drawn as two frames of different stems erased the row above the one the terminal
/// erases (`beta` went, with no marker; the terminal loses `alpha`).
#[test]
fn a_move_up_steps_over_a_frame_kept_aside() {
    let input = [
        warm_up(),
        b"alpha\nbeta\ngamma\rdl 5%\r\x1b[2A\x1b[2Kend\n".to_vec(),
    ]
    .concat();
    assert_eq!(screen(&input)[1..], ["end", "beta", "dl 5%"]);
    assert_eq!(kept(&input)[1..], ["end", "beta", "gamma", "dl 5%"]);
}

/// A move down past the last row written reaches the terminal's blank rows: what is
/// written there goes below, and a move back up finds the rows where they were.
#[test]
fn a_move_down_past_the_last_row_reaches_blank_rows() {
    for case in [
        &b"top\n\x1b[1A\r\x1b[2Kx0\x1b[2B\r\x1b[1A\r\x1b[2Kx1\x1b[1B\r"[..],
        b"one\ntwo\x1b[3Bthree\n",
        b"one\x1b[2Btwo\x1b[1Amid\n",
    ] {
        let input = [warm_up(), case.to_vec()].concat();
        let shown: Vec<String> = screen(&input)
            .into_iter()
            .filter(|r| !r.is_empty())
            .collect();
        let kept: Vec<String> = kept(&input).into_iter().filter(|r| !r.is_empty()).collect();
        assert_eq!(kept, shown, "{:?}", String::from_utf8_lossy(case));
    }
}
