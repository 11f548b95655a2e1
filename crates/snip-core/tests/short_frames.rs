//! A short line of a few `\r` frames (issue 17, item 6): the rendered text plus the
//! lossless footer was longer than the input, so the net-win gate passed the glued
//! frames to the model raw. Such a run is now rendered without a footer; glued frames
//! never reach the model.

use snip_core::{compress, Config, NoStore};

fn out(input: &[u8]) -> Vec<u8> {
    compress(input, &Config::default(), &mut NoStore).output
}

#[test]
fn a_short_run_of_frames_is_rendered_without_a_footer() {
    let cases: &[(&[u8], &[u8])] = &[
        (
            b"Rebasing (1/3)\rRebasing (2/3)\rRebasing (3/3)\rSuccessfully rebased and updated refs/heads/main.\n",
            b"Rebasing (3/3)\nSuccessfully rebased and updated refs/heads/main.\n",
        ),
        (b"get 10%\rget 50%\rget 100%\n", b"get 100%\n"),
        (b"a 1/2\ra 2/2\n", b"a 2/2\n"),
    ];
    for (input, want) in cases {
        let o = out(input);
        assert_eq!(
            String::from_utf8_lossy(&o),
            String::from_utf8_lossy(want),
            "for {:?}",
            String::from_utf8_lossy(input)
        );
        assert!(!o.contains(&b'\r'), "glued frames left");
        assert_eq!(out(&o), o, "a second pass changes nothing");
    }
}

#[test]
fn frames_in_any_short_text_never_reach_the_model_glued() {
    // Every prefix that ends on a whole frame (before a `\r` or a `\n`, or at the
    // end), with text around the frames. (A frame cut short whose stem differs from
    // the one under it is kept on its own line: rendering saves nothing there.)
    let base = b"step\nRebasing (1/3)\rRebasing (2/3)\rRebasing (3/3)\rdone\nend\n";
    let cuts =
        (0..base.len()).filter(|&i| i + 1 == base.len() || matches!(base[i + 1], b'\r' | b'\n'));
    for cut in cuts {
        let input = &base[..=cut];
        let o = out(input);
        // A `\r` left in the output is only a lone final one (no frame after it yet)
        // or a line ending.
        let glued = o.windows(2).any(|w| w[0] == b'\r' && w[1] != b'\n');
        assert!(
            !glued,
            "glued frames for {:?}: {:?}",
            String::from_utf8_lossy(input),
            String::from_utf8_lossy(&o)
        );
    }
}
