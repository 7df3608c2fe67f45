//! softmax and log_softmax over runs of consecutive elements (the lanes of the last
//! dimension), in the tensor's own float type, as PyTorch computes them: exponentials by
//! [`exp_f32`] and [`exp_f64`] (within one ulp, vectorized), the maximum and the sum taken in
//! interleaved parts (one per lane of a 512-bit vector) combined in a fixed order, so that a
//! result is the same whatever the vector width, and a product by the sum's reciprocal. Eager
//! execution and lowered graphs both go through here, so that they round alike.
//!
//! Float32 softmax of 8×128×128 on one thread (AVX-512): 212 → 98 µs (PyTorch 97) once in
//! float32 instead of through f64; float64 902 → 188 µs (PyTorch 276) once glibc's `exp` left.
//! Masked with a causal mask's `-inf`: 200 → 61 µs and 410 → 115 µs once the exponentials
//! stopped making their zeros by underflow (`exp_f32`).

use super::vector_math::{exp_f32, exp_f64, wide_vectors};

/// softmax (or log_softmax) of each run of `n` elements of `buf` (which holds whole runs), in
/// place. log_softmax subtracts the logarithm of the sum in f64.
pub fn softmax_rows_f32(buf: &mut [f32], n: usize, log: bool) {
    if n < 32 {
        return short_lanes_f32(buf, n, log);
    }
    wide_vectors!(softmax_avx2, {
        for lane in buf.chunks_exact_mut(n) {
            lane_f32(lane, log);
        }
    })
}

/// [`softmax_rows_f32`] for float64.
pub fn softmax_rows_f64(buf: &mut [f64], n: usize, log: bool) {
    if n < 16 {
        return short_lanes_f64(buf, n, log);
    }
    wide_vectors!(softmax_avx2, {
        for lane in buf.chunks_exact_mut(n) {
            lane_f64(lane, log);
        }
    })
}

/// The steps of one lane, shared by both float types. The lane goes as whole vectors: its
/// body, and its tail padded with -inf to a vector, as a lane shorter than a vector goes. The
/// padding changes no part: a maximum's step keeps its part, and a sum's adds the padding's
/// exponential, 0, to a part that is never -0. Element by element, a tail went through the
/// compiler's scalar loops: 256 float64 lanes of 31, 46 → 25 µs once padded (and of 15, 32 →
/// 22 µs, before lanes under two vectors went side by side); lanes of whole vectors are
/// unchanged.
macro_rules! softmax_lane {
    ($name:ident, $t:ty, $parts:literal, $exp:path, $ln:expr) => {
        #[inline(always)]
        fn $name(lane: &mut [$t], log: bool) {
            let whole = lane.len() - lane.len() % $parts;
            let (body, rest) = lane.split_at_mut(whole);
            let mut padded = [<$t>::NEG_INFINITY; $parts];
            padded[..rest.len()].copy_from_slice(rest);
            let tail = (!rest.is_empty()).then_some(&padded);
            let max = fold::<$t, $parts>(
                body,
                tail,
                <$t>::NEG_INFINITY,
                |m, v| if v > m { v } else { m },
                <$t>::max,
            );
            let max = if max.is_finite() { max } else { 0.0 };
            if log {
                // The exponentials a block at a time, in a loop of their own: inside the
                // fold's step they were not vectorized (float64, 256 lanes of 64: 114 µs,
                // four times softmax's 28).
                let mut parts = [0.0; $parts];
                let mut add = |block: &[$t]| {
                    let mut e = [0.0; 4 * $parts];
                    let e = &mut e[..block.len()];
                    for (e, &v) in e.iter_mut().zip(block) {
                        *e = $exp(v - max);
                    }
                    for c in e.chunks_exact($parts) {
                        for (p, &x) in parts.iter_mut().zip(c) {
                            *p = *p + x;
                        }
                    }
                };
                body.chunks(4 * $parts).for_each(&mut add);
                if let Some(t) = tail {
                    add(t);
                }
                let sum = join_parts(parts, |a, b| a + b);
                let ln_sum = $ln(sum);
                let out = |o: &mut $t| *o = ((f64::from(*o) - f64::from(max)) - ln_sum) as $t;
                body.iter_mut().for_each(out);
                rest.iter_mut().for_each(out);
            } else {
                let exp = |o: &mut $t| *o = $exp(*o - max);
                body.iter_mut().for_each(exp);
                let tail = if rest.is_empty() {
                    None
                } else {
                    padded.iter_mut().for_each(exp);
                    Some(&padded)
                };
                let sum = fold::<$t, $parts>(body, tail, 0.0, |s, v| s + v, |a, b| a + b);
                // A product by the reciprocal instead of a division (several times the
                // cost).
                let inverse = 1.0 / sum;
                body.iter_mut().for_each(|o| *o *= inverse);
                for (o, &v) in rest.iter_mut().zip(&padded) {
                    *o = v * inverse;
                }
            }
        }
    };
}

