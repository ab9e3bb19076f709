//! Strided views: Transpose, Slice (with positive steps) and Expand as a new shape and
//! strides over the same elements, with no copy. The plan makes a node a view only when
//! every node that reads its result reads views ([`crate::registry::reads_views`]): a MatMul reads a
//! transposed or sliced operand through the GEMM's strides, Add, Sub, Mul and Div read
//! an expanded operand as they broadcast (a stride of 0), and Shape and Size read no
//! elements at all. Every other kernel is handed contiguous tensors ([`contiguous_inputs`]),
//! so views never reach code that reads `data` row-major; a view copied for such a reader
//! costs what the copying Transpose would have, and is made straight from the first
//! tensor in a chain of views (a Transpose of a Slice copies once).

use std::borrow::Cow;
use std::sync::Arc;

use crate::broadcast;
pub use crate::value::Layout;
use crate::value::{Tensor, Value};

impl Tensor {
    /// Whether this is a strided view rather than row-major elements.
    pub fn is_strided(&self) -> bool {
        self.layout.is_some()
    }

    /// The offset of the first element and each axis's stride, in elements.
    pub fn placement(&self) -> (usize, Vec<usize>) {
        match &self.layout {
            Some(layout) => (layout.offset, layout.strides.clone()),
            None => (0, broadcast::strides(&self.shape)),
        }
    }

    /// The elements row-major: this tensor, or a copy of the view.
    pub fn contiguous(&self) -> Cow<'_, Tensor> {
        match &self.layout {
            None => Cow::Borrowed(self),
            Some(layout) => {
                let data = crate::map_data!(&*self.data, v => broadcast::gather(v, &self.shape, layout.offset, &layout.strides));
                Cow::Owned(Tensor::new(self.shape.clone(), data))
            }
        }
    }

    /// The same data seen as `shape` with `offset` and `strides`: a plain tensor when that
    /// is the data row-major, whole.
    fn viewed(&self, shape: Vec<usize>, offset: usize, strides: Vec<usize>) -> Tensor {
        let whole = offset == 0
            && broadcast::elements(&shape) == self.data.len()
            && shape.iter().zip(&strides).zip(broadcast::strides(&shape)).all(|((&d, &s), r)| d <= 1 || s == r);
        let layout = (!whole).then(|| Arc::new(Layout { offset, strides }));
        Tensor { shape, data: Arc::clone(&self.data), layout }
    }
}

/// `t` with its axes reordered: output axis `i` is axis `perm[i]` (a valid permutation).
pub fn transpose(t: &Tensor, perm: &[usize]) -> Tensor {
    let (offset, strides) = t.placement();
    t.viewed(perm.iter().map(|&p| t.shape[p]).collect(), offset, perm.iter().map(|&p| strides[p]).collect())
}

/// Per axis of `t`, `count` indices from `start` on by `step`: each index taken lies
/// inside its axis (or the count is 0).
pub fn slice(t: &Tensor, along: &[(usize, usize, usize)]) -> Tensor {
    let (mut offset, strides) = t.placement();
    if along.iter().any(|&(_, _, n)| n == 0) {
        return t.viewed(along.iter().map(|a| a.2).collect(), 0, vec![0; along.len()]);
    }
    for (&(start, _, _), &s) in along.iter().zip(&strides) {
        offset += start * s;
    }
    let strides = along.iter().zip(&strides).map(|(&(_, step, n), &s)| if n == 1 { 0 } else { step * s }).collect();
    t.viewed(along.iter().map(|a| a.2).collect(), offset, strides)
}

/// `t` broadcast to `shape` (which numpy's rules allow).
pub fn expand(t: &Tensor, shape: &[usize]) -> Tensor {
    let (offset, strides) = t.placement();
    let strides = broadcast::placed_strides(&t.shape, &strides, shape.len());
    if broadcast::elements(shape) == 0 {
        return t.viewed(shape.to_vec(), 0, vec![0; shape.len()]);
    }
    t.viewed(shape.to_vec(), offset, strides)
}

