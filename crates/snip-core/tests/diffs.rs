//! Diffs reach the model byte-identical in every format a tool prints them: unified,
//! context, normal and combined (`diff --cc`, a merge's conflicts), in colour or not,
//! with escapes in their lines or not (issue 16, item 9).

use snip_core::{compress, Config, NoStore};

/// A budget small enough that any rule would shorten these inputs if it ran.
fn small() -> Config {
    Config {
        max_bytes: 2_000,
        ..Config::default()
    }
}

fn assert_untouched(name: &str, input: &[u8]) {
    let o = compress(input, &small(), &mut NoStore);
    assert!(
        o.output == input,
        "{name}: diff changed ({} bytes in, {} out)",
        input.len(),
        o.output.len()
    );
}

/// `n` changed lines of the same text (repeat-collapse would fold them) and a long
/// run of context (elision would cut it).
fn body(n: usize) -> Vec<String> {
    (0..n).map(|_| "same line again".to_string()).collect()
}

const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const CYAN: &str = "\x1b[36m";
const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

#[test]
fn normal_diff_in_colour_is_untouched() {
    // `diff --color=always old new`: the change command is coloured too.
    let mut s = String::new();
    for h in 0..40 {
        s += &format!("{CYAN}{}c{}{RESET}\n", h * 100 + 2, h * 100 + 2);
        for l in body(20) {
            s += &format!("{RED}< {l}{RESET}\n");
        }
        s += "---\n";
        for l in body(20) {
            s += &format!("{GREEN}> {l} changed{RESET}\n");
        }
    }
    assert_untouched("normal, colour", s.as_bytes());
}

#[test]
fn context_diff_in_colour_is_untouched() {
    let mut s = format!(
        "{BOLD}*** old.txt\t2026-12-01 15:35:06 +0000{RESET}\n\
         {BOLD}--- new.txt\t2026-12-01 15:35:06 +0000{RESET}\n"
    );
    for h in 0..40 {
        s += "***************\n";
        s += &format!("{CYAN}*** {},20 ****{RESET}\n", h * 100 + 1);
        for l in body(20) {
            s += &format!("{RED}! {l}{RESET}\n");
        }
        s += &format!("{CYAN}--- {},20 ----{RESET}\n", h * 100 + 1);
        for l in body(20) {
            s += &format!("{GREEN}! {l} changed{RESET}\n");
        }
    }
    assert_untouched("context, colour", s.as_bytes());
}

#[test]
fn plain_diffs_with_escapes_in_their_lines_are_untouched() {
    // The escapes are in the files compared, not colour from the tool.
    let mut normal = String::new();
    let mut context = String::from("*** a.log\n--- b.log\n***************\n*** 1,800 ****\n");
    for h in 0..40 {
        normal += &format!("{}c{}\n", h * 100 + 2, h * 100 + 2);
        for l in body(20) {
            normal += &format!("< {RED}{l}{RESET}\n");
        }
        normal += "---\n";
        for l in body(20) {
            normal += &format!("> {GREEN}{l}{RESET}\n");
        }
    }
    for l in body(800) {
        context += &format!("! \x1b[2K{l}\r\n");
    }
    assert_untouched("normal, escapes inside", normal.as_bytes());
    assert_untouched("context, escapes inside", context.as_bytes());
}

fn combined(colour: bool) -> String {
    let (b, c, r) = if colour {
        (BOLD, CYAN, RESET)
    } else {
        ("", "", "")
    };
    let mut s = String::new();
    for f in 0..10 {
        s += &format!("{b}diff --cc src/f{f}.txt{r}\n{b}index 1234567,89abcde..0000000{r}\n");
        s += &format!("{b}--- a/src/f{f}.txt{r}\n{b}+++ b/src/f{f}.txt{r}\n");
        s += &format!("{c}@@@ -1,3 -1,3 +1,83 @@@{r}\n");
        s += "  a\n++<<<<<<< HEAD\n";
        for l in body(40) {
            s += &format!(" +{l}\n");
        }
        s += "++=======\n";
        for l in body(40) {
            s += &format!("+ {l}\n");
        }
        s += "++>>>>>>> feature\n  z\n";
    }
    s
}

#[test]
fn combined_diffs_are_untouched() {
    assert_untouched("combined", combined(false).as_bytes());
    assert_untouched("combined, colour", combined(true).as_bytes());
    // `git diff --combined` names itself the long way.
    let long = combined(false).replace("diff --cc ", "diff --combined ");
    assert_untouched("combined, long header", long.as_bytes());
    // A merge's conflicts alone, as `git diff` prints them with no `diff` line above
    // (a hunk cut out of a longer output).
    let bare = combined(false);
    let from = bare.find("--- a/").unwrap();
    assert_untouched("combined, from its file header", &bare.as_bytes()[from..]);
}
