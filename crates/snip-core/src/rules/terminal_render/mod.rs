//! `terminal-render` — collapse redraws to the frame a terminal would show.
//!
//! **What it does.** Interprets carriage returns, backspaces and the cursor and erase
//! escapes that progress bars, spinners and live displays use (`ESC[nA/B/C/D/E/F/G`,
//! `ESC[H`/`f`, `ESC[d`, `ESC[K`/`1K`/`2K`, `ESC[J`, `ESC 7`/`ESC 8`, `ESC[s`/`ESC[u`,
//! scroll regions) over a window of rows, and keeps what a person would read.
//!
//! **Why.** A 300-step tqdm loop is ~15,000 bytes of redraws whose last frame is all a
//! terminal shows; a model reads every byte of it.
//!
//! **Semantics** (compatible with progress-squash): lines split on `\n`; a `\r` right
//! before `\n` is a line ending. A `\r` starts a new *frame* on the same row. A frame's
//! *stem* is its text before the first digit or bar glyph (`# = > | [`, U+2580–259F,
//! U+2500–257F), trimmed. When a frame ends, if its stem equals the stem of what the row
//! held (or extends it, as `… Done` ends `… 98%`), it replaces it (one frame removed); if the stems differ, the older text is kept
//! on its own line (text written between redraws is never lost). Whitespace-only frames
//! are skipped, unless they are at least as wide as the row (an erase: a terminal shows
//! nothing there); a skipped (or empty) frame that is not the first of its line counts
//! as removed. Erase escapes discard what they erase (counted as frames removed).
//! Absolute cursor positioning (`ESC[r;cH`, `ESC[rd`) from a saved position that is
//! restored later (`ESC 7` … `ESC 8`, as apt draws its `Progress:` status line) writes
//! to a status row that is shown at the end only if it is still on screen. Without a
//! saved position (`clear`'s `ESC[H`, a program placing its text), the screen's size
//! and contents are unknown: the text that follows goes on a row of its own after all
//! the text written so far, and a later cursor move up stops at that row, so no text is
//! moved or dropped.
//! SGR, OSC (incl. OSC 8 links) and mode escapes are dropped here and counted for
//! `ansi-strip`.
//!
//! **Example.** `get 10%\rget 50%\rget 100%\n` → `get 100%\n` (2 frames removed).
//!
//! **Options.** None. Output is only used when at least one frame was removed or a
//! cursor/erase escape was interpreted; otherwise the input is left as it is.

mod frames;
mod stem;
mod term;

use crate::doc::Doc;
use crate::escape::{moves_cursor, Controls};
use crate::rule::{Text, TextCounts};
use frames::render_frames;
pub(crate) use stem::{is_blank, overdrawn};
#[cfg(test)]
use term::render_term;

/// What rendering produced.
pub(crate) struct Rendered<'a> {
    pub doc: Doc<'a>,
    pub frames_removed: u64,
    /// Backspace controls rendered (what they erased or let be written over is gone).
    pub backspaces_removed: u64,
    pub escapes_removed: u64,
    /// When asked for ([`render_applicable`]'s `starts`): the byte offset where each
    /// line of the input starts (0, then each `\n` + 1), as [`RawIndex`] wants them;
    /// the render loop passes every `\n` anyway.
    ///
    /// [`RawIndex`]: crate::doc::RawIndex
    pub line_starts: Option<Vec<usize>>,
    /// The input's line feeds: each is read as one line's end (no escape holds one).
    pub newlines: u32,
}

/// Whether `input` (whose [`Controls`] are `c`) holds anything this rule interprets:
/// a frame control, or an escape that moves the cursor, erases, or saves or restores it.
fn applies_with(input: &[u8], c: Controls) -> bool {
    if c.frames() {
        return true;
    }
    if !c.escape {
        return false;
    }
    // Escapes: only cursor, erase and save/restore ones need rendering; colours and
    // links are left to `ansi-strip`.
    let mut i = 0;
    while let Some(k) = memchr::memchr(0x1b, &input[i..]) {
        i += k;
        let s = &input[i..];
        let n = crate::escape::escape_len(s);
        if moves_cursor(s, n) {
            return true;
        }
        i += n.max(1);
    }
    false
}

