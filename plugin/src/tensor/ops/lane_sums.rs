//! Sums, means, maxima and minima of the lanes of a row-major float tensor, computed from its
//! own elements, each widened to f64 as it is read: along runs of memory (lanes of the last
//! dimension) and across them (lanes of an earlier dimension, many side by side, so that each
//! row of memory is read once and whole). Both add a lane's elements in the order `ndarray`'s
//! `sum` adds a contiguous f64 lane (eight interleaved partial sums, then the rest), and fold
//! maxima in the lane's order: the bits of a widened copy reduced by `ndarray`, without the
//! copy (256×1024 float32 `sum(dim=-1)` took 158 µs, `sum(dim=0)` 569 µs, mostly the copy's
//! page faults).

use rayon::prelude::*;

use super::parallel::{PARALLEL_ELEMENTS, PIECE, threads};
use super::reduce::Reduction;
use crate::tensor::data::Element;

/// Lanes side by side per block of an across-runs reduction: eight partial sums of this many
/// f64 stay in the first-level cache.
const BLOCK: usize = 256;

fn wide<T: Element>(v: T) -> f64 {
    v.to_scalar().as_f64()
}

/// `ndarray`'s `unrolled_fold` of `+` over `xs` widened: element `i` into partial `i mod 8`
/// while eight remain, the partials joined as (0 + (p0 + p4)) + (p1 + p5) + (p2 + p6) +
/// (p3 + p7), then the rest added in order.
pub(super) fn sum8<T: Element>(xs: &[T]) -> f64 {
    sum8_by(xs, wide)
}

/// [`sum8`] of `f` of each element.
pub(super) fn sum8_by<T: Copy>(xs: &[T], f: impl Fn(T) -> f64) -> f64 {
    let mut p = [0.0f64; 8];
    let chunks = xs.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for (p, &x) in p.iter_mut().zip(c) {
            *p += f(x);
        }
    }
    let mut acc = 0.0;
    for j in 0..4 {
        acc += p[j] + p[j + 4];
    }
    for &x in rest {
        acc += f(x);
    }
    acc
}

/// The maximum (minimum) of a lane as `reduce` folds it: NaN wins, otherwise `f64::max`
/// (`min`) from `-inf` (`inf`), element after element.
fn extreme(r: Reduction, m: f64, x: f64) -> f64 {
    if m.is_nan() || x.is_nan() {
        f64::NAN
    } else if r == Reduction::Max {
        m.max(x)
    } else {
        m.min(x)
    }
}

/// The maximum (minimum) of `xs` widened, as [`extreme`] folds them in order, in eight
/// interleaved parts (one dependency chain per part, not one per lane: 256 lanes of 1024
/// floats took 700 µs). Any order gives the same value, NaN included, but for the sign of a
/// zero: a zero result is folded again in order.
fn extreme8<T: Element>(r: Reduction, xs: &[T]) -> f64 {
    let mut p = [start(r); 8];
    let chunks = xs.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for (p, &x) in p.iter_mut().zip(c) {
            *p = extreme(r, *p, wide(x));
        }
    }
    let mut m = p.into_iter().fold(start(r), |m, x| extreme(r, m, x));
    for &x in rest {
        m = extreme(r, m, wide(x));
    }
    if m == 0.0 {
        m = xs.iter().fold(start(r), |m, &x| extreme(r, m, wide(x)));
    }
    m
}

fn start(r: Reduction) -> f64 {
    match r {
        Reduction::Max => f64::NEG_INFINITY,
        Reduction::Min => f64::INFINITY,
        Reduction::Prod => 1.0,
        _ => 0.0,
    }
}

/// Whether [`across_runs`] computes `r` (along runs, every reduction is computed here; the
/// arg reductions across runs go through `reduce`'s own lanes).
pub(super) fn across(r: Reduction) -> bool {
    matches!(
        r,
        Reduction::Sum | Reduction::Mean | Reduction::Max | Reduction::Min
    )
}

