//! Multidirectional broadcasting (ONNX's numpy rule): the output shape of several inputs,
//! and for each input the element that lands at each output position, as strides that are
//! 0 along broadcast axes. One helper for every kernel that broadcasts.

use crate::error::{KernelError, bad_input};
pub use crate::value::elements;

/// The broadcast shape of `shapes`, or a message naming the axis where two sizes clash (or
/// saying that its element count overflows).
pub fn shape(shapes: &[&[usize]]) -> Result<Vec<usize>, KernelError> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; rank];
    for s in shapes {
        for (i, &d) in s.iter().enumerate() {
            let axis = rank - s.len() + i;
            let o = &mut out[axis];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                let listed: Vec<String> = shapes.iter().map(|s| format!("{s:?}")).collect();
                return Err(bad_input!("shapes {} cannot broadcast (axis {axis}: {} and {d})", listed.join(", "), *o));
            }
        }
    }
    crate::value::count(&out)?;
    Ok(out)
}

/// Row-major strides of `shape`. An empty tensor's other dimensions may multiply past
/// `usize`; its strides are never used to read, so they wrap instead of overflowing.
pub fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1].wrapping_mul(shape[i + 1]);
    }
    s
}

/// `values` laid out by `shape`, with its axes reordered: output axis `i` is input axis
/// `perm[i]` (a transpose, as a copy in the new order).
pub fn permute<T: Clone>(values: &[T], shape: &[usize], perm: &[usize]) -> Vec<T> {
    let own = strides(shape);
    let out: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let read: Vec<usize> = perm.iter().map(|&p| own[p]).collect();
    gather(values, &out, 0, &read)
}

/// The elements of a strided view, row-major: position (i0, …) of `out` reads
/// `values[base + Σ i_a·read[a]]`. The caller guarantees every such index lies inside
/// `values` ([`crate::view`] builds views only so).
pub fn gather<T: Clone>(values: &[T], out: &[usize], base: usize, read: &[usize]) -> Vec<T> {
    let Some((&last, outer)) = out.split_last() else { return vec![values[base].clone()] };
    let total = elements(out);
    let mut gathered = Vec::with_capacity(total);
    if total == 0 {
        return gathered;
    }
    let step = read[read.len() - 1];
    // The input's rows become columns: done in square tiles (see `gather_in_tiles`).
    if step != 1
        && last > 1
        && let Some(q) = (0..outer.len()).find(|&a| read[a] == 1 && out[a] > 1)
    {
        return gather_in_tiles(values, out, base, read, q);
    }
    // An odometer over all output axes but the last; along the last, a strided read.
    for start in offsets(outer, &read[..outer.len()]) {
        let start = base + start;
        match step {
            1 => gathered.extend_from_slice(&values[start..start + last]),
            0 => gathered.extend(std::iter::repeat_n(values[start].clone(), last)),
            _ => gathered.extend((0..last).map(|k| values[start + k * step].clone())),
        }
    }
    gathered
}

/// Side of the square tiles [`gather_in_tiles`] copies: 32 rows of 32 values touch 32 cache
/// lines on each side, which stay in the first-level cache while the tile is copied.
const TILE: usize = 32;

