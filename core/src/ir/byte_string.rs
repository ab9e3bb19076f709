//! `Str`: the byte string every name and text field of the IR is made of.
//!
//! ONNX declares names as protobuf `string`, but real models carry names that are not valid
//! UTF-8 and onnx loads them. `Str` keeps the exact bytes (so re-encoding is lossless) and
//! offers UTF-8 views for everything that displays or compares names as text.
//!
//! Short texts (nearly every name, op type and domain) are stored inline; longer ones are a
//! shared `Bytes`, a slice of the memory map they were decoded from. Inline names cost no
//! reference count: a `Bytes` slice of a shared buffer bumps one atomic counter when made,
//! cloned and dropped, and with several names per node those atomics were an eighth of
//! `onnx check` on a 20,000-node model.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};

use bytes::Bytes;

/// The longest text kept inline (so that `Str` is no bigger than `Bytes`).
const INLINE: usize = 22;

#[derive(Clone)]
pub struct Str(Repr);

#[derive(Clone)]
enum Repr {
    Inline { len: u8, bytes: [u8; INLINE] },
    Shared(Bytes),
}

/// Byte equality that never hands `memcmp` an empty slice. An empty slice's pointer is
/// dangling (`Bytes::new()`, `String::new()`), and glibc's AVX-512 `memcmp` does a masked
/// load from it even for length 0: the fault suppression is slow enough per comparison to
/// have once made a fifth of `onnx check` (empty domains and omitted inputs compare often).
///
/// Names are short, so those up to 16 bytes are compared inline with two overlapping
/// loads from each end (no library call at all); longer ones go to `memcmp`.
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    let word = |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().unwrap_or_default());
    let half = |s: &[u8], at: usize| u32::from_le_bytes(s[at..at + 4].try_into().unwrap_or_default());
    match n {
        0 => true,
        // Positions 0, n/2 and n-1 cover every byte of a 1-, 2- or 3-byte name.
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4),
        8..=16 => word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8),
        _ => a == b,
    }
}

impl PartialEq for Str {
    #[inline]
    fn eq(&self, other: &Str) -> bool {
        same_bytes(self.as_bytes(), other.as_bytes())
    }
}

impl Eq for Str {}

impl PartialOrd for Str {
    fn partial_cmp(&self, other: &Str) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Str {
    fn cmp(&self, other: &Str) -> std::cmp::Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl Hash for Str {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // As `[u8]` hashes, so that lookups through `Borrow<[u8]>` find the same entries.
        self.as_bytes().hash(state);
    }
}

impl Default for Str {
    fn default() -> Self {
        Str::new()
    }
}

impl Str {
    pub const fn new() -> Self {
        Str(Repr::Inline { len: 0, bytes: [0; INLINE] })
    }

    /// Short texts are copied inline (the `Bytes` is let go); longer ones keep the `Bytes`.
    pub fn from_bytes(bytes: Bytes) -> Self {
        match Str::inline(&bytes) {
            Some(s) => s,
            None => Str(Repr::Shared(bytes)),
        }
    }

    /// The bytes `range` of `buffer`: copied inline when short, else a slice sharing the
    /// buffer (no copy, and no reference count taken for short texts).
    pub fn from_buffer(buffer: &Bytes, range: std::ops::Range<usize>) -> Self {
        // A short text with a full inline width of buffer after its start is copied as a
        // fixed-size block (two moves, not a `memcpy` call of variable length: that call
        // was a tenth of decoding a graph). The bytes past its length are whatever follows
        // in the buffer; nothing reads them (`as_bytes` stops at the length).
        if range.len() <= INLINE
            && let Some(window) = buffer.get(range.start..range.start + INLINE)
            && let Ok(bytes) = <[u8; INLINE]>::try_from(window)
        {
            return Str(Repr::Inline { len: range.len() as u8, bytes });
        }
        match Str::inline(&buffer[range.clone()]) {
            Some(s) => s,
            None => Str(Repr::Shared(buffer.slice(range))),
        }
    }

