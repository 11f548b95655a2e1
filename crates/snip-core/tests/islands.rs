//! Islands go to different lines: numbered copies of one error keep one island, so a
//! traceback further down the middle is still shown.

mod common;

use common::FakeStore;
use snip_core::stream::StreamCompressor;
use snip_core::{compress, Config, NoStore};

/// 100,000 lines: 100 numbered copies of one error at lines 40,001-40,100, and a
/// traceback ending in the real cause around line 70,000.
fn log() -> Vec<u8> {
    let mut v = Vec::new();
    for i in 0..100_000u32 {
        if (40_000..40_100).contains(&i) {
            v.extend_from_slice(format!("error: failure {i}\n").as_bytes());
        } else if i == 70_000 {
            v.extend_from_slice(b"Traceback (most recent call last):\n");
            v.extend_from_slice(b"  File \"job.py\", line 3, in <module>\n    run()\n");
            v.extend_from_slice(b"ValueError: the real cause\n");
        } else {
            v.extend_from_slice(format!("step {i:06} ok\n").as_bytes());
        }
    }
    v
}

/// `copies_shown`: whether every numbered copy shows (in memory, `shape-fold` folds
/// the `ok` lines, which leaves room for all of them; the reduced path too) or one
/// island holds the first (the stream engine, which does not fold).
fn check(out: &[u8], path: &str, copies_shown: bool) {
    let text = String::from_utf8_lossy(out);
    assert!(
        text.contains("error: failure 40000"),
        "{path}: the first copy"
    );
    assert_eq!(
        text.contains("error: failure 40050"),
        copies_shown,
        "{path}: copies of one shape share one island unless the rest folded"
    );
    assert!(
        text.contains("Traceback (most recent call last):"),
        "{path}"
    );
    assert!(text.contains("ValueError: the real cause"), "{path}");
    assert!(
        out.len() <= Config::default().max_bytes,
        "{path}: {}",
        out.len()
    );
}

#[test]
fn in_memory() {
    let input = log();
    let o = compress(&input, &Config::default(), &mut NoStore);
    check(&o.output, "compress", true);
}

#[test]
fn streaming() {
    let input = log();
    let config = Config::default();
    let mut s = StreamCompressor::new(&config);
    let mut out = Vec::new();
    for chunk in input.chunks(64 * 1024) {
        s.push(chunk, &mut out).expect("a Vec never fails");
    }
    s.finish(&mut out).expect("a Vec never fails");
    check(&out, "stream", false);
}

#[test]
fn reduced_path() {
    // Past 4 MiB the reduced path runs; pad the head with plain lines.
    let mut input = Vec::new();
    for i in 0..200_000u32 {
        input.extend_from_slice(format!("warm-up line {i:06} ok\n").as_bytes());
    }
    input.extend(log());
    assert!(input.len() > 4 << 20);
    let o = compress(&input, &Config::default(), &mut NoStore);
    // As in memory: every error line of the middle is a piece of the reduced
    // document, so `shape-fold` and `head-tail-elide` place the copies the same way.
    check(&o.output, "reduced", true);
}

/// With a small budget the island share fits one or two islands: a traceback's last
/// line (its exception) goes before its header and before other error lines, and a
/// line whose context does not fit is kept alone.
#[test]
fn a_small_budget_keeps_the_exception_that_ends_a_traceback() {
    for errors in [true, false] {
        let mut v = String::new();
        for i in 0..3000 {
            let level = if errors && i % 5 == 0 {
                "ERROR"
            } else {
                "INFO"
            };
            v.push_str(&format!("{level} request {i}\n"));
            if i == 1500 {
                v.push_str("Traceback (most recent call last):\n  File \"x.py\", line 1, in f\n    g()\nValueError: boom\n");
            }
        }
        let config = Config::with_budget(4096);
        let out = compress(v.as_bytes(), &config, &mut NoStore).output;
        let text = String::from_utf8_lossy(&out);
        assert!(out.len() < v.len(), "errors: {errors}");
        assert!(
            text.contains("\nValueError: boom\n"),
            "errors: {errors}\n{text}"
        );
    }
}