fn finish(r: Reduction, sum_or_extreme: f64, len: usize) -> f64 {
    match r {
        Reduction::Mean if len == 0 => f64::NAN,
        Reduction::Mean => sum_or_extreme / len as f64,
        _ => sum_or_extreme,
    }
}

/// `r` of each run of `n` consecutive elements of `flat` (`n > 0`), by parts on rayon's
/// threads when large. The arg reductions too: `arg` over the run widened, as `reduce` finds
/// them.
pub(super) fn along_runs<T: Element>(r: Reduction, flat: &[T], n: usize) -> Vec<f64> {
    per_run(flat, n, |run| {
        let v = match r {
            Reduction::Sum | Reduction::Mean => sum8(run),
            Reduction::Max | Reduction::Min => extreme8(r, run),
            Reduction::ArgMax | Reduction::ArgMin => {
                super::reduce::arg(r, run.iter().map(|&x| wide(x))) as f64
            }
            Reduction::Prod => run.iter().fold(1.0, |p, &x| p * wide(x)),
        };
        finish(r, v, n)
    })
}

/// `f` of each run of `n` consecutive elements of `flat` (`n > 0`), by parts on rayon's
/// threads when large (whole runs each, so a value never depends on the thread count).
pub(super) fn per_run<T: Sync, U: Send + Copy + Default>(
    flat: &[T],
    n: usize,
    f: impl Fn(&[T]) -> U + Sync,
) -> Vec<U> {
    let mut out = vec![U::default(); flat.len() / n];
    if flat.len() >= PARALLEL_ELEMENTS && threads() > 1 {
        let runs = PIECE.div_ceil(n);
        flat.par_chunks(runs * n)
            .zip(out.par_chunks_mut(runs))
            .for_each(|(part, o)| {
                for (run, o) in part.chunks_exact(n).zip(o) {
                    *o = f(run);
                }
            });
    } else {
        for (run, o) in flat.chunks_exact(n).zip(&mut out) {
            *o = f(run);
        }
    }
    out
}

