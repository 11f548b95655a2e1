//! Round trips: paged restores concatenate to the original, on every corpus capture
//! and on random inputs; `lines` and `search` answer with the right lines.

mod common;

use common::{corpus, lines_of, page_all, temp_store};
use proptest::prelude::*;
use snip_store::restore::sha256_hex;
use snip_store::{Align, Encoding, RestoreMode, RestoreRequest, RestoreStatus};

#[test]
fn every_corpus_capture_pages_back_exactly() {
    let (_d, store) = temp_store(|_| {});
    for (name, original) in corpus() {
        let id = store.put(&original).unwrap();
        assert_eq!(
            store.put(&original).unwrap(),
            id,
            "{name}: put is idempotent"
        );
        let utf8 = std::str::from_utf8(&original).is_ok();
        let sha = sha256_hex(&original);
        for cap in [None, Some(65536), Some(777)] {
            let mut req = RestoreRequest::bytes(&id, 0, None);
            req.max_bytes = cap;
            let (got, pages) = page_all(&store, req);
            assert!(
                got == original,
                "{name}: bytes pages (cap {cap:?}) differ from the original"
            );
            for p in &pages {
                assert_eq!(p.total_bytes, Some(original.len() as u64));
                assert_eq!(p.sha256.as_deref(), Some(sha.as_str()));
                let len = p.content_bytes().unwrap().len();
                assert!(len <= cap.unwrap_or(8192), "{name}: page over the cap");
                if utf8 {
                    assert_eq!(
                        p.encoding,
                        Some(Encoding::Utf8),
                        "{name}: page split a code point"
                    );
                }
            }
        }
        let mut req = RestoreRequest::lines(&id, 1, None);
        req.max_bytes = Some(4096);
        let (got, pages) = page_all(&store, req);
        // Lines longer than the cap are cut (the note says where the rest is), so the
        // concatenation equals the original only when every line fits.
        let longest = original
            .split(|&c| c == b'\n')
            .map(<[u8]>::len)
            .max()
            .unwrap_or(0);
        if longest < 4096 {
            assert!(
                got == original,
                "{name}: lines pages differ from the original"
            );
        } else {
            assert!(pages
                .iter()
                .any(|p| p.note.contains("longer than the response cap")));
        }
    }
}

#[test]
fn lines_mode_returns_exact_lines_with_their_endings() {
    let (_d, store) = temp_store(|_| {});
    let text = b"one\r\ntwo\n\nfour\nfive without newline";
    let id = store.put(text).unwrap();
    for (a, b) in [(1, 1), (1, 5), (2, 4), (5, 5), (3, 3)] {
        let r = store.restore(&RestoreRequest::lines(&id, a, Some(b)));
        assert_eq!(r.status, RestoreStatus::Ok);
        assert_eq!(
            r.content_bytes().unwrap(),
            lines_of(text, a, b),
            "lines {a}-{b}"
        );
        assert_eq!((r.start, r.end, r.next), (Some(a), Some(b), None));
        assert_eq!(r.total_lines, Some(5));
    }
    // An end past the last line is clamped.
    let r = store.restore(&RestoreRequest::lines(&id, 4, Some(99)));
    assert_eq!(r.end, Some(5));
}

#[test]
fn search_reports_line_numbers_context_and_pages() {
    let (_d, store) = temp_store(|_| {});
    let mut text = String::new();
    for i in 1..=2000 {
        if i % 100 == 0 {
            text.push_str(&format!("line {i}: ERROR disk full\n"));
        } else {
            text.push_str(&format!("line {i}: ok\n"));
        }
    }
    let id = store.put(text.as_bytes()).unwrap();
    let mut req = RestoreRequest::search(&id, "ERROR");
    req.context = Some(1);
    let r = store.restore(&req);
    assert_eq!(r.status, RestoreStatus::Ok);
    assert_eq!(r.total_matches, Some(20));
    let m = r.matches.clone().unwrap();
    assert_eq!(m.len(), 20);
    assert_eq!(m[0].line, 100);
    let at = m[0].byte as usize;
    assert_eq!(&text[at..at + 5], "ERROR");
    let content = r.content.unwrap();
    assert!(
        content
            .starts_with("99-line 99: ok\n100:line 100: ERROR disk full\n101-line 101: ok\n--\n"),
        "{content}"
    );
    // Paging: a small cap splits the matches; following `next` finds them all, once.
    let mut req = RestoreRequest::search(&id, "ERROR");
    req.max_bytes = Some(200);
    let mut seen = Vec::new();
    loop {
        let r = store.restore(&req);
        assert_eq!(r.status, RestoreStatus::Ok);
        assert!(r.content.as_ref().unwrap().len() <= 200);
        seen.extend(r.matches.unwrap().iter().map(|m| m.line));
        match r.next {
            Some(n) => req.start = Some(n),
            None => break,
        }
    }
    assert_eq!(seen, (1..=20).map(|k| k * 100).collect::<Vec<u64>>());
    // No match is ok with an empty list.
    let r = store.restore(&RestoreRequest::search(&id, "absent"));
    assert_eq!(r.status, RestoreStatus::Ok);
    assert_eq!(r.total_matches, Some(0));
}