softmax_lane!(lane_f32, f32, 16, exp_f32, |s: f32| f64::from(s).ln());
softmax_lane!(lane_f64, f64, 8, exp_f64, f64::ln);

/// Lanes shorter than two vectors, a vector's worth of them at a time: element `i` of `P`
/// lanes side by side in one column, and every step of the one-lane pass applied to whole
/// columns (element `i` into part `i mod P`; a short lane's missing parts are its padding), so
/// that each lane gets the bits its own pass gives it. One lane at a time, each step was a
/// chain of dependent operations on one or two vectors, partly padding (256 float64 lanes of
/// 4, eager: 14 → 5.5 µs).
///
/// The pass is compiled once per lane length `N`, so that every loop in it has a fixed trip
/// count and the columns are built and read back without a loop's bookkeeping (256 float64
/// lanes of 4: 5.6 → 3.3 µs; tiny attention's 4 lanes of 4: 1,137 → 824 instructions,
/// callgrind, and the traced call 5.5% faster, median of 12 paired runs). Lanes of one to two
/// vectors, 256 of them: float64 lanes of 9-15, 22 → 6.5-11 µs; float32 lanes of 17-31,
/// 24 → 10-16 µs. Float64 lanes of 16 or more are not faster side by side (16: 11.5 → 16.9
/// µs), and go one at a time.
macro_rules! short_lanes {
    ($name:ident, $t:ty, $parts:literal, $exp:path, $ln:expr, $opaque:path, $one_lane:ident, $min_lanes:literal) => {
        #[inline(always)]
        fn $name<const N: usize>(buf: &mut [$t], log: bool) {
            const P: usize = $parts;
            // The parts of a padded lane are its elements, one each (a fold's first step
            // from its initial value), then joined pairwise as `fold` joins them.
            #[inline(always)]
            fn tree(parts: &mut [[$t; P]; P], join: impl Fn($t, $t) -> $t) -> [$t; P] {
                let mut width = $opaque(P / 2);
                while width > 0 {
                    let (low, high) = parts.split_at_mut(width);
                    for (a, b) in low.iter_mut().zip(high.iter()) {
                        for (x, &y) in a.iter_mut().zip(b) {
                            *x = join(*x, y);
                        }
                    }
                    width /= 2;
                }
                parts[0]
            }
            for group in buf.chunks_mut(N * P) {
                let lanes = group.len() / N;
                if lanes < $min_lanes {
                    for lane in group.chunks_exact_mut(N) {
                        $one_lane(lane, log);
                    }
                    continue;
                }
                // columns[i][l]: element i of lane l; lanes past the group's end are
                // padding, and their results are not kept.
                let mut columns = [[<$t>::NEG_INFINITY; P]; N];
                for (l, lane) in group.chunks_exact(N).enumerate() {
                    for (i, &v) in lane.iter().enumerate() {
                        columns[i][l] = v;
                    }
                }
                // Element i goes into part i mod P, as in the one-lane pass; parts past
                // a short lane's end are its padding, -inf.
                let mut parts = [[<$t>::NEG_INFINITY; P]; P];
                for (i, column) in columns.iter().enumerate() {
                    for (m, &v) in parts[i % P].iter_mut().zip(column) {
                        *m = if v > *m { v } else { *m };
                    }
                }
                let mut max = tree(&mut parts, <$t>::max);
                for m in max.iter_mut() {
                    if !m.is_finite() {
                        *m = 0.0;
                    }
                }
                // A padded element's part of the sum, in either pass: its exponential,
                // exp(-inf - max) with a finite max, added to 0. Its result is not kept.
                let padding = 0.0 + $exp(<$t>::NEG_INFINITY);
                let mut parts = [[0.0; P]; P];
                for part in parts.iter_mut().skip(N) {
                    *part = [padding; P];
                }
                if log {
                    for (i, column) in columns.iter().enumerate() {
                        for ((s, &v), &m) in parts[i % P].iter_mut().zip(column).zip(&max) {
                            *s = *s + $exp(v - m);
                        }
                    }
                    let sum = tree(&mut parts, |a, b| a + b);
                    let mut ln_sum = [0.0f64; P];
                    for (l, &s) in ln_sum.iter_mut().zip(&sum) {
                        *l = $ln(s);
                    }
                    for column in columns.iter_mut() {
                        for ((o, &m), &l) in column.iter_mut().zip(&max).zip(&ln_sum) {
                            *o = ((f64::from(*o) - f64::from(m)) - l) as $t;
                        }
                    }
                } else {
                    for (i, column) in columns.iter_mut().enumerate() {
                        for ((s, o), &m) in parts[i % P].iter_mut().zip(column.iter_mut()).zip(&max)
                        {
                            *o = $exp(*o - m);
                            *s = *s + *o;
                        }
                    }
                    let sum = tree(&mut parts, |a, b| a + b);
                    let mut inverse = [0.0; P];
                    for (r, &s) in inverse.iter_mut().zip(&sum) {
                        *r = 1.0 / s;
                    }
                    for column in columns.iter_mut() {
                        for (o, &r) in column.iter_mut().zip(&inverse) {
                            *o *= r;
                        }
                    }
                }
                for (l, lane) in group.chunks_exact_mut(N).enumerate().take(lanes) {
                    for (i, o) in lane.iter_mut().enumerate() {
                        *o = columns[i][l];
                    }
                }
            }
        }
    };
}

