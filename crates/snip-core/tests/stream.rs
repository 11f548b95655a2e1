//! The streaming compressor: bounded output, the error line kept, markers that point at
//! the right original lines and bytes, repeats collapsed across windows.

use proptest::prelude::*;
use snip_core::marker;
use snip_core::stream::{StreamCompressor, WINDOW};
use snip_core::Config;

fn run(input: &[u8], chunk: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut s = StreamCompressor::new(&Config::default());
    for c in input.chunks(chunk) {
        s.push(c, &mut out).unwrap();
    }
    s.finish(&mut out).unwrap();
    out
}

fn log(lines: usize, error_at: usize) -> Vec<u8> {
    let mut v = Vec::new();
    for i in 1..=lines {
        if i == error_at {
            v.extend_from_slice(b"error[E0308]: mismatched types in the middle\n");
        } else {
            v.extend_from_slice(format!("compiling unit {i} of {lines}\n").as_bytes());
        }
    }
    v
}

#[test]
fn long_log_is_bounded_and_keeps_the_error() {
    let input = log(400_000, 200_000);
    assert!(input.len() > 4 * WINDOW);
    let out = run(&input, 64 * 1024);
    assert!(
        out.len() < Config::default().max_bytes + 2048,
        "{} bytes",
        out.len()
    );
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("compiling unit 1 of 400000\n"));
    assert!(text.ends_with("compiling unit 400000 of 400000\n"));
    assert!(text.contains("error[E0308]: mismatched types in the middle\n"));
    // Each gap marker's lines and bytes name exactly the original lines it replaced.
    let starts: Vec<usize> = std::iter::once(0)
        .chain(memchr::memchr_iter(b'\n', &input).map(|i| i + 1))
        .collect();
    let mut gaps = 0;
    for m in text.lines().filter_map(marker::parse) {
        let (a, b) = m.lines.unwrap();
        let (s, e) = m.bytes.unwrap();
        assert_eq!(s as usize, starts[a as usize - 1], "{m:?}");
        assert_eq!(e as usize, starts[b as usize], "{m:?}");
        assert!(m.not_retained);
        gaps += 1;
    }
    assert_eq!(gaps, 2);
}

#[test]
fn chunking_does_not_change_the_result() {
    let input = log(200_000, 150_000);
    assert_eq!(run(&input, 1 << 20), run(&input, 7_777));
}

#[test]
fn repeats_collapse_across_windows_with_original_line_numbers() {
    let mut input = b"start\n".to_vec();
    input.extend_from_slice(&b"GET /healthz 200\n".repeat(300_000));
    input.extend_from_slice(b"done\n");
    let out = String::from_utf8(run(&input, 100_000)).unwrap();
    assert!(out.contains("GET /healthz 200\n[snip: previous line repeated 299999 more times · repeat-collapse · lines 3-300001"), "{out}");
    assert!(out.ends_with("done\n"));
}

#[test]
fn a_short_stream_is_printed_whole_after_lossless_rules() {
    let input = b"a 10%\ra 50%\ra 100%\nok\n";
    let out = run(input, 3);
    assert!(
        out.starts_with(b"a 100%\nok\n"),
        "{}",
        String::from_utf8_lossy(&out)
    );
}

#[test]
fn a_single_huge_line_is_cut_into_bounded_pieces() {
    let input = vec![b'x'; 3 * 4 * 1024 * 1024 + 5];
    let out = run(&input, 1 << 20);
    assert!(
        out.len() < Config::default().max_bytes + 2048,
        "{}",
        out.len()
    );
}

