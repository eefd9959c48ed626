//! The crate's error type.

use crate::arguments::ArgumentError;

/// Everything that can go wrong in this crate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A dialect name that [`Dialect::from_str`](crate::Dialect) does not know.
    #[error(
        "unknown schema dialect {name:?}; expected one of: openai, openai-strict, anthropic, gemini, xai, permissive"
    )]
    UnknownDialect {
        /// The name as given.
        name: String,
    },
    /// Tool-call arguments that could not be decoded.
    #[error(transparent)]
    Arguments(#[from] ArgumentError),
}

/// `Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
