//! The process entry on Linux with glibc: a C `main`, which glibc's start-up calls
//! directly, in place of Rust's runtime start-up (`std::rt::lang_start`).
//!
//! That start-up costs a process as short as a hook call about 3% of its time (a
//! static program that reads stdin and writes `{}`: 0.97x with this entry, median of
//! 100 interleaved pairs; docs/benchmark.md): glibc's `pthread_getattr_np` reads and
//! parses `/proc/self/maps` to find the main thread's stack, an alternate signal stack
//! is mapped (and unmapped at exit) for the stack-overflow message, fds 0-2 are polled
//! and signal handlers set. What snip needs of it is done here instead:
//!
//! - fds 0, 1 and 2 are open: one found closed is opened on `/dev/null`, so that no
//!   file snip opens (a store object, the ledger) takes its number and receives the
//!   output;
//! - SIGPIPE is caught: a write to a closed pipe fails with `EPIPE` instead of ending
//!   snip (Rust's start-up ignores it; a caught signal, like an ignored one that std
//!   resets, is at its default in the commands `snip run` starts);
//! - a panic that reaches `main` ends the process with status 101, as Rust's start-up
//!   does, and `std::process::exit` flushes stdout.
//!
//! `std::env::args` is filled by glibc's call of std's init-array function, not by
//! `lang_start`. Not kept: the "has overflowed its stack" message of the main thread
//! (an overflow still ends the process, with SIGSEGV), and the thread's name `main` in
//! a panic's message (`<unnamed>`).
use std::ffi::{c_char, c_int};
use std::process::ExitCode;

/// The program's entry, called by glibc's `__libc_start_main`.
#[allow(unsafe_code)] // `no_mangle`: the program's one `main` symbol (the linker rejects two)
#[no_mangle]
extern "C" fn main(_argc: c_int, _argv: *const *const c_char) -> c_int {
    standard_fds_open();
    // See the module docs.
    crate::catch_signal(signal_hook::consts::SIGPIPE);
    let code = std::panic::catch_unwind(crate::run).map_or(101, status_of);
    std::process::exit(code)
}

/// Opens `/dev/null` on each of fds 0, 1 and 2 that is closed, in order: `open`
/// returns the lowest free number, which is that fd once the ones below it are open.
fn standard_fds_open() {
    use std::os::fd::IntoRawFd as _;
    let closed = [
        rustix::io::fcntl_getfd(std::io::stdin()).is_err(),
        rustix::io::fcntl_getfd(std::io::stdout()).is_err(),
        rustix::io::fcntl_getfd(std::io::stderr()).is_err(),
    ];
    for _ in closed.iter().filter(|&&c| c) {
        let null = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/null");
        // Kept open for the life of the process. Failing, the fd stays closed, as
        // under Rust's start-up (which then aborts): writes to it fail.
        let _ = null.map(|f| f.into_raw_fd());
    }
}

/// The number `code` exits with (0-255): `ExitCode` has no stable accessor, but
/// compares equal to the `ExitCode::from(u8)` it was made from.
fn status_of(code: ExitCode) -> c_int {
    (0..=255u8)
        .find(|&k| ExitCode::from(k) == code)
        .map_or(1, c_int::from)
}
