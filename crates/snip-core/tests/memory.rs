//! Memory is bounded per input byte in the terminal emulator (issue 16, item 8):
//! cursor moves that ask for columns far past a row's end (`ESC[999Cx`, 8 bytes of
//! input for ~1,000 bytes of row) once took ~130× the input.
//!
//! Measured, not timed: each case runs in a fresh copy of this test binary (so no
//! other test's memory counts), which reads its own peak resident set (`VmHWM` in
//! `/proc/self/status`) before and after one `compress` call.
#![cfg(target_os = "linux")]

use snip_core::{compress, Config, NoStore};
use std::process::Command;

/// Peak resident memory allowed per input byte: the input, the emulator's rows and
/// output, and the pipeline's copies (a few times the input each).
const PER_BYTE: usize = 24;
/// Input size of every case, bytes.
const SIZE: usize = 4 << 20;

fn vm_hwm() -> usize {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = s.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kb: usize = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

fn case(name: &str) -> Vec<u8> {
    let line: &[u8] = match name {
        "forward" => b"\x1b[999Cx\n",
        "column" => b"\x1b[999Gx\r\n",
        "position" => b"a\x1b[1;999Hx\n",
        "redraws" => b"\x1b[2K\rstep 12345 \x1b[40C[done]\n",
        _ => unreachable!(),
    };
    line.repeat(SIZE / line.len())
}

/// Peak resident bytes one `compress` of case `name` added, measured in a child.
fn peak_in_child(name: &str) -> (usize, usize) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child", "--nocapture", "--test-threads=1"])
        .env("SNIP_MEMORY_CASE", name)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.split_once("peak=").map(|(_, v)| v))
        .unwrap_or_else(|| panic!("child for {name} said: {text}"));
    let mut it = line.split(',').map(|x| x.parse::<usize>().unwrap());
    (it.next().unwrap(), it.next().unwrap())
}

/// The child: not a test on its own (without `SNIP_MEMORY_CASE` it does nothing).
#[test]
fn child() {
    let Ok(name) = std::env::var("SNIP_MEMORY_CASE") else {
        return;
    };
    let input = case(&name);
    let cfg = Config::default();
    let before = vm_hwm();
    let o = compress(&input, &cfg, &mut NoStore);
    let after = vm_hwm();
    assert!(o.output.len() <= input.len());
    println!("peak={},{}", after.saturating_sub(before), input.len());
}

#[test]
fn cursor_moves_stay_within_a_bound_per_input_byte() {
    for name in ["forward", "column", "position", "redraws"] {
        let (peak, len) = peak_in_child(name);
        assert!(
            peak <= PER_BYTE * len,
            "{name}: {peak} bytes resident for {len} of input ({}x)",
            peak / len
        );
        eprintln!(
            "{name}: {peak} bytes for {len} ({:.1}x)",
            peak as f64 / len as f64
        );
    }
}
