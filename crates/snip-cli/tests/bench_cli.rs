//! `snip bench` runs the `snip-bench` program (built by the `snip-bench` crate) found
//! next to `snip` or on PATH, passing its arguments and exit status through. The
//! program itself is tested in `crates/snip-bench/tests/program.rs`.

mod common;

use std::process::Command;

/// `snip bench` runs the `snip-bench` program installed next to `snip`; without it,
/// one line says what is missing and how to install it.
#[test]
fn bench_without_its_program_says_how_to_install_it() {
    let dir = tempfile::tempdir().unwrap();
    let lone = dir.path().join("snip");
    common::place_executable(&std::fs::read(common::SNIP).unwrap(), &lone);
    let out = Command::new(&lone)
        .args(["bench", "--iterations", "1"])
        .env("PATH", dir.path())
        .output()
        .expect("snip runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("snip-bench") && err.contains("scripts/install.sh"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

/// The arguments reach `snip-bench` unread, and its exit status is `snip bench`'s: a
/// stand-in `snip-bench` next to a copy of `snip` prints what it was given.
#[cfg(unix)]
#[test]
fn bench_passes_arguments_and_status_through() {
    let dir = tempfile::tempdir().unwrap();
    let snip = dir.path().join("snip");
    common::place_executable(&std::fs::read(common::SNIP).unwrap(), &snip);
    let program = dir.path().join("snip-bench");
    common::place_executable(b"#!/bin/sh\nprintf '%s|' \"$@\"\nexit 3\n", &program);
    let out = Command::new(&snip)
        .args(["bench", "--help", "--iterations", "1", "a b"])
        .env("PATH", "/usr/bin:/bin")
        .output()
        .expect("snip runs");
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "--help|--iterations|1|a b|"
    );
}