/// `inputs` with every view copied row-major, for a kernel that reads only such tensors;
/// `None` when none is a view (the common case costs a scan of the inputs).
pub fn contiguous_inputs(inputs: &[Option<&Value>]) -> Option<Vec<Option<Value>>> {
    let strided = |v: &Option<&Value>| matches!(v, Some(Value::Tensor(t)) if t.is_strided());
    if !inputs.iter().any(strided) {
        return None;
    }
    Some(
        inputs
            .iter()
            .map(|v| {
                v.map(|v| match v {
                    Value::Tensor(t) if t.is_strided() => Value::Tensor(t.contiguous().into_owned()),
                    other => other.clone(),
                })
            })
            .collect(),
    )
}

/// `value` with a view copied row-major (what leaves the run, or a graph's output).
pub fn contiguous_value(value: Value) -> Value {
    match value {
        Value::Tensor(t) if t.is_strided() => Value::Tensor(t.contiguous().into_owned()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Data;

    fn numbers(shape: &[usize]) -> Tensor {
        let n = broadcast::elements(shape);
        Tensor::new(shape.to_vec(), Data::F32((0..n).map(|x| x as f32).collect::<Vec<_>>().into()))
    }

    fn elements(t: &Tensor) -> Vec<f32> {
        match &*t.contiguous().data {
            Data::F32(v) => v.to_vec(),
            _ => unreachable!("the tests make float tensors"),
        }
    }

    #[test]
    fn a_transpose_of_a_slice_is_read_from_the_first_tensor() {
        let t = numbers(&[3, 4]);
        // Rows 1.. and columns 0, 2.
        let s = slice(&t, &[(1, 1, 2), (0, 2, 2)]);
        assert!(s.is_strided());
        assert_eq!(elements(&s), [4.0, 6.0, 8.0, 10.0]);
        let st = transpose(&s, &[1, 0]);
        assert_eq!(st.shape, [2, 2]);
        assert_eq!(elements(&st), [4.0, 8.0, 6.0, 10.0]);
        assert_eq!(st.len(), 4);
    }

    #[test]
    fn an_expanded_view_repeats_without_copying() {
        let t = numbers(&[3, 1]);
        let e = expand(&t, &[2, 3, 2]);
        assert!(Arc::ptr_eq(&e.data, &t.data));
        assert_eq!(elements(&e), [0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 0.0, 0.0, 1.0, 1.0, 2.0, 2.0]);
        assert_eq!(e.reshaped(vec![12]).layout, None);
    }

    #[test]
    fn views_that_are_the_data_row_major_are_plain_tensors() {
        let t = numbers(&[2, 3]);
        assert!(!transpose(&transpose(&t, &[1, 0]), &[1, 0]).is_strided());
        assert!(!slice(&t, &[(0, 1, 2), (0, 1, 3)]).is_strided());
        assert!(slice(&t, &[(1, 1, 1), (0, 1, 3)]).is_strided(), "row 1 starts past the data's start");
        assert!(!expand(&t, &[2, 3]).is_strided());
        let empty = slice(&t, &[(0, 1, 0), (0, 1, 3)]);
        assert_eq!((empty.len(), elements(&empty).len()), (0, 0));
    }

    #[test]
    fn only_views_reach_view_readers_and_others_get_copies() {
        let t = numbers(&[2, 3]);
        let v = Value::Tensor(transpose(&t, &[1, 0]));
        let plain = Value::Tensor(t.clone());
        assert!(contiguous_inputs(&[Some(&plain), None]).is_none());
        let copied = contiguous_inputs(&[Some(&plain), Some(&v), None]).expect("a view was given");
        match &copied[1] {
            Some(Value::Tensor(c)) => {
                assert!(!c.is_strided());
                assert_eq!(elements(c), [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
            }
            other => panic!("expected a tensor, got {other:?}"),
        }
    }
}