/// A 150-frame traceback between two long stretches of log: `traceback-keep` keeps its
/// ends, and `head-tail-elide`, with island bytes left, keeps the last frames above
/// the exception (one line of context showed only the last code line). Every marker's
/// byte range lies inside the input and covers its lines, a `traceback-keep` marker
/// at a gap's edge included (its range underflowed).
#[test]
fn a_traceback_in_the_middle_keeps_its_last_frames() {
    let mut input = String::new();
    for i in 0..3000 {
        input.push_str(&format!(
            "INFO step {i} processing batch ok with padding text\n"
        ));
    }
    input.push_str("Traceback (most recent call last):\n");
    for i in 0..150 {
        input.push_str(&format!("  File \"/app/m{i}.py\", line {i}, in f{i}\n"));
        input.push_str(&format!("    return f{}(x)\n", i + 1));
    }
    input.push_str("KeyError: missing_key\n");
    for i in 0..3000 {
        input.push_str(&format!(
            "INFO step {i} after the batch ok with padding text\n"
        ));
    }
    let config = Config::default();
    let o = compress(input.as_bytes(), &config, &mut NoStore);
    let text = String::from_utf8(o.output).unwrap();
    assert!(text.len() <= config.max_bytes);
    for i in 138..150 {
        assert!(
            text.contains(&format!("File \"/app/m{i}.py\"")),
            "frame {i}:\n{text}"
        );
    }
    assert!(text.contains("    return f150(x)\nKeyError: missing_key\n"));
    let starts: Vec<usize> = std::iter::once(0)
        .chain(input.match_indices('\n').map(|(k, _)| k + 1))
        .collect();
    for line in text.lines().filter(|l| l.starts_with("[snip:")) {
        let m = snip_core::marker::parse(line).expect("marker");
        let (Some((a, b)), Some((s, e))) = (m.lines, m.bytes) else {
            continue;
        };
        assert!(s <= e && e as usize <= input.len(), "{line}");
        assert_eq!(
            (starts[a as usize - 1] as u64, starts[b as usize] as u64),
            (s, e),
            "{line}"
        );
    }
}

/// Two islands a short line apart: the line between them is shown, not replaced by a
/// marker longer than itself.
#[test]
fn a_gap_shorter_than_a_marker_is_shown() {
    let mut input = String::new();
    for i in 0..4000 {
        if i == 2000 {
            input.push_str("error: first failure\nok\nok 2\nx\nerror: second failure\n");
        }
        input.push_str(&format!("step {i:05} done, nothing to report here\n"));
    }
    let config = Config {
        salient_context: 0,
        ..Config::default()
    };
    let o = compress(input.as_bytes(), &config, &mut NoStore);
    let text = String::from_utf8(o.output).unwrap();
    assert!(
        text.contains("error: first failure\nok\nok 2\nx\nerror: second failure\n"),
        "{text}"
    );
}

/// `lines` log lines with, at line `at` (0-based), a salient line of `long` bytes: 1,600
/// bytes of fields, then the error, then a payload.
fn log_with_long_error(lines: usize, at: usize, long: usize) -> Vec<u8> {
    let mut v = Vec::new();
    for i in 0..lines {
        if i == at {
            let mut l = String::from("2024-05-01 12:00:00 ");
            l.push_str(&"k=v ".repeat(400));
            l.push_str("ERROR request failed: payload=");
            while l.len() < long {
                l.push('x');
            }
            v.extend_from_slice(l.as_bytes());
            v.push(b'\n');
        }
        // Words that change from line to line in no repeating order (the top bits
        // of a multiplicative hash), so neither a run of one shape nor a repeated
        // block of lines folds.
        let w = [
            "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
        ];
        let h = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        v.extend_from_slice(
            format!(
                "2024-05-01 12:00:00 INFO step {i} {} {} ok, padding\n",
                w[(h >> 61) as usize],
                w[((h >> 58) & 7) as usize]
            )
            .as_bytes(),
        );
    }
    v
}

