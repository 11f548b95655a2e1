//! Glue of the `snip-bench` program: configuration from the environment, printing,
//! the exit status (as the `snip` program does it).

use anyhow::Result;
use snip_core::Config;
use std::io::Write as _;
use std::process::ExitCode;

/// The core configuration from `SNIP_*` environment variables.
pub fn core_config() -> Result<Config> {
    Config::from_lookup(|k| std::env::var(k).ok()).map_err(|e| anyhow::anyhow!("{e}"))
}

/// Writes `text` to stdout and flushes it (never `println!`, which panics when stdout
/// is closed).
///
/// # Errors
/// Writing or flushing stdout failed.
pub fn print(text: impl AsRef<[u8]>) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_ref())?;
    out.flush()?;
    Ok(())
}

/// The exit status of a command's result: its own, 0 when it failed only because
/// stdout went away (broken pipe), else 2 after one line on stderr
/// (`<program>: <error>`).
pub fn finish(result: Result<ExitCode>, program: &str) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => {
            let broken_pipe = e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            });
            if broken_pipe {
                return ExitCode::SUCCESS;
            }
            eprintln!("{program}: {e:#}");
            ExitCode::from(2)
        }
    }
}