/// Diffs and JSON documents that span lines pass through byte for byte (eliding lines
/// would change the diff or break the JSON); JSON Lines are elided by whole lines.
#[test]
fn diffs_and_multiline_json_pass_through_whole() {
    let mut diff =
        b"diff --git a/big.txt b/big.txt\n--- a/big.txt\n+++ b/big.txt\n@@ -1,90000 +1,90000 @@\n"
            .to_vec();
    for i in 0..90_000 {
        diff.extend_from_slice(format!("-old line {i}\n+new line {i}\n").as_bytes());
    }
    assert!(diff.len() > 2 * WINDOW);
    assert_eq!(run(&diff, 64 * 1024), diff);

    let mut json = b"{\n  \"packages\": [\n".to_vec();
    for i in 0..60_000 {
        json.extend_from_slice(
            format!("    {{\"name\": \"pkg-{i}\", \"ok\": true}},\n").as_bytes(),
        );
    }
    json.extend_from_slice(b"    {\"name\": \"last\", \"ok\": true}\n  ]\n}\n");
    assert!(json.len() > 2 * WINDOW);
    let out = run(&json, 64 * 1024);
    assert_eq!(out, json);
    serde_json::from_slice::<serde_json::Value>(&out).expect("still JSON");

    let mut lines = Vec::new();
    for i in 0..60_000 {
        lines.extend_from_slice(format!("{{\"event\": \"tick\", \"n\": {i}}}\n").as_bytes());
    }
    let out = run(&lines, 64 * 1024);
    assert!(
        out.len() <= Config::default().max_bytes + 512,
        "{}",
        out.len()
    );
    for l in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        if !l.starts_with(b"[snip:") {
            serde_json::from_slice::<serde_json::Value>(l).expect("each kept line is JSON");
        }
    }
}

/// The middle of one long line, whose head and tail are shown, is marked as bytes of
/// that line, not as a whole line.
#[test]
fn a_cut_long_line_is_marked_as_bytes_of_that_line() {
    let mut input = vec![b'x'; 6 * 1024 * 1024];
    input.push(b'\n');
    let out = run(&input, 64 * 1024);
    let text = String::from_utf8_lossy(&out);
    let m = text
        .lines()
        .find(|l| l.starts_with("[snip:"))
        .expect("the marker on a line of its own");
    assert!(m.contains("bytes elided from line 1"), "{m}");
    assert!(marker::parse(m).is_some(), "{m}");
}

/// One progress bar redrawn 1.5 million times on a single line (25 MB, cut into
/// windows inside the line): a terminal shows the last frame, and so does the stream.
#[test]
fn a_redraw_line_longer_than_a_window_keeps_only_the_last_frame() {
    let mut input = Vec::new();
    for i in 0..1_500_000 {
        input.extend_from_slice(format!("\rprogress {i:07}").as_bytes());
    }
    input.push(b'\n');
    let out = String::from_utf8(run(&input, 1 << 20)).unwrap();
    assert_eq!(
        out,
        "progress 1499999\n[snip: removed 1499999 redrawn progress frames · terminal-render · lossless]\n"
    );
}

/// Frames of a cut line are compared whole: a window never ends by keeping a frame
/// the next one draws over, and pieces of one line never count as repeated lines.
#[test]
fn cut_frames_are_compared_whole_and_pieces_are_not_repeats() {
    let frame = "a".repeat(1023);
    let mut input = format!("{frame}\r").repeat(20_000).into_bytes();
    input.extend_from_slice(b"final\n");
    let out = String::from_utf8(run(&input, 64 * 1024)).unwrap();
    assert_eq!(
        out,
        format!(
            "{frame}\nfinal\n[snip: removed 19999 redrawn progress frames · terminal-render · lossless]\n"
        )
    );
    // A 20 MB line without redraws: elided as bytes of that line, no repeat marker.
    let mut input = vec![b'a'; 20_000_000];
    input.extend_from_slice(b"\nend\n");
    let out = String::from_utf8(run(&input, 1 << 20)).unwrap();
    assert!(!out.contains("repeated"), "{}", &out[..out.len().min(400)]);
    assert!(
        out.ends_with("\nend\n"),
        "{}",
        &out[out.len().saturating_sub(200)..]
    );
    let markers: Vec<_> = out.lines().filter_map(marker::parse).collect();
    assert_eq!(markers.len(), 1, "{markers:?}");
    assert_eq!(markers[0].lines, Some((1, 1)));
}

/// Pushes `input` in chunks of the sizes in `sizes` (cycled), with windows of `window`
/// bytes and lines cut at `line_cut` bytes.
fn run_sized(input: &[u8], sizes: &[usize], window: usize, line_cut: usize) -> Vec<u8> {
    run_pieces(input, sizes, window, line_cut, false)
}

/// As [`run_sized`], but every other piece is read into the stream's own input space
/// ([`StreamCompressor::input_space`] and [`StreamCompressor::commit`]) as a reader
/// would, cut to that space.
fn run_read(input: &[u8], sizes: &[usize], window: usize, line_cut: usize) -> Vec<u8> {
    run_pieces(input, sizes, window, line_cut, true)
}

