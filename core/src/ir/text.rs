//! `Str`: the byte string every name and text field of the IR is made of.
//!
//! ONNX declares names as protobuf `string`, but real models carry names that are not valid
//! UTF-8 and onnx loads them. `Str` keeps the exact bytes (so re-encoding is lossless) and
//! offers UTF-8 views for everything that displays or compares names as text. It is a shared
//! `Bytes` underneath: cloning is a reference-count bump, and names decoded from a memory map
//! point into it.

use std::borrow::Borrow;
use std::fmt;

use bytes::Bytes;

#[derive(Clone, Default, Eq, PartialOrd, Ord, Hash)]
#[allow(clippy::derived_hash_with_manual_eq)] // `eq` is byte equality, as `Hash` hashes the bytes
pub struct Str(Bytes);

/// Byte equality that never hands `memcmp` an empty slice. An empty slice's pointer is
/// dangling (`Bytes::new()`, `String::new()`), and glibc's AVX-512 `memcmp` does a masked
/// load from it even for length 0: the fault suppression costs ~70 ns per comparison, which
/// once made a fifth of `onnx check` (empty domains and omitted inputs compare often).
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && (a.is_empty() || a == b)
}

impl PartialEq for Str {
    fn eq(&self, other: &Str) -> bool {
        same_bytes(&self.0, &other.0)
    }
}

impl Str {
    pub const fn new() -> Self {
        Str(Bytes::new())
    }

    pub fn from_bytes(bytes: Bytes) -> Self {
        Str(bytes)
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    pub fn into_bytes(self) -> Bytes {
        self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The text, when the bytes are valid UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(&self.0).ok()
    }

    /// The text with invalid bytes shown as `\xNN` escapes: for messages and listings, where
    /// a lossy replacement character would hide which byte was wrong.
    pub fn escaped(&self) -> String {
        match self.as_str() {
            Some(s) => s.to_owned(),
            None => self.0.escape_ascii().to_string(),
        }
    }
}

impl From<&str> for Str {
    fn from(s: &str) -> Self {
        Str(Bytes::copy_from_slice(s.as_bytes()))
    }
}

impl From<String> for Str {
    fn from(s: String) -> Self {
        Str(Bytes::from(s))
    }
}

impl From<Bytes> for Str {
    fn from(b: Bytes) -> Self {
        Str(b)
    }
}

impl From<&[u8]> for Str {
    fn from(b: &[u8]) -> Self {
        Str(Bytes::copy_from_slice(b))
    }
}

impl Borrow<[u8]> for Str {
    fn borrow(&self) -> &[u8] {
        &self.0
    }
}

impl PartialEq<str> for Str {
    fn eq(&self, other: &str) -> bool {
        same_bytes(&self.0, other.as_bytes())
    }
}

impl PartialEq<&str> for Str {
    fn eq(&self, other: &&str) -> bool {
        same_bytes(&self.0, other.as_bytes())
    }
}

impl fmt::Display for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.as_str() {
            Some(s) => f.write_str(s),
            None => write!(f, "{}", self.0.escape_ascii()),
        }
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.as_str() {
            Some(s) => fmt::Debug::fmt(s, f),
            None => write!(f, "b\"{}\"", self.0.escape_ascii()),
        }
    }
}

impl serde::Serialize for Str {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.escaped())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_utf8_is_kept_and_escaped() {
        let name = Str::from(&b"a\xffb"[..]);
        assert_eq!(name.as_bytes(), b"a\xffb");
        assert_eq!(name.as_str(), None);
        assert_eq!(name.to_string(), "a\\xffb");
        assert_eq!(format!("{name:?}"), "b\"a\\xffb\"");
    }

    #[test]
    fn empty_names_are_equal_wherever_their_bytes_live() {
        // An empty `Bytes::new()`, an empty slice of a buffer and an empty copy must all be
        // equal to each other and to `""`, and to nothing else.
        let buffer = Bytes::from_static(b"abc");
        let empties = [Str::new(), Str::from_bytes(buffer.slice(1..1)), Str::from(""), Str::from(String::new())];
        for a in &empties {
            let text: &str = "";
            assert!(*a == text && a == &Str::from(text));
            for b in &empties {
                assert_eq!(a, b);
            }
            assert_ne!(a, &Str::from("a"));
            assert!(*a != "a");
        }
        assert!(same_bytes(b"ab", b"ab") && !same_bytes(b"ab", b"ac") && !same_bytes(b"", b"a"));
    }

    #[test]
    fn utf8_compares_with_str() {
        let name = Str::from("conv_1");
        assert_eq!(name, "conv_1");
        assert_eq!(name.as_str(), Some("conv_1"));
    }
}