/// A salient line longer than an island's line shows as a window around its word
/// between two gap markers (it was elided with its neighbours). The markers name the
/// line; their byte ranges and the window are exactly the original bytes in order.
#[test]
fn a_long_salient_line_shows_a_window_around_its_word() {
    let input = log_with_long_error(3000, 1500, 6000);
    let config = Config::default();
    let o = compress(&input, &config, &mut FakeStore(Vec::new()));
    let text = String::from_utf8(o.output.clone()).unwrap();
    assert!(o.output.len() <= config.max_bytes);
    let at = text.find("ERROR request failed: payload=").expect(&text);
    let lines: Vec<&str> = text.lines().collect();
    let k = lines
        .iter()
        .position(|l| l.contains("ERROR request"))
        .unwrap();
    let window = lines[k];
    assert!(
        window.len() <= 1024 && window.len() >= 400,
        "{}",
        window.len()
    );
    assert!(
        !window.starts_with("2024"),
        "the word is 1,600 bytes in: {window}"
    );
    assert!(at > 0);
    // Markers on both sides, naming the long line (line 1501, 1-based): the line
    // before goes with the start of the long line (no context: a marker of its own
    // would cost more than the line).
    let before = snip_core::marker::parse(lines[k - 1]).expect(lines[k - 1]);
    let after = snip_core::marker::parse(lines[k + 1]).expect(lines[k + 1]);
    assert_eq!(before.lines.unwrap().1, 1501, "{}", lines[k - 1]);
    assert_eq!(after.lines.unwrap().0, 1501, "{}", lines[k + 1]);
    // The markers' bytes and the window tile the input; both restore by bytes.
    let (s1, e1) = before.bytes.unwrap();
    let (s2, e2) = after.bytes.unwrap();
    assert_eq!(&input[e1 as usize..s2 as usize], window.as_bytes());
    assert!(input[..e1 as usize].ends_with(b"k=v k=v "));
    assert!(input[s2 as usize..e2 as usize].starts_with(b"xxxx"));
    for (m, (s, e)) in [(&before, (s1, e1)), (&after, (s2, e2))] {
        let call = m.call.as_deref().expect("a restore call");
        assert!(
            call.ends_with(&format!("mode=\"bytes\", start={s}, end={e})")),
            "{call}"
        );
    }
    // A second pass changes nothing.
    assert!(!compress(&o.output, &config, &mut NoStore).changed);
}

/// One line of 2 MB with the error in its middle: head, window, tail, and the word.
#[test]
fn one_enormous_line_shows_its_error() {
    let mut input = vec![b'a'; 1_000_000];
    input.extend_from_slice(b" Traceback ERROR: disk full ");
    input.extend(std::iter::repeat_n(b'b', 1_000_000));
    let o = compress(&input, &Config::default(), &mut NoStore);
    let text = String::from_utf8(o.output).unwrap();
    assert!(text.contains("Traceback ERROR: disk full"), "{text}");
    assert_eq!(
        text.matches("bytes elided from line 1").count(),
        2,
        "{text}"
    );
}

/// The reduced path (inputs over 4 MiB) and the stream (over 16 MiB) keep the word of a
/// long salient line too.
#[test]
fn long_salient_lines_in_the_reduced_path_and_the_stream() {
    let config = Config::default();
    let input = log_with_long_error(100_000, 50_000, 6000);
    assert!(input.len() > 4 << 20);
    let out = compress(&input, &config, &mut NoStore).output;
    assert!(
        String::from_utf8_lossy(&out).contains("ERROR request failed"),
        "reduced"
    );
    let mut s = StreamCompressor::new(&config);
    let mut out = Vec::new();
    for chunk in input.chunks(64 * 1024) {
        s.push(chunk, &mut out).expect("a Vec never fails");
    }
    s.finish(&mut out).expect("a Vec never fails");
    assert!(
        String::from_utf8_lossy(&out).contains("ERROR request failed"),
        "stream"
    );
}