fn run_pieces(
    input: &[u8],
    sizes: &[usize],
    window: usize,
    line_cut: usize,
    read: bool,
) -> Vec<u8> {
    let cfg = Config::with_budget(2048);
    let mut s = StreamCompressor::with_window(&cfg, window, line_cut);
    let mut out = Vec::new();
    let mut rest = input;
    let mut k = 0;
    while !rest.is_empty() {
        let mut n = sizes[k % sizes.len()].clamp(1, rest.len());
        if read && k % 2 == 0 {
            let space = s.input_space();
            assert!(space.len() >= window, "{} bytes of space", space.len());
            n = n.min(space.len());
            space[..n].copy_from_slice(&rest[..n]);
            s.commit(n, &mut out).unwrap();
        } else {
            s.push(&rest[..n], &mut out).unwrap();
        }
        rest = &rest[n..];
        k += 1;
    }
    s.finish(&mut out).unwrap();
    out
}

fn stream_line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => "[a-z ]{0,40}".prop_map(|s| format!("{s}\n").into_bytes()),
        1 => Just(b"error: failed to build\n".to_vec()),
        1 => Just(b"same line\n".to_vec()),
        1 => "[a-z]{0,30}".prop_map(|s| format!("{s}\r{s}x\r").into_bytes()),
        1 => Just(b"\x1b[31mred\x1b[0m \x1b[1A\x1b[2K".to_vec()),
        1 => "[a-z]{200,900}".prop_map(String::into_bytes),
        1 => Just("\u{00e9}\u{4e2d}\r\n".as_bytes().to_vec()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Issue 16 item 11: the same input in any chunking gives the same output, with
    /// windows and line cuts small enough that the inputs cross many of them.
    #[test]
    fn any_chunking_gives_the_same_output(
        lines in prop::collection::vec(stream_line(), 0..300),
        sizes in prop::collection::vec(1usize..5000, 1..8),
        window in 64usize..2048,
        cut_factor in 1usize..4,
    ) {
        let input = lines.concat();
        let line_cut = window * cut_factor;
        let whole = run_sized(&input, &[input.len().max(1)], window, line_cut);
        let chunked = run_sized(&input, &sizes, window, line_cut);
        prop_assert_eq!(String::from_utf8_lossy(&chunked), String::from_utf8_lossy(&whole));
        let read = run_read(&input, &sizes, window, line_cut);
        prop_assert_eq!(String::from_utf8_lossy(&read), String::from_utf8_lossy(&whole));
    }
}

/// The stream with windows of `window` bytes (lines cut at twice that), pushed in
/// chunks of 97 bytes.
fn stream_windowed(input: &[u8], cfg: &Config, window: usize) -> Vec<u8> {
    let mut s = StreamCompressor::with_window(cfg, window, window * 2);
    let mut out = Vec::new();
    for c in input.chunks(97) {
        s.push(c, &mut out).unwrap();
    }
    s.finish(&mut out).unwrap();
    out
}

/// A rendering snip made (it ends with the lossless footer) fed back through the
/// stream, as a pipe past the in-memory cap does, comes out unchanged: the stream
/// decides at its end, on the whole input as the pipeline does, that `repeat-collapse`
/// already ran, and a run of identical rows the first pass left whole stays whole
/// (rows saved and restored with the cursor, `ESC 7` … `ESC 8`, then written again).
/// The stream's own output passes it unchanged too.
#[test]
fn a_rendering_snip_made_passes_the_stream_unchanged() {
    let x = "127.0.0.1 - - [29/Nov/2026 23:50:12] \"GET /healthz HTTP/1.1\" 200 - from cache\n";
    let y = "worker 3: waiting for the next job from the queue (poll 250 ms, backoff 2x)\n";
    let mut left_whole = 0;
    for n in 3..8 {
        let input = format!(
            "starting the server on port 8080\n\x1b7{}listening\n{}\x1b8{}done\n",
            x.repeat(n),
            y.repeat(n + 1),
            x.repeat(n)
        );
        for cfg in [Config::default(), Config::with_budget(1024)] {
            let once = snip_core::compress(input.as_bytes(), &cfg, &mut snip_core::NoStore).output;
            left_whole += usize::from(String::from_utf8_lossy(&once).contains(&y.repeat(3)));
            for window in [64, 512, WINDOW] {
                let again = stream_windowed(&once, &cfg, window);
                assert!(
                    again == once,
                    "{n} rows, budget {}, window {window}:\n--- in memory\n{}\n--- streamed\n{}",
                    cfg.max_bytes,
                    String::from_utf8_lossy(&once),
                    String::from_utf8_lossy(&again)
                );
                let streamed = stream_windowed(input.as_bytes(), &cfg, window);
                assert_eq!(
                    String::from_utf8_lossy(&stream_windowed(&streamed, &cfg, window)),
                    String::from_utf8_lossy(&streamed),
                    "{n} rows, budget {}, window {window}",
                    cfg.max_bytes
                );
            }
        }
    }
    assert!(left_whole > 0, "no run was left whole by the first pass");
}