/// [`gather`] when output axis `q` runs along the input's rows (it reads with stride 1)
/// and the output's last axis across them: a transpose of each (`q`, last) plane. Copied
/// an output row at a time, each value would be read from another cache line, and a big
/// weight matrix transposed in a loop body (a real PaddleOCR table model does three per
/// step) took 65 % of the run; square tiles read and write whole lines.
fn gather_in_tiles<T: Clone>(values: &[T], out: &[usize], base: usize, read: &[usize], q: usize) -> Vec<T> {
    let last = out.len() - 1;
    let write = strides(out);
    let (rows, cols, step, row_write) = (out[q], out[last], read[last], write[q]);
    let others: Vec<usize> = (0..last).filter(|&a| a != q).collect();
    let other_out: Vec<usize> = others.iter().map(|&a| out[a]).collect();
    let other_read: Vec<usize> = others.iter().map(|&a| read[a]).collect();
    let other_write: Vec<usize> = others.iter().map(|&a| write[a]).collect();
    let mut permuted = vec![values[base].clone(); elements(out)];
    for (from, to) in offsets(&other_out, &other_read).zip(offsets(&other_out, &other_write)) {
        let from = base + from;
        for a0 in (0..rows).step_by(TILE) {
            for b0 in (0..cols).step_by(TILE) {
                for a in a0..(a0 + TILE).min(rows) {
                    let target = &mut permuted[to + a * row_write + b0..][..(b0 + TILE).min(cols) - b0];
                    for (b, slot) in (b0..).zip(target) {
                        *slot = values[from + a + b * step].clone();
                    }
                }
            }
        }
    }
    permuted
}

/// The strides that read an input of shape `input` at each position of `out` (0 along
/// axes the input broadcasts).
pub fn input_strides(input: &[usize], out: &[usize]) -> Vec<usize> {
    placed_strides(input, &strides(input), out.len())
}

/// [`input_strides`] for an input of shape `input` laid out with `own` strides (a strided
/// view, [`crate::view`]) read over an output of rank `out_rank`.
pub fn placed_strides(input: &[usize], own: &[usize], out_rank: usize) -> Vec<usize> {
    let offset = out_rank - input.len();
    (0..out_rank).map(|axis| if axis < offset || input[axis - offset] == 1 { 0 } else { own[axis - offset] }).collect()
}

/// The input offsets, in output order, of an input read with `strides` over `out`.
pub fn offsets(out: &[usize], strides: &[usize]) -> Offsets {
    offsets_from(out, strides, 0)
}

/// [`offsets`] from output position `first` on (row-major), for a share of the output.
pub fn offsets_from(out: &[usize], strides: &[usize], first: usize) -> Offsets {
    let count = elements(out);
    let mut index = vec![0; out.len()];
    let (mut rest, mut offset) = (first.min(count), 0);
    for axis in (0..out.len()).rev() {
        let len = out[axis].max(1);
        index[axis] = rest % len;
        offset += index[axis] * strides[axis];
        rest /= len;
    }
    Offsets { shape: out.to_vec(), strides: strides.to_vec(), index, offset, left: count - first.min(count) }
}

/// See [`offsets`]: an odometer over the output positions.
#[derive(Debug)]
pub struct Offsets {
    shape: Vec<usize>,
    strides: Vec<usize>,
    index: Vec<usize>,
    offset: usize,
    left: usize,
}

impl Iterator for Offsets {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let current = self.offset;
        for axis in (0..self.shape.len()).rev() {
            self.index[axis] += 1;
            self.offset += self.strides[axis];
            if self.index[axis] < self.shape[axis] {
                break;
            }
            self.offset -= self.strides[axis] * self.index[axis];
            self.index[axis] = 0;
        }
        Some(current)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

/// The offsets of every position of a block, row-major, from each axis's offsets
/// (`along[a][j]`: the offset that index j of axis a adds, `None` for a position that reads
/// nothing): the sum over the axes, `None` where any is. Built axis by axis as a product,
/// so each position costs one addition instead of a division per axis.
pub fn offsets_by_axis(along: &[Vec<Option<usize>>]) -> Vec<Option<usize>> {
    let mut offsets = vec![Some(0usize)];
    for axis in along {
        let mut next = Vec::with_capacity(offsets.len().saturating_mul(axis.len()));
        for &o in &offsets {
            next.extend(axis.iter().map(|&c| o.zip(c).map(|(o, c)| o + c)));
        }
        offsets = next;
    }
    offsets
}

/// Two inputs broadcast to `out`, walked as runs: the longest trailing block of output
/// positions along which each input either moves one element at a time or stays on one
/// element. A bias added to every row, or a per-channel scale over an image, is then a
/// loop over whole rows that the compiler vectorizes, instead of an odometer step per
/// element.
#[derive(Debug)]
pub struct Runs {
    /// The output positions in one run.
    pub len: usize,
    /// Whether each input moves along a run (else it repeats one element).
    pub moves: [bool; 2],
    outer: Vec<usize>,
    outer_strides: [Vec<usize>; 2],
}

impl Runs {
    /// The runs of inputs read with `strides` (as [`input_strides`] gives them) over `out`.
    pub fn new(out: &[usize], strides: [&[usize]; 2]) -> Runs {
        let mut len = 1usize;
        let mut moves: Option<[bool; 2]> = None;
        let mut split = out.len();
        for axis in (0..out.len()).rev() {
            if out[axis] == 1 {
                split = axis;
                continue;
            }
            let here = strides.map(|s| s[axis] != 0);
            // A moving input must be contiguous across the run so far.
            let fits = moves.is_none_or(|m| m == here) && (0..2).all(|i| !here[i] || strides[i][axis] == len);
            if !fits {
                break;
            }
            moves = Some(here);
            len = len.saturating_mul(out[axis]);
            split = axis;
        }
        Runs {
            len,
            moves: moves.unwrap_or([false, false]),
            outer: out[..split].to_vec(),
            outer_strides: strides.map(|s| s[..split].to_vec()),
        }
    }

