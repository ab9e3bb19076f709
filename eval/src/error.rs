//! What a kernel (or a helper it calls) says when it cannot compute a result: a message for
//! people, exactly the text the evaluator has always printed, and the kind of failure for
//! code and tests, which match the kind instead of words of the message.
//!
//! The kinds, by what is at fault:
//! - [`ErrorKind::BadInput`]: a value the node is given (its shape, element type or
//!   contents: sizes that do not match, an index out of range, a missing input);
//! - [`ErrorKind::BadAttribute`]: one of the node's attributes is missing or holds a value
//!   the operator refuses (a subgraph attribute included);
//! - [`ErrorKind::Limit`]: what the node would make passes the run's [`crate::Limits`] or
//!   its memory budget ([`crate::memory`]), or sizes so large that they overflow;
//! - [`ErrorKind::Unsupported`]: valid by the standard, but not implemented here (a mode,
//!   an element type, an optional output).
//!
//! Kernels build them with the macros of this module, which take `format!`'s arguments
//! (`bad_input!("axis {axis} is out of range")`); a message without arguments is not
//! copied.

use std::borrow::Cow;
use std::fmt;

/// What kind of failure a kernel met (see the [module](self) for each).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    BadInput,
    BadAttribute,
    Limit,
    Unsupported,
}

/// A kernel's failure: its kind, and the message that says what is wrong (its `Display`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct KernelError {
    kind: ErrorKind,
    message: Cow<'static, str>,
}

impl KernelError {
    pub fn new(kind: ErrorKind, message: impl Into<Cow<'static, str>>) -> KernelError {
        KernelError { kind, message: message.into() }
    }

    pub fn bad_input(message: impl Into<Cow<'static, str>>) -> KernelError {
        KernelError::new(ErrorKind::BadInput, message)
    }

    pub fn bad_attribute(message: impl Into<Cow<'static, str>>) -> KernelError {
        KernelError::new(ErrorKind::BadAttribute, message)
    }

    pub fn limit(message: impl Into<Cow<'static, str>>) -> KernelError {
        KernelError::new(ErrorKind::Limit, message)
    }

    pub fn unsupported(message: impl Into<Cow<'static, str>>) -> KernelError {
        KernelError::new(ErrorKind::Unsupported, message)
    }

    /// The error `format_args!` describes (what the macros below call): a message without
    /// arguments is kept as the static text it is.
    pub fn from_args(kind: ErrorKind, args: fmt::Arguments<'_>) -> KernelError {
        match args.as_str() {
            Some(text) => KernelError::new(kind, text),
            None => KernelError::new(kind, args.to_string()),
        }
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// The same kind of error, its message rewritten (to say where it happened).
    #[must_use]
    pub fn map_message(self, f: impl FnOnce(&str) -> String) -> KernelError {
        KernelError { kind: self.kind, message: Cow::Owned(f(&self.message)) }
    }
}

/// The message alone, for code outside the kernels that reports plain text (reading value
/// files, the command line).
impl From<KernelError> for String {
    fn from(e: KernelError) -> String {
        e.message.into_owned()
    }
}

/// A [`KernelError`] of kind [`ErrorKind::BadInput`], from `format!`'s arguments.
macro_rules! bad_input {
    ($($arg:tt)+) => {
        $crate::error::KernelError::from_args($crate::error::ErrorKind::BadInput, format_args!($($arg)+))
    };
}

/// A [`KernelError`] of kind [`ErrorKind::BadAttribute`], from `format!`'s arguments.
macro_rules! bad_attribute {
    ($($arg:tt)+) => {
        $crate::error::KernelError::from_args($crate::error::ErrorKind::BadAttribute, format_args!($($arg)+))
    };
}

/// A [`KernelError`] of kind [`ErrorKind::Limit`], from `format!`'s arguments.
macro_rules! limit {
    ($($arg:tt)+) => {
        $crate::error::KernelError::from_args($crate::error::ErrorKind::Limit, format_args!($($arg)+))
    };
}

/// A [`KernelError`] of kind [`ErrorKind::Unsupported`], from `format!`'s arguments.
macro_rules! unsupported {
    ($($arg:tt)+) => {
        $crate::error::KernelError::from_args($crate::error::ErrorKind::Unsupported, format_args!($($arg)+))
    };
}

pub(crate) use {bad_attribute, bad_input, limit, unsupported};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_is_the_text_and_the_kind_stays() {
        let axis = 3;
        let e = bad_attribute!("axis {axis} is out of range");
        assert_eq!((e.kind(), e.to_string()), (ErrorKind::BadAttribute, "axis 3 is out of range".to_owned()));
        let e = limit!("too many").map_message(|m| format!("{m} (window taps)"));
        assert_eq!((e.kind(), e.message()), (ErrorKind::Limit, "too many (window taps)"));
        assert!(matches!(unsupported!("no such mode").message, Cow::Borrowed(_)));
        assert_eq!(String::from(bad_input!("input {} is missing", 2)), "input 2 is missing");
    }
}