/// When every line matches, the matches form one group far over the cap: each page is
/// filled with the lines that fit (a page held one line, so 5,000 matches took 5,000
/// calls), and following `next` shows every match once.
#[test]
fn search_pages_are_full_when_matches_are_adjacent() {
    let (_d, store) = temp_store(|_| {});
    let text: String = (1..=5000).map(|i| format!("request {i}\n")).collect();
    let id = store.put(text.as_bytes()).unwrap();
    for context in [0, 2] {
        let mut req = RestoreRequest::search(&id, "request");
        req.context = Some(context);
        req.max_bytes = Some(8192);
        let (mut seen, mut pages) = (Vec::new(), 0);
        loop {
            let r = store.restore(&req);
            assert_eq!(r.status, RestoreStatus::Ok);
            let content = r.content.unwrap();
            let m = r.matches.unwrap();
            // The cap holds the content and the match entries together.
            let used = content.len()
                + m.iter()
                    .map(|m| format!("{{\"line\":{},\"byte\":{}}},", m.line, m.byte).len())
                    .sum::<usize>();
            assert!(
                used <= 8192,
                "page {pages}: {used} bytes of content and matches"
            );
            assert_eq!(content.lines().count(), m.len(), "one line per match");
            seen.extend(m.iter().map(|m| m.line));
            pages += 1;
            match r.next {
                Some(n) => {
                    assert!(used > 8000, "page {pages}: {used} bytes");
                    req.start = Some(n);
                }
                None => break,
            }
        }
        assert_eq!(seen, (1..=5000).collect::<Vec<u64>>());
        // "N:request N\n" is 14 to 20 bytes and its entry 20 to 27: about 208 KB in
        // 8 KiB pages.
        assert!(pages <= 27, "{pages} pages");
    }
}

#[test]
fn search_finds_every_manifest_clue_in_its_capture() {
    let (_d, store) = temp_store(|_| {});
    let manifest = std::fs::read_to_string(common::corpus_dir().join("MANIFEST.tsv")).unwrap();
    let mut checked = 0;
    for row in manifest.lines().skip(1) {
        let cols: Vec<&str> = row.split('\t').collect();
        let (file, clue, contiguous) = (cols[0], cols[6], cols[12]);
        if contiguous != "yes" {
            continue;
        }
        let original = std::fs::read(common::corpus_dir().join(file)).unwrap();
        let id = store.put(&original).unwrap();
        let r = store.restore(&RestoreRequest::search(&id, clue));
        assert_eq!(r.status, RestoreStatus::Ok, "{file}");
        let first = r
            .matches
            .as_ref()
            .unwrap()
            .first()
            .unwrap_or_else(|| panic!("{file}: clue not found"));
        // The reported byte and line agree with the original.
        let at = first.byte as usize;
        assert_eq!(&original[at..at + clue.len()], clue.as_bytes(), "{file}");
        let line = original[..at].iter().filter(|&&c| c == b'\n').count() as u64 + 1;
        assert_eq!(first.line, line, "{file}");
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} clues checked");
}

#[test]
fn full_mode_only_under_the_cap() {
    let (_d, store) = temp_store(|_| {});
    let small = store.put(b"small original\n").unwrap();
    let r = store.restore(&RestoreRequest::full(&small));
    assert_eq!(r.status, RestoreStatus::Ok);
    assert_eq!(r.content.as_deref(), Some("small original\n"));
    let big = store.put(&vec![b'x'; 9000]).unwrap();
    let r = store.restore(&RestoreRequest::full(&big));
    assert_eq!(r.status, RestoreStatus::TooLarge);
    assert!(r.content.is_none());
    assert!(r.note.contains("mode=\"bytes\""), "{}", r.note);
    let mut req = RestoreRequest::full(&big);
    req.max_bytes = Some(10_000);
    assert_eq!(store.restore(&req).status, RestoreStatus::Ok);
}