    /// Where each run starts in each input, in output order.
    pub fn starts(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.starts_from(0)
    }

    /// [`Runs::starts`] from run `first` on.
    pub fn starts_from(&self, first: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        offsets_from(&self.outer, &self.outer_strides[0], first).zip(offsets_from(
            &self.outer,
            &self.outer_strides[1],
            first,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tiled transpose moves every value where the plain odometer does, for every
    /// permutation of shapes with sides below, at and above a tile.
    #[test]
    fn tiled_permutations_are_the_plain_ones() {
        let plain = |values: &[u32], shape: &[usize], perm: &[usize]| -> Vec<u32> {
            let out: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
            let own = strides(shape);
            let read: Vec<usize> = perm.iter().map(|&p| own[p]).collect();
            offsets(&out, &read).map(|at| values[at]).collect()
        };
        let perms3 = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
        for shape in [[2, 33, 70], [1, 32, 32], [3, 1, 40], [5, 64, 1], [2, 0, 3]] {
            let values: Vec<u32> = (0..elements(&shape) as u32).collect();
            for perm in perms3 {
                assert_eq!(permute(&values, &shape, &perm), plain(&values, &shape, &perm), "{shape:?} {perm:?}");
            }
        }
        let values: Vec<u32> = (0..45 * 70).collect();
        assert_eq!(permute(&values, &[45, 70], &[1, 0]), plain(&values, &[45, 70], &[1, 0]));
        let shape = [2, 3, 35, 4];
        let values: Vec<u32> = (0..elements(&shape) as u32).collect();
        for perm in [[0, 3, 1, 2], [3, 2, 1, 0], [1, 3, 0, 2], [2, 0, 3, 1]] {
            assert_eq!(permute(&values, &shape, &perm), plain(&values, &shape, &perm), "{perm:?}");
        }
    }

    #[test]
    fn shapes_broadcast_as_numpy_does() {
        assert_eq!(shape(&[&[2, 3], &[3]]), Ok(vec![2, 3]));
        assert_eq!(shape(&[&[2, 1, 4], &[3, 1]]), Ok(vec![2, 3, 4]));
        assert_eq!(shape(&[&[], &[5]]), Ok(vec![5]));
        assert_eq!(shape(&[&[2, 3], &[4]]).map_err(|e| e.kind()), Err(crate::ErrorKind::BadInput));
        assert_eq!(
            shape(&[&[1 << 40], &[1 << 40, 1], &[1 << 40, 1, 1]]).map_err(|e| e.kind()),
            Err(crate::ErrorKind::Limit)
        );
    }

    /// Started part way, the odometer goes on as if it had counted up to there.
    #[test]
    fn offsets_from_a_position_are_the_rest_of_the_offsets() {
        let (out, strides) = ([3usize, 4, 5], [0usize, 5, 1]);
        let all: Vec<usize> = offsets(&out, &strides).collect();
        for first in [0, 1, 4, 5, 19, 20, 59, 60, 61] {
            let rest: Vec<usize> = offsets_from(&out, &strides, first).collect();
            assert_eq!(rest, all[first.min(all.len())..], "from {first}");
        }
    }

    /// Against a naive index-by-index reading.
    #[test]
    fn offsets_read_the_broadcast_element() {
        let out = [2usize, 3, 4];
        let input = [3usize, 1];
        let got: Vec<usize> = offsets(&out, &input_strides(&input, &out)).collect();
        let mut want = Vec::new();
        for _a in 0..2 {
            for b in 0..3 {
                for _c in 0..4 {
                    want.push(b);
                }
            }
        }
        assert_eq!(got, want);
    }

    /// Runs against the odometer: every pair of offsets, for shapes that broadcast in
    /// each way (rows, columns, scalars, inner and outer ones, size-1 axes between).
    #[test]
    fn runs_visit_the_same_offsets_as_the_odometer() {
        let cases: [(&[usize], &[usize]); 9] = [
            (&[2, 3, 4], &[4]),
            (&[2, 3, 4], &[3, 1]),
            (&[2, 3, 4], &[]),
            (&[2, 3, 4], &[2, 3, 4]),
            (&[1, 3, 1, 5], &[2, 1, 4, 1]),
            (&[4, 1], &[1, 4]),
            (&[2, 1, 3], &[2, 5, 3]),
            (&[1], &[1]),
            (&[2, 0, 3], &[3]),
        ];
        for (a, b) in cases {
            let out = shape(&[a, b]).unwrap();
            let (sa, sb) = (input_strides(a, &out), input_strides(b, &out));
            let want: Vec<(usize, usize)> = offsets(&out, &sa).zip(offsets(&out, &sb)).collect();
            let runs = Runs::new(&out, [&sa, &sb]);
            let mut got = Vec::new();
            if elements(&out) > 0 {
                for (x, y) in runs.starts() {
                    for k in 0..runs.len {
                        let step = |moves: bool| if moves { k } else { 0 };
                        got.push((x + step(runs.moves[0]), y + step(runs.moves[1])));
                    }
                }
            }
            assert_eq!(got, want, "{a:?} with {b:?}");
        }
    }

    #[test]
    fn offsets_by_axis_sum_each_axis_offset() {
        let along = vec![vec![Some(0), Some(12)], vec![None, Some(4), Some(8)], vec![Some(1), None]];
        let want: Vec<Option<usize>> = [0, 12]
            .iter()
            .flat_map(|&a| [None, Some(4), Some(8)].map(move |b: Option<usize>| (a, b)))
            .flat_map(|(a, b)| [Some(1), None].map(move |c: Option<usize>| b.zip(c).map(|(b, c)| a + b + c)))
            .collect();
        assert_eq!(offsets_by_axis(&along), want);
        assert_eq!(offsets_by_axis(&[]), vec![Some(0)]);
    }

    /// Every permutation of a 4-D block, against reading each element by its index.
    #[test]
    fn permute_moves_every_element_to_its_place() {
        let shape = [3usize, 37, 5, 70];
        let values: Vec<usize> = (0..elements(&shape)).collect();
        let own = strides(&shape);
        let perms = [[0, 1, 2, 3], [0, 1, 3, 2], [3, 2, 1, 0], [1, 3, 0, 2], [2, 0, 3, 1], [0, 3, 1, 2]];
        for perm in perms {
            let out: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
            let read: Vec<usize> = perm.iter().map(|&p| own[p]).collect();
            let want: Vec<usize> = offsets(&out, &read).map(|i| values[i]).collect();
            assert_eq!(permute(&values, &shape, &perm), want, "{perm:?}");
        }
    }
}