    fn inline(text: &[u8]) -> Option<Str> {
        let mut bytes = [0; INLINE];
        bytes.get_mut(..text.len())?.copy_from_slice(text);
        Some(Str(Repr::Inline { len: text.len() as u8, bytes }))
    }

    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Repr::Shared(b) => b,
        }
    }

    pub fn into_bytes(self) -> Bytes {
        match self.0 {
            Repr::Inline { .. } => Bytes::copy_from_slice(self.as_bytes()),
            Repr::Shared(b) => b,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Inline { len, .. } => usize::from(*len),
            Repr::Shared(b) => b.len(),
        }
    }

    /// The text, when the bytes are valid UTF-8.
    pub fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(self.as_bytes()).ok()
    }

    /// The text with invalid bytes shown as `\xNN` escapes: for messages and listings, where
    /// a lossy replacement character would hide which byte was wrong.
    pub fn escaped(&self) -> String {
        match self.as_str() {
            Some(s) => s.to_owned(),
            None => self.as_bytes().escape_ascii().to_string(),
        }
    }
}

impl From<&str> for Str {
    fn from(s: &str) -> Self {
        Str::from(s.as_bytes())
    }
}

impl From<String> for Str {
    fn from(s: String) -> Self {
        Str::from_bytes(Bytes::from(s))
    }
}

impl From<Bytes> for Str {
    fn from(b: Bytes) -> Self {
        Str::from_bytes(b)
    }
}

impl From<&[u8]> for Str {
    fn from(b: &[u8]) -> Self {
        Str::inline(b).unwrap_or_else(|| Str(Repr::Shared(Bytes::copy_from_slice(b))))
    }
}

impl Borrow<[u8]> for Str {
    fn borrow(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl PartialEq<str> for Str {
    fn eq(&self, other: &str) -> bool {
        same_bytes(self.as_bytes(), other.as_bytes())
    }
}

impl PartialEq<&str> for Str {
    fn eq(&self, other: &&str) -> bool {
        same_bytes(self.as_bytes(), other.as_bytes())
    }
}

impl fmt::Display for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.as_str() {
            Some(s) => f.write_str(s),
            None => write!(f, "{}", self.as_bytes().escape_ascii()),
        }
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.as_str() {
            Some(s) => fmt::Debug::fmt(s, f),
            None => write!(f, "b\"{}\"", self.as_bytes().escape_ascii()),
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
    fn inline_and_shared_texts_behave_alike() {
        use std::collections::HashMap;
        assert!(std::mem::size_of::<Str>() <= std::mem::size_of::<Bytes>());
        let buffer = Bytes::from((0..64u8).map(|i| b'a' + i % 26).collect::<Vec<u8>>());
        for len in 0..40usize {
            let text = &buffer[3..3 + len];
            let forms = [
                Str::from_bytes(buffer.slice(3..3 + len)),
                Str::from_buffer(&buffer, 3..3 + len),
                Str::from(text),
                Str::from(Bytes::copy_from_slice(text)),
                Str::from(String::from_utf8(text.to_vec()).unwrap_or_default()),
            ];
            let table: HashMap<Str, usize> = [(forms[0].clone(), len)].into();
            for s in &forms {
                assert_eq!((s.as_bytes(), s.len(), s.is_empty()), (text, len, len == 0));
                assert_eq!(s, &forms[0]);
                assert_eq!(s.cmp(&forms[0]), std::cmp::Ordering::Equal);
                assert_eq!(s.clone().into_bytes(), text);
                // Found by itself and by its bytes (`Borrow<[u8]>` hashes alike).
                assert_eq!((table.get(s), table.get(text)), (Some(&len), Some(&len)));
            }
        }
        // Long texts share the buffer they come from.
        let long = Str::from_buffer(&buffer, 0..40);
        assert_eq!(long.clone().into_bytes().as_ptr(), buffer.as_ptr());
        let (ab, abc, b) = (Str::from("ab"), Str::from("abc"), Str::from("b"));
        assert!(ab < abc && b > abc && ab.cmp(&ab) == std::cmp::Ordering::Equal);
    }

    #[test]
    fn short_and_long_names_compare_byte_for_byte() {
        // Every length around the inline cases, with a difference at every position.
        for len in 0..40usize {
            let a: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(same_bytes(&a, &a.clone()), "{len}");
            for at in 0..len {
                let mut b = a.clone();
                b[at] ^= 0x20;
                assert!(!same_bytes(&a, &b), "length {len}, difference at {at}");
            }
            assert!(!same_bytes(&a, &a[..len.saturating_sub(1)]) || len == 0);
        }
    }

    #[test]
    fn utf8_compares_with_str() {
        let name = Str::from("conv_1");
        assert_eq!(name, "conv_1");
        assert_eq!(name.as_str(), Some("conv_1"));
    }
}