#[test]
fn invalid_utf8_pages_are_byte_exact() {
    let (_d, store) = temp_store(|_| {});
    let mut original = b"caf\xe9 latin-1\n".repeat(50);
    original.extend_from_slice("héllo wörld ✓ 😀\n".repeat(30).as_bytes());
    let id = store.put(&original).unwrap();
    let mut req = RestoreRequest::bytes(&id, 0, None);
    req.max_bytes = Some(33);
    let (got, pages) = page_all(&store, req);
    assert_eq!(got, original);
    let lossy = pages
        .iter()
        .filter(|p| p.encoding == Some(Encoding::Utf8Lossy))
        .count();
    assert!(lossy > 0);
    for p in pages
        .iter()
        .filter(|p| p.encoding == Some(Encoding::Utf8Lossy))
    {
        assert!(p.content_base64.is_some());
        assert!(p.content.as_ref().unwrap().contains('\u{fffd}'));
    }
    // The JSON form carries the exact bytes too.
    let json = serde_json::to_string(&pages[0]).unwrap();
    let back: snip_store::RestoreResponse = serde_json::from_str(&json).unwrap();
    assert_eq!(back.content_bytes(), pages[0].content_bytes());
}

fn arb_original() -> impl Strategy<Value = Vec<u8>> {
    // Mixes ASCII, multi-byte UTF-8, newlines, CR and invalid bytes.
    let piece = prop_oneof![
        "[a-z ]{0,12}".prop_map(String::into_bytes),
        Just(b"\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just("é".as_bytes().to_vec()),
        Just("€".as_bytes().to_vec()),
        Just("😀".as_bytes().to_vec()),
        prop::collection::vec(any::<u8>(), 0..4),
    ];
    prop::collection::vec(piece, 0..60).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    #[test]
    fn random_originals_page_back_exactly(original in arb_original(), cap in 4usize..40, a in 0usize..400, b in 0usize..400) {
        let (_d, store) = temp_store(|_| {});
        let id = store.put(&original).unwrap();
        let len = original.len();
        let (a, b) = (a.min(len), b.min(len));
        let (a, b) = (a.min(b), a.max(b));
        let mut req = RestoreRequest::bytes(&id, a as u64, Some(b as u64));
        req.max_bytes = Some(cap);
        let (got, pages) = page_all(&store, req);
        prop_assert_eq!(&got[..], &original[a..b]);
        for p in &pages {
            prop_assert!(p.content_bytes().unwrap().len() <= cap);
            if a == b { break; }
            prop_assert!(p.end > p.start, "a page made no progress");
        }
        // Pages of valid UTF-8 never split a code point.
        if let Ok(s) = std::str::from_utf8(&original) {
            if s.is_char_boundary(a) && s.is_char_boundary(b) {
                for p in &pages {
                    prop_assert_eq!(p.encoding, Some(Encoding::Utf8));
                }
            }
        }
        // Lines paging with a cap that fits every line concatenates too.
        let longest = original.split_inclusive(|&c| c == b'\n').map(<[u8]>::len).max().unwrap_or(0);
        let mut req = RestoreRequest::lines(&id, 1, None);
        req.max_bytes = Some(longest.max(4));
        let (got, _) = page_all(&store, req);
        prop_assert_eq!(got, original.clone());
        let mode = RestoreMode::Bytes;
        prop_assert_eq!(mode, RestoreMode::default());
    }
}

/// `align: "token"`: pages still concatenate to the original, every page's range is
/// what `start`/`end` say, and no page splits a token of at most `TOKEN_MARGIN` bytes
/// (a 40-byte secret lands whole in one page whatever the cap).
#[test]
fn token_aligned_pages_keep_short_tokens_whole() {
    let (_d, store) = temp_store(|_| {});
    let secret = "sk_live_0123456789abcdefghijklmnopqrstuv";
    let mut text = String::new();
    for i in 0..400 {
        text.push_str(&format!(
            "line {i} token={secret} é{}\n",
            "x".repeat(i % 37)
        ));
    }
    // One token longer than the margin: cut where the page falls, still read once.
    text.push_str(&"L".repeat(3000));
    text.push('\n');
    let original = text.into_bytes();
    let id = store.put(&original).unwrap();
    for cap in [64usize, 100, 777, 8192] {
        let mut req = RestoreRequest::bytes(&id, 0, None);
        req.max_bytes = Some(cap);
        req.align = Some(Align::Token);
        let (got, pages) = page_all(&store, req);
        assert!(
            got == original,
            "cap {cap}: token pages differ from the original"
        );
        for p in &pages {
            let (a, b) = (p.start.unwrap() as usize, p.end.unwrap() as usize);
            assert_eq!(p.content_bytes().unwrap(), &original[a..b]);
            let c = String::from_utf8(p.content_bytes().unwrap()).unwrap();
            // Each cut either falls on a blank or inside the over-long token.
            for cut in [a, b] {
                if cut > 0 && cut < original.len() {
                    let split = !original[cut - 1].is_ascii_whitespace()
                        && !original[cut].is_ascii_whitespace();
                    assert!(
                        !split || original[cut] == b'L',
                        "cap {cap}: a cut at {cut} splits a short token"
                    );
                }
            }
            assert!(
                !c.contains("sk_live_")
                    || c.matches(secret).count() == c.matches("sk_live_").count()
            );
        }
    }
    // Without align, the same small cap cuts inside short tokens.
    let mut req = RestoreRequest::bytes(&id, 0, None);
    req.max_bytes = Some(64);
    let (_, pages) = page_all(&store, req);
    assert!(pages.iter().any(|p| {
        let cut = p.end.unwrap() as usize;
        cut < original.len()
            && !original[cut - 1].is_ascii_whitespace()
            && !original[cut].is_ascii_whitespace()
            && original[cut] != b'L'
    }));
}

/// 4 MiB of lines of varied lengths, empty ones, one longer than a page, no final
/// newline; and the number of the long line.
fn large_lines() -> (String, u64) {
    let mut text = String::new();
    let mut long_line = 0;
    let mut i = 0u64;
    while text.len() < 4 << 20 {
        if i.is_multiple_of(97) {
            text.push('\n');
        }
        let n = (i.wrapping_mul(2_654_435_761) % 300) as usize;
        text.push_str(&format!("{i} {}\n", "x".repeat(n)));
        if i == 20_000 {
            long_line = text.lines().count() as u64 + 1;
            text.push_str(&"y".repeat(20_000));
            text.push('\n');
        }
        i += 1;
    }
    text.push_str("the end, unterminated");
    (text, long_line)
}

#[test]
fn lines_pages_of_a_large_original_after_the_first_read_a_window_through_a_kept_index() {
    let (text, l) = large_lines();
    let total = text.lines().count() as u64;
    let (dir, warm) = temp_store(|_| {});
    let id = warm.put(text.as_bytes()).unwrap();
    // The first page reads the original whole (and checks it); the process keeps its
    // line index, and later pages read a window through it. Every one of them is the
    // page a store with nothing kept answers (reading the whole original).
    let opts = warm.options().clone();
    let same = |start: u64, end: Option<u64>, cap: usize| -> snip_store::RestoreResponse {
        let mut q = RestoreRequest::lines(&id, start, end);
        q.max_bytes = Some(cap);
        let r = warm.restore(&q);
        let cold = snip_store::Store::open(&opts).unwrap().restore(&q);
        assert_eq!(r, cold, "lines {start}..{end:?} cap {cap}");
        r
    };
    for (start, end, cap) in [
        (1, None, 8192),
        (2, Some(3), 8192),
        (63, Some(70), 100),
        (64, None, 8192),
        (65, None, 8192),
        (129, Some(129), 4),
        (l - 1, None, 8192),
        (l, None, 8192),
        (l, Some(l), 65536),
        (l + 1, None, 8192),
        (total - 1, None, 8192),
        (total, None, 8192),
        (total + 1, None, 8192),
        (5, Some(4), 8192),
        (0, None, 8192),
    ] {
        same(start, end, cap);
    }
    let (mut at, mut back) = (Some(1), Vec::new());
    while let Some(n) = at {
        let r = same(n, None, 65536);
        assert_eq!(r.status, RestoreStatus::Ok, "{}", r.note);
        back.extend_from_slice(&r.content_bytes().unwrap());
        at = r.next;
    }
    assert_eq!(back, text.as_bytes());
    // Window only: with bytes far from the page changed (same size), a page through
    // the kept index is still served; a read of the whole original finds the damage.
    let path = dir.path().join("store/objects").join(&id);
    let mut file = std::fs::read(&path).unwrap();
    let n = file.len();
    file[n - 1000..].fill(b'z');
    std::fs::write(&path, &file).unwrap();
    let r = warm.restore(&RestoreRequest::lines(&id, 65, Some(70)));
    assert_eq!(r.status, RestoreStatus::Ok, "{}", r.note);
    assert_eq!(
        r.content_bytes().unwrap(),
        lines_of(text.as_bytes(), 65, 70)
    );
    let r = warm.restore(&RestoreRequest::search(&id, "the end"));
    assert_eq!(r.status, RestoreStatus::Error);
    assert!(r.note.contains("damaged"), "{}", r.note);
}