/// A gap inside one line of rendered text (escapes removed: no offsets inside the
/// original line) names the whole line and restores it by bytes: a `lines` call for a
/// 1.2 MB line could not be paged past its first page.
#[test]
fn a_cut_rendered_line_restores_by_bytes() {
    let input: Vec<u8> = (0..20_000)
        .flat_map(|i| format!("\x1b[3{}m{}\x1b[0m", i % 8, "x".repeat(50)).into_bytes())
        .chain(*b"\n")
        .collect();
    let text =
        String::from_utf8(compress(&input, &Config::default(), &mut FakeStore(Vec::new())).output)
            .unwrap();
    let gaps: Vec<_> = text
        .lines()
        .filter_map(snip_core::marker::parse)
        .filter(|m| m.rule == snip_core::RuleId::HeadTailElide.as_str())
        .collect();
    assert_eq!(gaps.len(), 1, "{text}");
    let end = input.len() as u64;
    assert_eq!(gaps[0].bytes, Some((0, end)));
    let call = gaps[0].call.as_deref().unwrap();
    assert!(
        call.ends_with(&format!("mode=\"bytes\", start=0, end={end})")),
        "{call}"
    );
}

/// A two-line block (a request and its error) repeated 1,500 times with one error of
/// another shape among them, over the budget even with every salient line kept: the
/// distinct error is shown, copies of the repeated error are shown while the salient
/// room lasts, and the rest are counted in their fold's marker with their first line
/// numbers; the output is far under the budget.
#[test]
fn copies_of_a_salient_shape_fold_with_a_count_and_a_distinct_error_stays() {
    let mut s = String::new();
    for i in 0..1500 {
        s.push_str(&format!("GET /health id={i} 404\n"));
        s.push_str(&format!("error: not found: /health (request {i})\n"));
        if i == 900 {
            s.push_str("error: 501 unsupported method POST on /api/jobs\n");
        }
    }
    let config = Config::default();
    let out = String::from_utf8(compress(s.as_bytes(), &config, &mut NoStore).output).unwrap();
    assert!(
        out.contains("error: 501 unsupported method POST on /api/jobs\n"),
        "{out}"
    );
    let shown = out.matches("error: not found").count();
    assert!(
        shown > 2 && shown * 40 < config.salient_bytes + 2 * 40 * 4,
        "{shown}\n{out}"
    );
    let counted: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("[snip:") && l.contains("salient lines among them at"))
        .collect();
    assert!(!counted.is_empty(), "{out}");
    // Every error line is shown or counted: the counts add up.
    let total: usize = counted
        .iter()
        .map(|l| {
            let k = l.find(" salient lines among them").unwrap();
            let start = l[..k].rfind(", ").unwrap() + 2;
            l[start..k].parse::<usize>().unwrap()
        })
        .sum();
    assert_eq!(shown + total, 1500, "{out}");
    assert!(out.len() < config.max_bytes / 2, "{}", out.len());
}

/// A listing of distinct paths (a `du`-like size and path per line) a little over the
/// budget: the fold gives the room under the budget back, so the output ends within
/// 80-100% of the budget, showing lines from both ends of the run. Lines that differ
/// only in numbers fold whole and end far below the budget.
#[test]
fn a_fold_of_distinct_paths_gets_the_room_back_and_numbers_only_do_not() {
    let words = [
        "alpha", "bravo", "cedar", "delta", "ember", "fjord", "gamma",
    ];
    let mut s = String::new();
    for i in 0..1000 {
        let (a, b, c) = (words[i % 7], words[(i / 7) % 7], words[(i / 49) % 7]);
        s.push_str(&format!("{}K\tnode/lib/{c}/{b}/{a}/{i}\n", 4 + i % 97));
    }
    let config = Config::default();
    assert!(s.len() > config.max_bytes);
    let out = String::from_utf8(compress(s.as_bytes(), &config, &mut NoStore).output).unwrap();
    assert!(
        out.len() <= config.max_bytes && out.len() * 10 >= config.max_bytes * 8,
        "{}",
        out.len()
    );
    let shown = out.lines().filter(|l| l.contains("\tnode/lib/")).count();
    assert!(shown > 200, "{shown}");
    assert!(out.contains("shape-fold"), "{out}");

    let mut s = String::new();
    for i in 0..3000 {
        s.push_str(&format!("test case_{i:04} ... ok ({} ms)\n", i % 37));
    }
    let out = compress(s.as_bytes(), &config, &mut NoStore).output;
    assert!(out.len() < 1024, "{}", out.len());
}