/// `r` of the lanes of the middle dimension of `flat`, a row-major `outer × len × inner`
/// tensor: lane `(o, i)` is elements `(o, k, i)` for each `k`, given in the order `(o, i)`.
/// The lanes of a block are reduced side by side, row `k` of the block read whole.
pub(super) fn across_runs<T: Element>(
    r: Reduction,
    flat: &[T],
    outer: usize,
    len: usize,
    inner: usize,
) -> Vec<f64> {
    debug_assert_eq!(flat.len(), outer * len * inner);
    let mut out = vec![0.0; outer * inner];
    let mut blocks: Vec<(usize, usize, &mut [f64])> = Vec::new();
    for (o, row) in out.chunks_mut(inner.max(1)).enumerate() {
        for (b, part) in row.chunks_mut(BLOCK).enumerate() {
            blocks.push((o, b * BLOCK, part));
        }
    }
    let block = |(o, i0, acc): (usize, usize, &mut [f64])| {
        let width = acc.len();
        let row = |k: usize| &flat[(o * len + k) * inner + i0..][..width];
        match r {
            Reduction::Sum | Reduction::Mean => {
                let mut p = vec![0.0f64; 8 * width];
                let full = len / 8 * 8;
                for k in 0..full {
                    let p = &mut p[(k % 8) * width..][..width];
                    for (p, &x) in p.iter_mut().zip(row(k)) {
                        *p += wide(x);
                    }
                }
                acc.fill(0.0);
                for j in 0..4 {
                    let (lo, hi) = (&p[j * width..][..width], &p[(j + 4) * width..][..width]);
                    for ((a, &x), &y) in acc.iter_mut().zip(lo).zip(hi) {
                        *a += x + y;
                    }
                }
                for k in full..len {
                    for (a, &x) in acc.iter_mut().zip(row(k)) {
                        *a += wide(x);
                    }
                }
            }
            _ => {
                acc.fill(start(r));
                for k in 0..len {
                    for (a, &x) in acc.iter_mut().zip(row(k)) {
                        *a = extreme(r, *a, wide(x));
                    }
                }
            }
        }
        for a in acc.iter_mut() {
            *a = finish(r, *a, len);
        }
    };
    if flat.len() >= PARALLEL_ELEMENTS && blocks.len() > 1 && threads() > 1 {
        blocks.into_par_iter().for_each(block);
    } else {
        blocks.into_iter().for_each(block);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{ArrayD, Axis, IxDyn};

    /// What `reduce` computed before these paths: each lane copied to f64, then `ndarray`'s
    /// sum or an element-by-element fold.
    fn by_copies(r: Reduction, a: &ArrayD<f32>, d: usize) -> Vec<f64> {
        a.lanes(Axis(d))
            .into_iter()
            .map(|lane| {
                let copy = lane.mapv(f64::from);
                let v = match r {
                    Reduction::Sum | Reduction::Mean => copy.sum(),
                    Reduction::Max | Reduction::Min => {
                        copy.iter().fold(start(r), |m, &x| extreme(r, m, x))
                    }
                    Reduction::Prod => copy.iter().product(),
                    _ => super::super::reduce::arg(r, copy.iter().copied()) as f64,
                };
                finish(r, v, copy.len())
            })
            .collect()
    }

    /// Every reduction along runs (and each but the arg ones across them) gives, bit for bit, what a copy of each lane
    /// reduced by `ndarray` gives: lanes of lengths around multiples of eight, blocks wider
    /// and narrower than a block, NaN, infinities and signed zeros, on one thread and on three.
    #[test]
    fn lanes_reduce_to_the_bits_of_their_copies() {
        let awkward = [
            0.0f32,
            -0.0,
            1e30,
            -1e-30,
            f32::INFINITY,
            3.5,
            -2.25,
            f32::NAN,
        ];
        let three = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        for shape in [
            vec![3, 17, 5],
            vec![2, 8, 300],
            vec![1, 7, 1],
            vec![4, 1000, 9],
            vec![40, 9, 130],
            vec![2, 3, 24],
        ] {
            let count: usize = shape.iter().product();
            let a = ArrayD::from_shape_fn(IxDyn(&shape), |ix| {
                let i = ix[0] * 7919 + ix[1] * 104729 + ix[2] * 31;
                if shape[2] == 24 {
                    // Lanes of zeros of both signs: the sign of the result is the fold's.
                    return if (i / 3) % 2 == 0 { 0.0 } else { -0.0 };
                }
                if i % 97 == 5 {
                    awkward[i % awkward.len()]
                } else {
                    // Magnitudes 2^-30..2^30: sums in f64 round, so their order shows.
                    ((i as f32) * 0.37).sin() * 2f32.powi((i * 7 % 61) as i32 - 30)
                }
            });
            let flat = a.as_slice().unwrap();
            for r in Reduction::ALL {
                let same = |x: &[f64], y: &[f64]| {
                    x.len() == y.len() && x.iter().zip(y).all(|(a, b)| a.to_bits() == b.to_bits())
                };
                let last = by_copies(r, &a, 2);
                assert!(
                    same(&along_runs(r, flat, shape[2]), &last),
                    "{r:?} {shape:?}"
                );
                let threaded = three.install(|| along_runs(r, flat, shape[2]));
                assert!(same(&threaded, &last), "{r:?} {shape:?} on threads");
                for d in [0, 1].into_iter().filter(|_| across(r)) {
                    let outer: usize = shape[..d].iter().product();
                    let inner: usize = shape[d + 1..].iter().product();
                    let want = by_copies(r, &a, d);
                    let got = across_runs(r, flat, outer, shape[d], inner);
                    assert!(same(&got, &want), "{r:?} {shape:?} dim {d}");
                    let threaded = three.install(|| across_runs(r, flat, outer, shape[d], inner));
                    assert!(same(&threaded, &want), "{r:?} {shape:?} dim {d} on threads");
                }
            }
            assert!(count > 0);
        }
    }
}