/// Renders `input`. `None` when nothing collapses and no cursor escape was used.
pub(crate) fn render(input: &[u8]) -> Option<Rendered<'_>> {
    render_at(input, 0)
}

/// [`render`] for a piece of a larger input whose first line is original line
/// `first_line` (0-based): the rendered lines carry original line numbers.
pub(crate) fn render_at(input: &[u8], first_line: u32) -> Option<Rendered<'_>> {
    let c = Controls::scan(input);
    if !applies_with(input, c) {
        return None;
    }
    render_applicable(input, first_line, c, false)
}

/// [`render_at`] for a caller that already knows the input holds something to render
/// (a frame control or a cursor escape) and its [`Controls`]: no second scan.
/// With `starts`, also collects [`Rendered::line_starts`] where that is free (text whose
/// only controls are `\r` and `\n`).
pub(crate) fn render_applicable(
    input: &[u8],
    first_line: u32,
    c: Controls,
    starts: bool,
) -> Option<Rendered<'_>> {
    render_applicable_in(input, first_line, c, starts, None)
}

/// [`render_applicable`], the emulator writing into `scratch`'s buffers when given.
fn render_applicable_in(
    input: &[u8],
    first_line: u32,
    c: Controls,
    starts: bool,
    scratch: Option<crate::doc::Scratch>,
) -> Option<Rendered<'_>> {
    if !c.escape && !c.backspace {
        let starts = starts.then(|| {
            let mut v = Vec::with_capacity(input.len() / 48 + 2);
            v.push(0);
            v
        });
        return render_frames(input, first_line, starts);
    }
    // No line starts from the emulator: its callers index the input themselves.
    term::render_term_in(input, first_line, scratch, c)
}

/// The lossless pass: reads the working text, rendering it as a terminal shows it when
/// it holds a frame control or a cursor escape. A text whose only controls are
/// escapes that do not move the cursor needs no emulation: the escape lexer strips
/// them all in the same pass that looks for a cursor escape (counted as `ansi-strip`'s
/// removals, which then has nothing left to do), unless the engine reads the text's
/// lines one by one ([`Text::strip_whole`] off: the stream).
pub(crate) fn pass(t: &mut Text<'_>) {
    let c = t.controls;
    if c.escape && !c.frames() {
        if !t.strip_whole {
            // Lines are stripped one by one (by `ansi-strip`) unless an escape moves
            // the cursor.
            if !applies_with(t.input, c) {
                return;
            }
        } else if let Some((text, escapes)) = crate::escape::strip_unless_cursor(t.input) {
            let lines = Doc::from_raw_at(&text, t.first_line).lines;
            t.newlines = Some(crate::doc::line_feeds(&lines));
            t.doc = Some(Doc {
                buf: std::borrow::Cow::Owned(text),
                lines,
                markers: Vec::new(),
                footer: Vec::new(),
            });
            t.counts.escapes += escapes;
            t.escapes_stripped = true;
            t.raw_offsets = escapes == 0;
            return;
        }
    }
    // Here the input holds a frame control or a cursor escape, or neither escapes nor
    // frame controls (nothing to render).
    if !(c.escape || c.frames()) {
        return;
    }
    if let Some(r) = render_applicable_in(t.input, t.first_line, c, t.want_starts, t.scratch.take())
    {
        // The emulator reads every escape and writes none: `ansi-strip` has nothing
        // left to look for.
        debug_assert!(memchr::memchr(0x1b, &r.doc.buf).is_none());
        t.escapes_stripped |= c.escape;
        t.newlines = Some(r.newlines);
        t.doc = Some(r.doc);
        t.raw_offsets = false;
        t.counts.frames += r.frames_removed;
        t.counts.backspaces += r.backspaces_removed;
        t.counts.escapes += r.escapes_removed;
        t.line_starts = r.line_starts;
    }
}

/// The receipt row: `frames_removed`, and `backspaces_removed` when there were any;
/// `None` when neither changed anything.
pub(crate) fn report(c: &TextCounts) -> Option<crate::RuleReport> {
    let (frames, backspaces) = (c.frames, c.backspaces);
    if frames == 0 && backspaces == 0 {
        return None;
    }
    let mut counts = vec![("frames_removed", frames)];
    if backspaces > 0 {
        counts.push(("backspaces_removed", backspaces));
    }
    Some(crate::RuleReport {
        id: crate::RuleId::TerminalRender,
        counts,
    })
}

