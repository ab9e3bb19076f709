//! The elements of a numeric tensor: either a vector the evaluator made, or a view of the
//! little-endian bytes the model was read from. An initializer of a memory-mapped model (or
//! of its external-data file) is then used where it lies, without a copy: a 500 MB model
//! does not take another 500 MB of heap to run, and its weights cost nothing to "load" until
//! a kernel reads them. The view is taken only when the bytes are aligned for the element
//! type and the machine is little-endian; otherwise the elements are copied, as before.
//!
//! Reading goes through `Deref<Target = [T]>`, so kernels see a slice either way. Writing
//! (`DerefMut`, [`Buf::as_mut_vec`]) turns a view into an owned vector first: copy on write,
//! so a kernel that updates a value in place never writes through to the model's bytes.

use std::fmt;
use std::ops::{Deref, DerefMut};

use bytemuck::Pod;
use bytes::Bytes;

/// A tensor's elements of type `T`, owned or viewed in place (see the module's comment).
pub struct Buf<T> {
    /// The elements, when not viewed.
    owned: Vec<T>,
    /// The bytes the elements are read from in place: aligned for `T`, a whole number of
    /// elements long. `owned` is empty then.
    viewed: Option<Bytes>,
    /// The bytes of `owned` counted in the process's total ([`crate::memory`]) and taken
    /// off it when the buffer is dropped or its vector leaves.
    counted: usize,
}

impl<T> Buf<T> {
    /// Counts what `owned` holds now in place of what was counted before.
    fn recount(&mut self) {
        let now = self.owned.capacity().saturating_mul(std::mem::size_of::<T>());
        if now >= self.counted {
            crate::memory::add(now - self.counted);
        } else {
            crate::memory::sub(self.counted - now);
        }
        self.counted = now;
    }
}

impl<T> Drop for Buf<T> {
    fn drop(&mut self) {
        crate::memory::sub(self.counted);
    }
}

impl<T: Pod> Buf<T> {
    /// The elements `le` holds in little-endian order: a view of the same bytes when they
    /// can be read in place, else a copy. `None` when the length is not a whole number of
    /// elements.
    pub fn from_le_bytes(le: &Bytes) -> Option<Buf<T>> {
        let width = std::mem::size_of::<T>();
        if width == 0 || !le.len().is_multiple_of(width) {
            return None;
        }
        if cfg!(target_endian = "little") && bytemuck::try_cast_slice::<u8, T>(le).is_ok() {
            return Some(Buf { owned: Vec::new(), viewed: Some(le.clone()), counted: 0 });
        }
        let mut owned: Vec<T> = vec![T::zeroed(); le.len() / width];
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut owned);
        bytes.copy_from_slice(le);
        if cfg!(target_endian = "big") {
            for element in bytes.chunks_exact_mut(width) {
                element.reverse();
            }
        }
        Some(Buf::from(owned))
    }

    /// Whether the elements are a view of bytes read from the model (no copy was made).
    pub fn is_view(&self) -> bool {
        self.viewed.is_some()
    }

    /// The elements as an owned vector, copying a view once.
    pub fn as_mut_vec(&mut self) -> &mut Vec<T> {
        if let Some(bytes) = self.viewed.take() {
            self.owned = bytemuck::cast_slice(&bytes).to_vec();
            self.recount();
        }
        &mut self.owned
    }

    pub fn as_slice(&self) -> &[T] {
        self
    }

    /// Appends `more`, copying a view first.
    pub fn extend_from_slice(&mut self, more: &[T]) {
        self.as_mut_vec().extend_from_slice(more);
        self.recount();
    }

    /// The elements as a vector: an owned one as it is, a view copied. The vector is no
    /// longer counted once it leaves.
    pub fn into_vec(mut self) -> Vec<T> {
        let owned = std::mem::take(self.as_mut_vec());
        self.recount();
        owned
    }
}

impl<T: Pod> Deref for Buf<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        match &self.viewed {
            // Checked when the view was made: the bytes are aligned and of a whole length.
            Some(bytes) => bytemuck::cast_slice(bytes),
            None => &self.owned,
        }
    }
}

impl<T: Pod> DerefMut for Buf<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.as_mut_vec()
    }
}

impl<T> From<Vec<T>> for Buf<T> {
    fn from(owned: Vec<T>) -> Buf<T> {
        let mut buf = Buf { owned, viewed: None, counted: 0 };
        buf.recount();
        buf
    }
}

impl<T> FromIterator<T> for Buf<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Buf<T> {
        Buf::from(iter.into_iter().collect::<Vec<T>>())
    }
}

impl<T: Pod> Clone for Buf<T> {
    /// A view stays a view (the bytes are shared); a vector is copied.
    fn clone(&self) -> Buf<T> {
        let mut copy = Buf { owned: self.owned.clone(), viewed: self.viewed.clone(), counted: 0 };
        copy.recount();
        copy
    }
}

impl<T: Pod + fmt::Debug> fmt::Debug for Buf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: Pod + PartialEq> PartialEq for Buf<T> {
    fn eq(&self, other: &Buf<T>) -> bool {
        **self == **other
    }
}

impl<'a, T: Pod> IntoIterator for &'a Buf<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_is_counted_while_it_lives() {
        use crate::memory::held;
        // Other tests of this binary allocate on other threads: count what this one adds
        // with buffers far larger than theirs.
        let before = held();
        let big: Buf<f64> = vec![0.0f64; 1 << 24].into();
        assert!(held() >= before + (1 << 27) - (1 << 26), "{} then {}", before, held());
        drop(big);
        assert!(held() < before + (1 << 26), "{} then {}", before, held());
    }

    fn aligned_bytes(values: &[f32]) -> Bytes {
        Bytes::from(bytemuck::cast_slice::<f32, u8>(values).to_vec())
    }

    #[test]
    fn aligned_bytes_are_viewed_in_place_and_copied_on_write() {
        let bytes = aligned_bytes(&[1.0, 2.0, 3.0]);
        // A Vec<u8> of 12 bytes from the global allocator is at least 4-aligned.
        let mut buf = Buf::<f32>::from_le_bytes(&bytes).expect("whole elements");
        assert!(buf.is_view());
        assert_eq!(buf.as_ptr().cast::<u8>(), bytes.as_ptr(), "the view is the model's bytes");
        assert_eq!(&*buf, &[1.0, 2.0, 3.0]);
        let shared = buf.clone();
        assert!(shared.is_view());
        buf[1] = 5.0;
        assert!(!buf.is_view());
        assert_eq!(&*buf, &[1.0, 5.0, 3.0]);
        assert_eq!(&*shared, &[1.0, 2.0, 3.0], "the write did not reach the bytes");
        assert_eq!(&bytes[4..8], 2.0f32.to_le_bytes());
    }

    #[test]
    fn misaligned_bytes_are_copied_and_a_partial_element_is_refused() {
        let bytes = aligned_bytes(&[1.0, 2.0, 3.0, 4.0]);
        let shifted = bytes.slice(1..13);
        let expected: Vec<f32> =
            shifted.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let buf = Buf::<f32>::from_le_bytes(&shifted).expect("whole elements");
        assert!(!buf.is_view());
        assert_eq!(buf.into_vec(), expected);
        assert!(Buf::<f32>::from_le_bytes(&bytes.slice(0..6)).is_none());
    }
}