// Float32's tree goes through an opaque width, which keeps its steps a loop over whole
// columns, one vector each: unrolled, they were vectorized across columns, by gathers and
// scatters (256 lanes of 4: 7.0 → 5.4 µs; float64's unrolled tree is the faster). Its groups
// of 16 lanes cost about what 5 or 6 lanes cost one at a time (lanes of 10: about 1.24 µs
// a call side by side, 0.98 + 0.06 a lane one at a time), so fewer go one at a time.
short_lanes!(
    short_lanes_plain_f32,
    f32,
    16,
    exp_f32,
    |s: f32| f64::from(s).ln(),
    std::hint::black_box,
    lane_f32,
    6
);
short_lanes!(
    short_lanes_plain_f64,
    f64,
    8,
    exp_f64,
    f64::ln,
    std::convert::identity,
    lane_f64,
    1
);

/// `short_lanes_$plain` for lanes of `n` elements, through the copy for `n`,
/// each copy in a wide pass of its own: one pass over all lengths was too large for the
/// compiler to inline into the wide function, and ran in plain x86-64 code.
macro_rules! by_length {
    ($plain:ident, $buf:expr, $n:expr, $log:expr, $($len:literal)*) => {
        match $n {
            $($len => wide_vectors!(short_lanes_avx2, $plain::<$len>($buf, $log)),)*
            n => debug_assert!(n == 0, "a short lane has a copy for its length"),
        }
    };
}

fn short_lanes_f32(buf: &mut [f32], n: usize, log: bool) {
    by_length!(short_lanes_plain_f32, buf, n, log, 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31)
}

