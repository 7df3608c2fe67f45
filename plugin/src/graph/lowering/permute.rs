//! A permutation of a row-major tensor's axes, worked out when the graph is lowered: a run
//! only walks the elements (the general walk once allocated its strides and counters on every
//! call, which cost more than moving the elements of a small attention's keys).

use crate::tensor::ops::transpose::{PlainBits, transpose_into};

/// How the elements of a row-major tensor of some shape move when its axes are permuted.
#[derive(Clone, Debug)]
pub(super) enum Permutation {
    /// The last two axes swapped (`transpose(-2, -1)`, the keys of an attention): per matrix
    /// of `rows × cols`, its transpose.
    LastTwo {
        matrices: usize,
        rows: usize,
        cols: usize,
    },
    /// Any other: per output axis, its length and the source stride that walks it.
    General { dims: Vec<usize>, steps: Vec<usize> },
}

impl Permutation {
    /// The axes of a tensor of `shape` taken in the order `perm` (a permutation of its axes).
    pub(super) fn new(shape: &[usize], perm: &[usize]) -> Self {
        let rank = shape.len();
        let keeps_leading = perm
            .iter()
            .take(rank.saturating_sub(2))
            .enumerate()
            .all(|(i, &p)| i == p);
        if rank >= 2 && keeps_leading && perm[rank - 2] == rank - 1 && perm[rank - 1] == rank - 2 {
            return Permutation::LastTwo {
                matrices: shape[..rank - 2].iter().product(),
                rows: shape[rank - 2],
                cols: shape[rank - 1],
            };
        }
        let mut strides = vec![0; rank];
        let mut s = 1;
        for d in (0..rank).rev() {
            strides[d] = s;
            s *= shape[d];
        }
        Permutation::General {
            dims: perm.iter().map(|&p| shape[p]).collect(),
            steps: perm.iter().map(|&p| strides[p]).collect(),
        }
    }

    /// The elements of `src` in the permuted order, into `out` (of the same length).
    pub(super) fn run<T: PlainBits>(&self, src: &[T], out: &mut [T]) {
        if src.is_empty() {
            return;
        }
        match self {
            Permutation::LastTwo {
                matrices,
                rows,
                cols,
            } => {
                let size = rows * cols;
                for (m, o) in src
                    .chunks_exact(size)
                    .zip(out.chunks_exact_mut(size))
                    .take(*matrices)
                {
                    transpose_into(m, *rows, *cols, o);
                }
            }
            Permutation::General { dims, steps } => general(src, dims, steps, out),
        }
    }
}

/// The walk of `Permutation::General`: row by row of the output, an odometer over its outer
/// axes.
fn general<T: Copy>(src: &[T], dims: &[usize], steps: &[usize], out: &mut [T]) {
    let Some(last) = dims.len().checked_sub(1) else {
        return out.copy_from_slice(src);
    };
    let mut index: smallvec::SmallVec<[usize; 8]> = smallvec::smallvec![0; dims.len()];
    let (mut base, mut at) = (0, 0);
    loop {
        let row = &mut out[at..at + dims[last]];
        if steps[last] == 1 {
            // The last axis kept in place (the heads of an attention moved before its
            // tokens): whole rows.
            row.copy_from_slice(&src[base..base + dims[last]]);
        } else {
            row.iter_mut()
                .enumerate()
                .for_each(|(j, o)| *o = src[base + j * steps[last]]);
        }
        at += dims[last];
        let mut d = last;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            index[d] += 1;
            base += steps[d];
            if index[d] < dims[d] {
                break;
            }
            base -= steps[d] * dims[d];
            index[d] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The element at each output position, found through its multi-index: what a
    /// permutation must give, however it walks.
    fn by_index(shape: &[usize], perm: &[usize], src: &[u32]) -> Vec<u32> {
        let out_shape: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
        let n: usize = shape.iter().product();
        (0..n)
            .map(|flat| {
                let mut rest = flat;
                let mut out_index = vec![0; shape.len()];
                for d in (0..shape.len()).rev() {
                    out_index[d] = rest % out_shape[d];
                    rest /= out_shape[d];
                }
                let mut src_index = vec![0; shape.len()];
                for (d, &p) in perm.iter().enumerate() {
                    src_index[p] = out_index[d];
                }
                let at = src_index.iter().zip(shape).fold(0, |a, (&i, &s)| a * s + i);
                src[at]
            })
            .collect()
    }

    #[test]
    fn every_kind_of_permutation_moves_each_element_where_its_index_says() {
        let cases: &[(&[usize], &[usize], &str)] = &[
            (&[3, 5], &[1, 0], "LastTwo"),
            (&[2, 3, 4, 5], &[0, 1, 3, 2], "LastTwo"),
            (&[1, 4, 16], &[0, 2, 1], "LastTwo"),
            (&[2, 3, 4], &[2, 1, 0], "General"),
            (&[2, 3, 4, 5], &[0, 2, 1, 3], "General"),
            (&[2, 16, 2, 16], &[0, 2, 1, 3], "General"),
            (&[3, 2, 5], &[1, 0, 2], "General"),
            (&[4], &[0], "General"),
            (&[], &[], "General"),
            (&[2, 0, 3], &[0, 2, 1], "LastTwo"),
        ];
        for &(shape, perm, kind) in cases {
            let n: usize = shape.iter().product();
            let src: Vec<u32> = (0..n as u32).collect();
            let p = Permutation::new(shape, perm);
            assert!(
                format!("{p:?}").starts_with(kind),
                "{shape:?} {perm:?}: {p:?}"
            );
            let mut out = vec![u32::MAX; n];
            p.run(&src, &mut out);
            assert_eq!(out, by_index(shape, perm, &src), "{shape:?} {perm:?}");
        }
    }
}