#[cfg(test)]
mod tests {
    use super::stem::stem;
    use super::*;
    use crate::doc::Eol;

    fn r(input: &[u8]) -> (String, u64) {
        match render(input) {
            Some(x) => (
                String::from_utf8_lossy(&x.doc.render(None)).into_owned(),
                x.frames_removed,
            ),
            None => (String::from_utf8_lossy(input).into_owned(), 0),
        }
    }

    /// The plain-frame path gives exactly the emulator's output.
    #[test]
    fn plain_frames_agree_with_the_emulator() {
        let mut rendered = 0;
        let mut check = |input: &[u8]| {
            // The line starts collected on the way are the input's.
            if let Some(r) = render_frames(input, 0, Some(vec![0])) {
                let crate::doc::RawIndex::Full { starts, .. } = crate::doc::RawIndex::new(input)
                else {
                    unreachable!("RawIndex::new is full")
                };
                assert_eq!(r.line_starts.as_ref(), Some(&starts), "{input:?}");
            }
            let fast = render_frames(input, 7, None);
            let slow = render_term(input, 7);
            match (fast, slow) {
                (None, None) => {}
                (Some(f), Some(s)) => {
                    rendered += 1;
                    assert_eq!(f.frames_removed, s.frames_removed, "{input:?}");
                    assert_eq!(f.doc.render(None), s.doc.render(None), "{input:?}");
                    let src = |d: &Doc<'_>| -> Vec<(u32, u32, Eol)> {
                        d.lines
                            .iter()
                            .map(|l| (l.src_first, l.src_last, l.eol))
                            .collect()
                    };
                    assert_eq!(src(&f.doc), src(&s.doc), "{input:?}");
                }
                (f, s) => panic!(
                    "{input:?}: plain {:?} vs emulator {:?}",
                    f.map(|r| r.frames_removed),
                    s.map(|r| r.frames_removed)
                ),
            }
        };
        let alphabet: [&[u8]; 12] = [
            b"a",
            b"b",
            b" ",
            b"1",
            b"5%",
            b"\r",
            b"\r",
            b"\n",
            b"\r\n",
            "é".as_bytes(),
            "日".as_bytes(),
            b"get ",
        ];
        let mut next = crate::text::splitmix(0x9e37_79b9_7f4a_7c15u64);
        for _ in 0..20_000 {
            let len = (next() % 24) as usize;
            let mut input = Vec::new();
            for _ in 0..len {
                input.extend_from_slice(alphabet[(next() % alphabet.len() as u64) as usize]);
            }
            check(&input);
        }
        for case in [
            &b"a 1%\ra 2%"[..],
            b"10%\r20%\r30%",
            b"abc\r   \r\n",
            b"abc\r  \r\n",
            b"abc\r   \rX\n",
            b"\r\r\n",
            b"x\r\r\r",
            b"Downloading 10%\rERROR: disk full\rDownloading 20%\n",
        ] {
            check(case);
        }
        // And every capture of the corpus, with its escapes and backspaces removed.
        let captures = crate::text::corpus_captures();
        assert_eq!(captures.len(), 26);
        for raw in captures {
            let plain: Vec<u8> = crate::escape::strip(&raw)
                .iter()
                .copied()
                .filter(|&b| b != 0x08)
                .collect();
            check(&plain);
        }
        // Most random cases have frames to remove: the comparison is not vacuous.
        assert!(rendered > 1_000, "{rendered}");
    }

    #[test]
    fn stems() {
        assert_eq!(stem(b"Downloading 10%"), b"Downloading");
        assert_eq!(stem(b"10%"), b"");
        assert_eq!(stem("get |###".as_bytes()), b"get");
        assert_eq!(stem("x \u{2588}\u{2588} 5".as_bytes()), b"x");
        // A spinner's glyph is not part of the stem; alone, it is the stem.
        for g in [
            "|",
            "/",
            "-",
            "\\",
            "\u{280b}",
            "\u{25d0}",
            "\u{273b}",
            "\u{1f550}",
        ] {
            assert_eq!(
                stem(format!("  {g} Installing deps").as_bytes()),
                b"Installing deps"
            );
            if g != "|" {
                // `|` ends a stem as a bar's edge; the others end it as a glyph.
                let s = format!("Loading modules {g}");
                assert_eq!(stem(s.as_bytes()), b"Loading modules", "{s}");
            }
            let alone: &[u8] = if g == "|" { b"" } else { g.as_bytes() };
            assert_eq!(stem(format!("{g} ").as_bytes()), alone);
        }
    }

    #[test]
    fn progress_squash_small_cases() {
        assert_eq!(
            r(b"plain output\nwith lines\n"),
            ("plain output\nwith lines\n".into(), 0)
        );
        assert_eq!(r(b"\ronly one frame\n").1, 0);
        assert_eq!(
            r(b"Downloading 10%\rERROR: disk full\rDownloading 20%\n").1,
            0
        );
        assert_eq!(
            r(b"Downloading 10%\rDownloading 20%\rDownloading 30%\rERROR: disk full\n"),
            ("Downloading 30%\nERROR: disk full\n".into(), 2)
        );
        assert_eq!(
            r(b"step 1/3\rstep 2/3\rstep 3/3\r\nnext\r\n"),
            ("step 3/3\r\nnext\r\n".into(), 2)
        );
        assert_eq!(
            r(b"\x1b[2K\rStep 1/3\x1b[K\r\x1b[2KStep 2/3\x1b[K\r\x1b[2KStep 3/3\x1b[K\ndone\n"),
            ("Step 3/3\ndone\n".into(), 2)
        );
        assert_eq!(
            r(b"\rget |#     | 10%\rget |###   | 50%\rget |######| 100%\n"),
            ("get |######| 100%\n".into(), 2)
        );
        assert_eq!(r(b"a 1%\ra 2%"), ("a 2%".into(), 1));
        assert_eq!(r(b"10%\r20%\r30%"), ("30%".into(), 2));
    }

    #[test]
    fn multi_line_redraw_keeps_last_frame_and_log_lines() {
        let mut s = Vec::new();
        s.extend_from_slice(b"a 0%\r\nb 0%");
        for k in 1..=3 {
            s.extend_from_slice(b"\r\x1b[2K\x1b[1A\x1b[2K");
            if k == 2 {
                s.extend_from_slice(b"log: mirror switched\r\n");
            }
            s.extend_from_slice(format!("a {k}0%\r\nb {k}0%").as_bytes());
        }
        s.extend_from_slice(b"\r\ndone\r\n");
        let (out, n) = r(&s);
        assert_eq!(out, "log: mirror switched\r\na 30%\r\nb 30%\r\ndone\r\n");
        assert_eq!(n, 6);
    }

    /// Absolute positioning with no saved position to come back to (`clear`'s `ESC[H`,
    /// a program placing its text) moves no text past later text and drops none: the
    /// text after it goes on a row of its own. It was a status row shown at the end,
    /// so `clear` then a command's output came out with its first line last, and a
    /// frame drawn there over another was dropped whatever its stem.
    #[test]
    fn absolute_positioning_without_a_saved_position_keeps_order() {
        let mut s = b"\x1b[H\x1b[2Jhello\n".to_vec();
        for i in 0..20 {
            s.extend_from_slice(format!("\x1b[32mline {i}\x1b[0m\n").as_bytes());
        }
        let (out, _) = r(&s);
        assert!(out.starts_with("hello\nline 0\nline 1\n"), "{out}");
        assert!(out.contains("line 19\n"), "{out}");
        for (input, want) in [
            // A frame of another stem drawn over the text there stays, on its own line.
            (&b"\x1b[Hfoo bar\rX\n"[..], "foo bar\nX\n"),
            (b"\x1b[3;1Hrow three\r3\nafter\n", "row three\n3\nafter\n"),
            (
                b"\x1b[2J\x1b[H  building  \r[1/3]\nDONE\n",
                "  building  \n[1/3]\nDONE\n",
            ),
            // The text goes after everything written so far, not after the row the
            // cursor went up to, and a cursor move up stops there: the rows above are
            // not erased or written over (where they are on the screen is unknown).
            (
                b"p0\np1\np2\np3\nx1\x1b[2Kx3\x1b[2A\x1b[5;1fx4\n",
                "p0\np1\np2\np3\n  x3\nx4\n",
            ),
            (
                b"dl 10%\rdl 100%\nA\nB\nC\x1b[2AD\x1b[5;1HE\n",
                "dl 100%\nAD\nB\nC\nE\n",
            ),
            (
                b"one\ntwo\nthree\n\x1b[9;1H\x1b[2A\x1b[2Kfour\n",
                "one\ntwo\nthree\nfour\n",
            ),
        ] {
            assert_eq!(r(input).0, want, "{}", String::from_utf8_lossy(input));
        }
        // Text, newlines and positioning (`H`, `f`, `d`) in any order: every word is
        // shown once, in the order written.
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..2000 {
            let mut input = Vec::new();
            let mut words = Vec::new();
            for k in 0..12 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                match seed % 5 {
                    0 => input.extend_from_slice(b"\x1b[H"),
                    1 => input
                        .extend_from_slice(format!("\x1b[{};{}f", seed % 9, seed % 7).as_bytes()),
                    2 => input.extend_from_slice(format!("\x1b[{}d", seed % 5).as_bytes()),
                    3 => input.push(b'\n'),
                    _ => {}
                }
                let w = format!("w{k}x{}", seed % 1000);
                input.extend_from_slice(w.as_bytes());
                words.push(w);
                if seed.is_multiple_of(3) {
                    input.push(b'\n');
                }
            }
            let out = r(&input).0;
            let mut at = 0;
            for w in &words {
                let i = out[at..].find(w.as_str()).unwrap_or_else(|| {
                    panic!("{w} missing or out of order in {out:?} from {input:?}")
                });
                at += i + w.len();
            }
        }
    }

    #[test]
    fn status_line_is_dropped_when_erased() {
        let s = b"Unpacking x\r\n\x1b7\x1b[40;0fProgress: [ 10%]\x1b8Setting up x\r\n\x1b7\x1b[40;0fProgress: [ 20%]\x1b8done\r\n\x1b[1A\x1b[J\r\nN: notice\r\n";
        let (out, _) = r(s);
        assert!(!out.contains("Progress"), "{out}");
        assert!(
            out.contains("Setting up x") && out.contains("N: notice"),
            "{out}"
        );
    }

    /// `tput cuu1; tput el` after a newline: the cursor goes up in column 0 (the
    /// column it was in), so the erase clears the old line instead of nothing.
    #[test]
    fn cursor_up_keeps_the_column() {
        let mut s = b"start\nstatus 0\n".to_vec();
        for k in 1..=50 {
            s.extend_from_slice(format!("\x1b[1A\x1b[Kstatus {k}\n").as_bytes());
        }
        s.extend_from_slice(b"end\n");
        assert_eq!(r(&s), ("start\nstatus 50\nend\n".into(), 50));
        // Two rows at once, erased to the end of the screen.
        let mut s = b"a 0\nb 0\n".to_vec();
        for k in 1..=9 {
            s.extend_from_slice(format!("\x1b[2A\x1b[Ja {k}\nb {k}\n").as_bytes());
        }
        assert_eq!(r(&s), ("a 9\nb 9\n".into(), 18));
        // Up from the middle of a line keeps that column (the final newline then
        // only moves the cursor back down to `xy`).
        assert_eq!(r(b"abcdef\nxy\x1b[1AZ\n").0, "abZdef\nxy");
    }

    /// A status line redrawn from a saved position: restored as often as asked, to the
    /// saved column (not to the end of what was written since).
    #[test]
    fn save_and_restore_redraw_a_status_line() {
        for (save, restore) in [("\x1b7", "\x1b8"), ("\x1b[s", "\x1b[u")] {
            let mut s = format!("start\n{save}");
            for k in 0..=100 {
                s.push_str(&format!("{restore}\x1b[Kstatus {k}"));
            }
            s.push_str("\nend\n");
            assert_eq!(
                r(s.as_bytes()),
                ("start\nstatus 100\nend\n".into(), 100),
                "{save}"
            );
        }
        // Saved again around each frame.
        let mut s = String::from("start\n");
        for k in 0..=20 {
            s.push_str(&format!("\x1b7\x1b[Kstatus {k}\x1b8"));
        }
        s.push_str("\nend\n");
        assert_eq!(r(s.as_bytes()).0, "start\nstatus 20\nend\n");
    }

    #[test]
    fn spinner_with_cha_and_erase() {
        let (out, n) =
            r("⠙\x1b[1G\x1b[0K⠹\x1b[1G\x1b[0K⠸\x1b[1G\x1b[0Kadded 3 packages\r\n".as_bytes());
        assert_eq!(out, "added 3 packages\r\n");
        assert_eq!(n, 3);
    }

    #[test]
    fn spinner_glyphs_that_change_per_frame_are_one_bar() {
        // Both paths: plain `\r` frames, and frames with an erase (the emulator).
        for sep in ["\r", "\r\x1b[2K"] {
            let mut s = String::from("Installing\n");
            for (i, g) in ["|", "/", "-", "\\", "\u{280b}", "\u{280b}", "\u{2819}"]
                .iter()
                .enumerate()
            {
                s.push_str(&format!("{sep}{g} resolving {i}"));
            }
            s.push_str("\ndone\n");
            let (out, n) = r(s.as_bytes());
            assert_eq!(out, "Installing\n\u{2819} resolving 6\ndone\n", "{s:?}");
            assert_eq!(n, 6, "{s:?}");
            // The glyph at the end of the line.
            let mut s = String::from("Installing\n");
            for g in ["/", "-", "\\", "\u{280b}", "\u{2819}"] {
                s.push_str(&format!("{sep}Waiting for build {g}"));
            }
            s.push_str(&format!("{sep}Waiting for build ok\ndone\n"));
            let (out, n) = r(s.as_bytes());
            assert_eq!(out, "Installing\nWaiting for build ok\ndone\n", "{s:?}");
            assert_eq!(n, 5, "{s:?}");
        }
    }

    /// Cursor moves along the row inside a frame (`ESC[nC`, `ESC[nD`, `ESC[nG` past
    /// the first column) are part of the frame: the frames collapse to the last one.
    /// (Each move ended the frame, so every redraw was kept as a line of its own.)
    #[test]
    fn moves_along_the_row_stay_inside_the_frame() {
        let (out, n) = r(&[&b"a\x1b[5Cb\r"[..]; 2000].concat());
        assert_eq!((out.as_str(), n), ("a     b", 1999));
        let (out, n) = r(b"get 10%\x1b[3D11\rget 20%\x1b[3D21\rget 30%\x1b[8Gz\n");
        assert_eq!((out.as_str(), n), ("get 30%z\n", 2));
        let (out, n) = r(b"get 10%\x1b[3D11\rget 20%\x1b[3D21\n");
        assert_eq!((out.as_str(), n), ("get 21%\n", 1));
    }

    /// Blank and empty frames that erase nothing are skipped and counted (a spinner
    /// clearing its line with bare `\r`s was left whole, 100 KB of `\r` elided as
    /// text); the first `\r` of a line is no redraw (`\ronly one frame` stays).
    #[test]
    fn blank_redraws_are_removed_frames() {
        let cases: &[(&[u8], &str, u64)] = &[
            (&[b'\r'; 1000], "", 999),
            (&b"  \r".repeat(500), "", 499),
            (&[&[b'\r'; 500][..], b"done\n"].concat(), "done\n", 499),
            (b"get 10%\r\rget 20%\r  \rget 30%\n", "get 30%\n", 4),
            (b"\ronly one frame\n", "\ronly one frame\n", 0),
        ];
        for (input, want, frames) in cases {
            assert_eq!(r(input), (want.to_string(), *frames), "{input:?}");
            // The emulator counts the same (a colour escape sends the input to it).
            let mut coloured = b"\x1b[0m\n".to_vec();
            coloured.extend_from_slice(input);
            let t = render_term(&coloured, 0).map_or(0, |x| x.frames_removed);
            assert_eq!(t, *frames, "{input:?}");
        }
    }

    #[test]
    fn backspace_overwrites() {
        let (out, _) = r(b"abc\x08\x08X\n");
        assert_eq!(out, "aXc\n");
    }

    #[test]
    fn wide_chars_overwrite_by_cells() {
        let (out, _) = r("日本語\x1b[3GX\n".as_bytes());
        assert_eq!(out, "日X語\n");
    }
}