/// The stream's output and summary with windows of `window` bytes (lines cut at twice
/// that), pushed in chunks of the sizes in `sizes` (cycled), with stretches of plain
/// lines put in the gap in one step (`fast`) or every line fed one by one.
fn stream_both_ways(
    input: &[u8],
    cfg: &Config,
    window: usize,
    sizes: &[usize],
    fast: bool,
) -> (Vec<u8>, snip_core::stream::StreamSummary) {
    let mut s = StreamCompressor::with_window(cfg, window, window * 2);
    s.set_fast(fast);
    let mut out = Vec::new();
    let (mut rest, mut k) = (input, 0);
    while !rest.is_empty() {
        let n = sizes[k % sizes.len()].clamp(1, rest.len());
        s.push(&rest[..n], &mut out).unwrap();
        rest = &rest[n..];
        k += 1;
    }
    let (summary, stretched) = s.finish_counted(&mut out).unwrap();
    STRETCHED.with(|c| c.set(c.get() + stretched));
    (out, summary)
}

thread_local! {
    /// Lines the stream put in the gap in stretches, over the runs of this thread.
    static STRETCHED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn assert_same_both_ways(input: &[u8], cfg: &Config, window: usize, sizes: &[usize], what: &str) {
    let (fast, fast_summary) = stream_both_ways(input, cfg, window, sizes, true);
    let (slow, slow_summary) = stream_both_ways(input, cfg, window, sizes, false);
    assert!(
        fast == slow,
        "{what}, budget {}, window {window}, pushes {sizes:?}:\n--- per line\n{}\n--- fast\n{}",
        cfg.max_bytes,
        String::from_utf8_lossy(&slow),
        String::from_utf8_lossy(&fast)
    );
    assert_eq!(fast_summary, slow_summary, "{what}");
}

/// Lines of a log for the stream's elided middle: plain lines, salient lines of many
/// shapes, runs of identical lines (long enough to cross windows), long lines (cut
/// into pieces), progress redraws, colour, a cursor move up, CRLF endings, blank lines.
fn middle_line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => "[a-z0-9 ]{0,60}".prop_map(|s| format!("{s}\n").into_bytes()),
        2 => ("[a-z]{1,12}", 0u32..5).prop_map(|(w, k)| {
            let word = ["error", "failed", "warning", "not found", "panicked"][k as usize];
            format!("{w} {word}: in {w}.rs\n").into_bytes()
        }),
        2 => ("[a-z ]{0,30}", 1usize..40).prop_map(|(s, n)| format!("{s}\n").repeat(n).into_bytes()),
        1 => "[a-z]{200,2500}".prop_map(|s| format!("{s}\n").into_bytes()),
        1 => "[a-z]{0,20}".prop_map(|s| format!("{s} 10%\r{s} 50%\r{s} done\n").into_bytes()),
        1 => Just(b"\x1b[32mok\x1b[0m compiled\n".to_vec()),
        1 => Just(b"row\n\x1b[1Aagain\n".to_vec()),
        1 => "[a-z]{0,20}".prop_map(|s| format!("{s}\r\n").into_bytes()),
        1 => Just(b"\n".to_vec()),
        1 => "[a-z]{1,20}".prop_map(|s| format!("[snip: previous line repeated 3 more times · repeat-collapse · lines 1-3 · lossless]\n{s}\n").into_bytes()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Issue 19: the stream puts stretches of plain lines in its elided middle into the
    /// gap in one step; the output and the summary are those of feeding every line
    /// one by one, in any window size, budget and chunking.
    #[test]
    fn stretches_in_the_gap_give_the_per_line_output(
        lines in prop::collection::vec(middle_line(), 50..1500),
        tail in prop::option::of("[a-z]{0,30}"),
        budget in 300usize..6000,
        window in 128usize..16384,
        sizes in prop::collection::vec(1usize..20000, 1..4),
    ) {
        let mut input = lines.concat();
        if let Some(t) = tail {
            input.extend_from_slice(t.as_bytes());
        }
        let cfg = Config::with_budget(budget);
        assert_same_both_ways(&input, &cfg, window, &sizes, "generated");
    }
}

/// Issue 19: on every capture of `fixtures/corpus` and `fixtures/corpus-new`, the
/// stream's output with stretches put in the gap in one step is the per-line path's,
/// at windows of 4,096, 64, 300 bytes and 1 MiB, budgets of 2,000, 6,000 bytes and the
/// default, pushed in 1,000, 7, 333 and 65,536 bytes.
#[test]
fn stretches_in_the_gap_give_the_per_line_output_on_the_corpus() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut files = 0;
    for dir in ["corpus", "corpus-new"] {
        let mut paths: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e != "md" && e != "tsv"))
            .collect();
        paths.sort();
        for p in paths {
            let input = std::fs::read(&p).unwrap();
            files += 1;
            let mut combo = 0;
            for window in [4096, 64, 300, 1 << 20] {
                for cfg in [
                    Config::with_budget(2000),
                    Config::with_budget(6000),
                    Config::default(),
                ] {
                    let sizes = [[1000], [7], [333], [65536]][combo % 4];
                    combo += 1;
                    assert_same_both_ways(&input, &cfg, window, &sizes, &p.display().to_string());
                }
            }
        }
    }
    assert!(files >= 70, "{files} captures");
    // The stretches were taken (these lines did not go one by one).
    let stretched = STRETCHED.with(std::cell::Cell::get);
    assert!(stretched > 40_000, "{stretched} lines in stretches");
}

