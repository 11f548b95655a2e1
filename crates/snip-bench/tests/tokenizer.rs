//! o200k_base counts agree with a second, independent implementation (`bpe-openai`)
//! on every shape and every capture.

use snip_bench::{captures::FILES, shapes, tokens};

fn second_opinion(bytes: &[u8]) -> u64 {
    let text = String::from_utf8_lossy(bytes);
    bpe_openai::o200k_base().count(text.as_ref()) as u64
}

#[test]
fn counts_match_bpe_openai_on_shapes_and_captures() {
    let mut inputs: Vec<(String, Vec<u8>)> = shapes::all()
        .into_iter()
        .map(|s| (s.name.to_string(), s.input))
        .collect();
    inputs.extend(FILES.iter().map(|f| (f.file.to_string(), f.bytes.to_vec())));
    let mut total = 0;
    for (name, bytes) in &inputs {
        let ours = tokens::count(bytes);
        assert_eq!(ours, second_opinion(bytes), "{name}");
        assert!(ours > 0);
        total += ours;
    }
    assert!(
        total > 1_000_000,
        "{total} tokens over the corpus and shapes"
    );
}

#[test]
fn counts_match_on_tricky_text() {
    for text in [
        "",
        "  leading spaces and trailing   ",
        "全部完成 ✅ all downloads finished",
        "\r\n\r\n\t\x1b[31mred\x1b[0m",
        "<|endoftext|> is plain text here",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    ] {
        assert_eq!(
            tokens::count(text.as_bytes()),
            second_opinion(text.as_bytes()),
            "{text:?}"
        );
    }
}
