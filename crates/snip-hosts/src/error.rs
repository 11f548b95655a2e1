//! The error of the installers and configuration edits: what failed, and why (the
//! underlying error as [`std::error::Error::source`]).

use std::path::PathBuf;

/// What an installer or a configuration edit could not do.
///
/// `Display` prints the outermost message only; the cause, when there is one, is the
/// error's [`source`](std::error::Error::source) (`{:#}` through `anyhow` prints the
/// whole chain, `outer: inner`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A configuration file snip will not edit (it does not parse, or a value has an
    /// unexpected type); the file was left untouched.
    #[error(
        "refusing to edit {}: {why}. The file was left untouched; fix it (or move it \
         away) and run the command again.",
        path.display()
    )]
    Refused {
        /// The file.
        path: PathBuf,
        /// Why, in a few words.
        why: String,
    },
    /// A step failed (reading, writing, creating a directory…): what was being done,
    /// with the cause as its source.
    #[error("{context}")]
    Context {
        /// What was being done, e.g. `reading /home/me/.claude/settings.json`.
        context: String,
        /// Why it failed.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// A request that cannot be carried out as asked (no `HOME`, a scope the host does
    /// not have, a file snip did not write…), in one sentence.
    #[error("{0}")]
    Invalid(String),
    /// An I/O error with no further context.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A JSON error with no further context.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// The result of the installers and configuration edits.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Adds what was being done to a failure (as `anyhow::Context` does), giving an
/// [`Error::Context`], or an [`Error::Invalid`] for a missing `Option` value.
pub(crate) trait Context<T> {
    /// The failure, with `context` as its message.
    fn context(self, context: impl Into<String>) -> Result<T>;
    /// The failure, with the message `f` builds (only on failure).
    fn with_context<C: Into<String>>(self, f: impl FnOnce() -> C) -> Result<T>;
}

impl<T, E: std::error::Error + Send + Sync + 'static> Context<T> for std::result::Result<T, E> {
    fn context(self, context: impl Into<String>) -> Result<T> {
        self.map_err(|e| Error::Context {
            context: context.into(),
            source: Box::new(e),
        })
    }
    fn with_context<C: Into<String>>(self, f: impl FnOnce() -> C) -> Result<T> {
        self.map_err(|e| Error::Context {
            context: f().into(),
            source: Box::new(e),
        })
    }
}

impl<T> Context<T> for Option<T> {
    fn context(self, context: impl Into<String>) -> Result<T> {
        self.ok_or_else(|| Error::Invalid(context.into()))
    }
    fn with_context<C: Into<String>>(self, f: impl FnOnce() -> C) -> Result<T> {
        self.ok_or_else(|| Error::Invalid(f().into()))
    }
}

/// Returns early with an [`Error::Invalid`] built by `format!`.
macro_rules! bail {
    ($($arg:tt)*) => {
        return Err($crate::error::Error::Invalid(format!($($arg)*)))
    };
}
pub(crate) use bail;