/// Issue 19: in a long log's elided middle, lines are put in the gap in stretches, not
/// fed one by one through the repeat run, the tail ring and the gap (~440
/// instructions a line): here all but the lines of the head, the tail, the error, the
/// repeat runs and a few at each window's end (at most 2%).
#[test]
fn a_long_logs_middle_goes_to_the_gap_in_stretches() {
    let mut input = Vec::new();
    for i in 0..400_000 {
        if i % 1000 == 999 {
            input.extend_from_slice(b"    Compiling serde v1.0.219\n".repeat(5).as_slice());
        }
        if i == 200_000 {
            input.extend_from_slice(b"error[E0308]: mismatched types in the middle\n");
        }
        input.extend_from_slice(format!("worker {} processed item {i}\n", i % 7).as_bytes());
    }
    let mut s = StreamCompressor::new(&Config::default());
    let mut out = Vec::new();
    for c in input.chunks(64 * 1024) {
        s.push(c, &mut out).unwrap();
    }
    let (_, stretched) = s.finish_counted(&mut out).unwrap();
    let lines = memchr::memchr_iter(b'\n', &input).count() as u64;
    assert!(
        stretched * 50 >= lines * 49,
        "{stretched} of {lines} lines in stretches"
    );
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("error[E0308]: mismatched types in the middle\n"));
    assert_eq!(text.matches("elided").count(), 2, "{text}");
}

/// A run of identical lines only in the elided middle, put in the gap within a
/// stretch, still counts in the summary (`repeat-collapse` collapsed it), as it does
/// fed line by line.
#[test]
fn a_run_put_in_the_gap_in_a_stretch_counts_as_collapsed() {
    let mut input = log(20_000, 0);
    let mut middle = b"GET /healthz 200\n".repeat(4);
    middle.extend_from_slice(&log(20_000, 0));
    input.extend_from_slice(&middle);
    for window in [4096, 1 << 20] {
        assert_same_both_ways(&input, &Config::default(), window, &[65536], "one run");
        let (_, summary) = stream_both_ways(&input, &Config::default(), window, &[65536], true);
        assert!(summary.rules.contains(&"repeat-collapse"), "{summary:?}");
    }
}