fn short_lanes_f64(buf: &mut [f64], n: usize, log: bool) {
    by_length!(short_lanes_plain_f64, buf, n, log, 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
}

/// `body` (whole vectors), then `tail`, folded by `step` into `P` parts (element `i` into part
/// `i mod P`), the parts then combined pairwise by `join` in a fixed order: one fold whatever
/// the vector width.
#[inline(always)]
fn fold<T: Copy, const P: usize>(
    body: &[T],
    tail: Option<&[T; P]>,
    init: T,
    step: impl Fn(T, T) -> T,
    join: impl Fn(T, T) -> T,
) -> T {
    let mut parts = [init; P];
    for c in body.chunks_exact(P).chain(tail.map(|t| t.as_slice())) {
        for (p, &v) in parts.iter_mut().zip(c) {
            *p = step(*p, v);
        }
    }
    join_parts(parts, join)
}

/// A fold's parts combined pairwise by `join` in a fixed order.
#[inline(always)]
fn join_parts<T: Copy, const P: usize>(mut parts: [T; P], join: impl Fn(T, T) -> T) -> T {
    let mut width = P / 2;
    while width > 0 {
        for i in 0..width {
            parts[i] = join(parts[i], parts[i + width]);
        }
        width /= 2;
    }
    parts[0]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::ops::vector_math::tests::awkward_values;

    /// The one-lane pass as its documentation states it, element by element with no padding:
    /// element `i` into part `i mod P`, the parts joined pairwise.
    macro_rules! reference_lane {
        ($name:ident, $t:ty, $parts:literal, $exp:path, $ln:expr) => {
            fn $name(lane: &mut [$t], log: bool) {
                let fold =
                    |init: $t, step: &dyn Fn($t, $t) -> $t, join: fn($t, $t) -> $t, xs: &[$t]| {
                        let mut parts = [init; $parts];
                        for (i, &v) in xs.iter().enumerate() {
                            parts[i % $parts] = step(parts[i % $parts], v);
                        }
                        let mut width = $parts / 2;
                        while width > 0 {
                            for i in 0..width {
                                parts[i] = join(parts[i], parts[i + width]);
                            }
                            width /= 2;
                        }
                        parts[0]
                    };
                let max = fold(
                    <$t>::NEG_INFINITY,
                    &|m, v| if v > m { v } else { m },
                    <$t>::max,
                    lane,
                );
                let max = if max.is_finite() { max } else { 0.0 };
                if log {
                    let sum = fold(0.0, &|s, v| s + $exp(v - max), |a, b| a + b, lane);
                    for o in lane.iter_mut() {
                        *o = ((f64::from(*o) - f64::from(max)) - $ln(sum)) as $t;
                    }
                } else {
                    for o in lane.iter_mut() {
                        *o = $exp(*o - max);
                    }
                    let inverse = 1.0 / fold(0.0, &|s, v| s + v, |a, b| a + b, lane);
                    for o in lane.iter_mut() {
                        *o *= inverse;
                    }
                }
            }
        };
    }
    reference_lane!(reference_f32, f32, 16, exp_f32, |s: f32| f64::from(s).ln());
    reference_lane!(reference_f64, f64, 8, exp_f64, f64::ln);

    /// A lane padded to whole vectors (short, or with a tail) gives the bits of the lane
    /// folded element by element: the padding changes no part.
    #[test]
    fn padding_changes_no_part() {
        let xs = awkward_values();
        for log in [false, true] {
            for n in (1..=40).chain([63, 64, 65, 127, 129]) {
                // Lanes from both ends: the special values are at the end.
                let lanes = xs[..n * 30]
                    .chunks(n)
                    .chain(xs[xs.len() - n * 3..].chunks(n));
                macro_rules! same_bits {
                    ($pass:ident, $reference:ident, $values:expr, $what:literal) => {{
                        let (mut got, mut want) = ($values, $values);
                        $pass(&mut got, log);
                        $reference(&mut want, log);
                        assert!(
                            got.iter()
                                .zip(&want)
                                .all(|(g, w)| g.to_bits() == w.to_bits()),
                            "{} n {n} log {log}",
                            $what
                        );
                    }};
                }
                for lane in lanes {
                    same_bits!(lane_f32, reference_f32, lane.to_vec(), "float32");
                    let wide = || lane.iter().map(|&v| f64::from(v)).collect::<Vec<f64>>();
                    same_bits!(lane_f64, reference_f64, wide(), "float64");
                }
            }
        }
    }

    /// The wide passes (AVX-512 or AVX2, whichever the CPU running the test has) give the bits
    /// the same steps give one lane at a time in code compiled for any x86-64.
    #[test]
    fn the_wide_passes_compute_what_the_plain_steps_compute() {
        let xs = awkward_values();
        for log in [false, true] {
            // Lane counts on both sides of float32's and float64's groups and of the count
            // under which a float32 group goes one lane at a time.
            let counts = [1, 5, 6, 8, 9, 16, 17, 22, usize::MAX];
            for (n, count) in [1, 3, 4, 7, 8, 10, 15, 16, 17, 24, 31, 32, 37, 128]
                .into_iter()
                .flat_map(|n| counts.map(|c| (n, c.min(xs.len() / n))))
            {
                let mut wide = xs[..n * count].to_vec();
                softmax_rows_f32(&mut wide, n, log);
                let mut wide64: Vec<f64> = xs[..n * count].iter().map(|&v| f64::from(v)).collect();
                softmax_rows_f64(&mut wide64, n, log);
                for (k, lane) in xs[..n * count].chunks(n).enumerate() {
                    let mut want = lane.to_vec();
                    lane_f32(std::hint::black_box(&mut want), log);
                    let got = &wide[k * n..(k + 1) * n];
                    assert!(
                        want.iter()
                            .zip(got)
                            .all(|(w, g)| w.to_bits() == g.to_bits())
                    );
                    let mut want: Vec<f64> = lane.iter().map(|&v| f64::from(v)).collect();
                    lane_f64(std::hint::black_box(&mut want), log);
                    let got = &wide64[k * n..(k + 1) * n];
                    assert!(
                        want.iter()
                            .zip(got)
                            .all(|(w, g)| w.to_bits() == g.to_bits())
                    );
                }
            }
        }
    }

    /// A sum with each addition's rounding error carried along (Neumaier's).
    fn exact_sum(xs: impl Iterator<Item = f64>) -> f64 {
        let (mut sum, mut carried) = (0.0f64, 0.0f64);
        for x in xs {
            let t = sum + x;
            carried += if sum.abs() >= x.abs() {
                (sum - t) + x
            } else {
                (x - t) + sum
            };
            sum = t;
        }
        sum + carried
    }

    /// softmax against softmax computed from the same inputs in f64 with glibc's `exp`, a
    /// compensated sum and a division: within a few ulps of it (PyTorch's softmax is no
    /// closer).
    #[test]
    fn softmax_is_within_a_few_ulps() {
        let xs = awkward_values();
        let finite: Vec<f32> = xs.iter().copied().filter(|x| x.abs() < 50.0).collect();
        for n in [1, 7, 16, 37, 128, 1000] {
            for log in [false, true] {
                let lanes = &finite[..finite.len() / n * n];
                let mut got = lanes.to_vec();
                softmax_rows_f32(&mut got, n, log);
                let mut got64: Vec<f64> = lanes.iter().map(|&v| f64::from(v)).collect();
                softmax_rows_f64(&mut got64, n, log);
                for (k, lane) in lanes.chunks_exact(n).enumerate() {
                    let max = lane
                        .iter()
                        .fold(f64::NEG_INFINITY, |m, &v| m.max(f64::from(v)));
                    let sum = exact_sum(lane.iter().map(|&v| (f64::from(v) - max).exp()));
                    for (i, &v) in lane.iter().enumerate() {
                        let want = if log {
                            f64::from(v) - max - sum.ln()
                        } else {
                            (f64::from(v) - max).exp() / sum
                        };
                        // float32: `v - max` rounds to float32 before the exponential, a
                        // relative error of up to half an ulp of the difference, which only
                        // small results (far from the maximum) feel.
                        let argument = (f64::from(v) - max).abs() * f64::from(f32::EPSILON) / 2.0;
                        // float64: the exponential's ulp, the reciprocal's and the product's,
                        // and the rounding of a sum of n/8 terms per part.
                        let ulps64 = (4.0 + (n as f64).sqrt()) * f64::EPSILON;
                        let (bound, bound64) = if log {
                            let scale = want.abs().max(1.0);
                            (4e-7 * scale, ulps64 * scale)
                        } else {
                            ((8e-7 + argument) * want + 1e-44, ulps64 * want)
                        };
                        let g = f64::from(got[k * n + i]);
                        assert!((g - want).abs() <= bound, "n {n} log {log}: {g} vs {want}");
                        let g = got64[k * n + i];
                        assert!(
                            (g - want).abs() <= bound64,
                            "n {n} log {log}: {g:e} vs {want:e}"
                        );
                    }
                }
            }
        }
        let special = [1.0, f32::NAN, 2.0, f32::INFINITY, 1.0, f32::NEG_INFINITY];
        let mut got = special.to_vec();
        softmax_rows_f32(&mut got, 2, false);
        let mut got64: Vec<f64> = special.iter().map(|&v| f64::from(v)).collect();
        softmax_rows_f64(&mut got64, 2, false);
        for got in [got.iter().map(|&v| f64::from(v)).collect(), got64] {
            assert!(got[..2].iter().all(|v| v.is_nan()));
            assert!(got[2] == 0.0 && got[3].is_nan());
            assert_eq!(&got[4..], &[1.0, 0.0]);
        }
    }
}
