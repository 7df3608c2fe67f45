//! `exp` and `erf` for float32 tensors, evaluated in f64 by straight-line arithmetic that
//! the compiler vectorizes: libm's `erff` and glibc's `exp` branch per element, and cost
//! several times more than the arithmetic. Both are accurate to about 1e-11 relative in f64,
//! far below float32's half ulp (6e-8), so their results round to float32 as the exact values
//! do, except where an exact value lies within 1e-11 of a rounding boundary (about one in
//! 10^4 for erf; never more than one ulp away).
//!
//! Float64 tensors keep the library functions: these would not be accurate to float64.

/// `exp(x)` for a float32 `x` given as f64, to about 1e-11 relative; the caller rounds the
/// result to float32 (which gives `inf` above float32's range and 0 below it).
#[inline(always)]
pub fn exp_for_f32(x: f64) -> f64 {
    // Beyond these bounds the float32 result is `inf` or 0 whatever the exact value; clamping
    // keeps the scale below a valid f64 exponent. NaN stays NaN through `clamp`.
    let x = x.clamp(-110.0, 100.0);
    // x = n·ln2 + r with |r| ≤ ln2/2: n is x·log2(e) rounded to the nearest integer, taken
    // from the low bits of a sum with 1.5·2^52 (no float-to-int conversion, which AVX2 lacks).
    const ROUNDER: f64 = 6755399441055744.0;
    let shifted = x * std::f64::consts::LOG2_E + ROUNDER;
    let n = shifted - ROUNDER;
    let r = x - n * std::f64::consts::LN_2;
    // Taylor series to r^10: the first term left out is below 2^-34 relative for |r| ≤ 0.35.
    // Evaluated in Estrin's pairs (a shorter chain of dependent operations than Horner's).
    let r2 = r * r;
    let r4 = r2 * r2;
    let r8 = r4 * r4;
    let p01 = 1.0 + r;
    let p23 = 1.0 / 2.0 + r * (1.0 / 6.0);
    let p45 = 1.0 / 24.0 + r * (1.0 / 120.0);
    let p67 = 1.0 / 720.0 + r * (1.0 / 5040.0);
    let p89 = 1.0 / 40320.0 + r * (1.0 / 362880.0);
    let p10 = 1.0 / 3628800.0;
    let p = (p01 + r2 * p23) + r4 * (p45 + r2 * p67) + r8 * (p89 + r2 * p10);
    // 2^n built from its exponent bits: n is in -159..=145, well inside f64's range.
    let n_bits = shifted.to_bits().wrapping_sub(ROUNDER.to_bits());
    let scale = f64::from_bits(n_bits.wrapping_add(1023) << 52);
    p * scale
}

/// The bound beyond which `erf` rounds to ±1 in float32: `1 - erf(3.92)` is below 2^-25.
const ERF_SATURATION: f64 = 3.92;

/// `erf(x)` for a float32 `x` given as f64: `x·P(x²)/Q(x²)` on |x| ≤ 3.92, fitted for
/// relative error (below 1e-11 over the whole interval); ±1 beyond. The coefficients come from
/// `tests/tensor/fit_erf.py`.
#[inline(always)]
pub fn erf_for_f32(x: f64) -> f64 {
    const P: [f64; 8] = [
        1.128_379_167_090_564,
        0.196_576_794_838_749_38,
        0.057_548_330_413_168_87,
        0.004_788_972_289_561_904,
        0.000_502_446_355_181_749,
        2.067_881_507_891_568_2e-5,
        7.486_588_733_361_509e-7,
        3.129_960_528_861_058e-9,
    ];
    const Q: [f64; 8] = [
        1.0,
        0.507_544_981_600_349_6,
        0.120_182_542_583_358_49,
        0.017_359_981_932_596_93,
        0.001_668_476_260_014_234_2,
        0.000_107_790_850_616_131_43,
        4.356_181_334_756_426e-6,
        7.482_137_379_175_51e-8,
    ];
    let c = x.clamp(-ERF_SATURATION, ERF_SATURATION);
    let z = c * c;
    let p = P.iter().rev().fold(0.0, |acc, &k| acc * z + k);
    let q = Q.iter().rev().fold(0.0, |acc, &k| acc * z + k);
    c * p / q
}

/// Runs `body` compiled for AVX-512 or AVX2 where the CPU has it: wider vectors, the same
/// operations in the same order (Rust never fuses a multiply and an add), so the same results
/// everywhere. AVX-512 took the float32 softmax of 8×128×128 from 161 to 114 µs on one thread
/// (PyTorch: 56).
macro_rules! wide_vectors {
    ($name:ident, $body:expr) => {{
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx512f")]
            unsafe fn wide512<R>(f: impl FnOnce() -> R) -> R {
                f()
            }
            #[target_feature(enable = "avx2")]
            unsafe fn $name<R>(f: impl FnOnce() -> R) -> R {
                f()
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: the CPU has AVX-512F.
                return unsafe { wide512(|| $body) };
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2.
                return unsafe { $name(|| $body) };
            }
        }
        $body
    }};
}

/// `f` over a float32 slice, through f64, into a new vector, in one vectorized pass.
pub fn map_through_f64(xs: &[f32], f: impl Fn(f64) -> f64 + Sync) -> Vec<f32> {
    // A plain loop over a zeroed vector: `collect` would be a call compiled without AVX2.
    let mut out = vec![0f32; xs.len()];
    super::parallel::by_lanes(xs, &mut out, 1, |xs, out| {
        wide_vectors!(map_avx2, {
            for (o, &x) in out.iter_mut().zip(xs) {
                *o = f(f64::from(x)) as f32;
            }
        })
    });
    out
}

/// softmax (or log_softmax) of each run of `n` elements of `buf` (which holds whole runs), in
/// place, computed in f64 with [`exp_for_f32`] and rounded to float32: the same steps as the
/// float64 lane (`reduce::softmax_lane`), with the sums taken in four interleaved parts so
/// that they vectorize. Eager execution and lowered graphs both go through here.
pub fn softmax_rows_f32(buf: &mut [f32], n: usize, log: bool) {
    wide_vectors!(softmax_avx2, {
        let mut exps = vec![0f64; n];
        for lane in buf.chunks_exact_mut(n) {
            // The maximum of the float32 values is that of their f64 widenings.
            let max = lane.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
            let max = if max.is_finite() { f64::from(max) } else { 0.0 };
            for (e, &v) in exps.iter_mut().zip(&*lane) {
                *e = exp_for_f32(f64::from(v) - max);
            }
            let sum = sum4(&exps);
            if log {
                let ln_sum = sum.ln();
                for o in lane.iter_mut() {
                    *o = (f64::from(*o) - max - ln_sum) as f32;
                }
            } else {
                // A product by the reciprocal instead of a division (several times the
                // cost): both are within 3e-16 of the exact quotient, so they round to the
                // same float32 except within 3e-16 of a rounding boundary, about one
                // result in 10^8.
                let inverse = 1.0 / sum;
                for (o, &e) in lane.iter_mut().zip(&exps) {
                    *o = (e * inverse) as f32;
                }
            }
        }
    })
}

/// The sum of `xs` in four parts (elements `i ≡ 0, 1, 2, 3 mod 4`) added at the end, a fixed
/// order whatever the vector width.
#[inline(always)]
fn sum4(xs: &[f64]) -> f64 {
    let mut parts = [0f64; 4];
    let chunks = xs.chunks_exact(4);
    let rest = chunks.remainder();
    for c in chunks {
        for (p, &x) in parts.iter_mut().zip(c) {
            *p += x;
        }
    }
    for (p, &x) in parts.iter_mut().zip(rest) {
        *p += x;
    }
    (parts[0] + parts[1]) + (parts[2] + parts[3])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every 97th float32 of `lo..hi` (both positive), against the correctly rounded value
    /// (the f64 library functions are accurate to far better than float32).
    fn compare(f: fn(f64) -> f64, exact: fn(f64) -> f64, lo: f32, hi: f32) -> usize {
        let mut off_by_one = 0;
        let mut x = lo;
        while x < hi {
            let got = f(f64::from(x)) as f32;
            let want = exact(f64::from(x)) as f32;
            if got != want {
                let ulps = (got.to_bits() as i64 - want.to_bits() as i64).abs();
                assert!(ulps <= 1, "{x}: {got} vs {want}");
                off_by_one += 1;
            }
            x = f32::from_bits(x.to_bits() + 97);
        }
        off_by_one
    }

    #[test]
    fn erf_rounds_as_the_exact_value() {
        let n = compare(erf_for_f32, libm::erf, 1e-30, 10.0)
            + compare(|x| -erf_for_f32(-x), libm::erf, 1e-30, 10.0);
        // About one in 10^4 lands on the other side of a rounding boundary, never further.
        assert!(n < 5_000, "{n} of 17.8 million results off by one ulp");
        assert_eq!(erf_for_f32(0.0), 0.0);
        assert!(erf_for_f32(f64::NAN).is_nan());
        assert_eq!(erf_for_f32(f64::INFINITY) as f32, 1.0);
        assert_eq!(erf_for_f32(f64::NEG_INFINITY) as f32, -1.0);
    }

    /// Values with every sign, size and special case float32 has.
    fn awkward_values() -> Vec<f32> {
        let mut xs: Vec<f32> = (0..4099)
            .map(|i| ((i as f32) * 0.7311).sin() * 30.0)
            .collect();
        xs.extend([
            0.0, -0.0, 1e-40, -1e-40, 88.7, 89.0, -103.9, -104.0, 1e30, -1e30,
        ]);
        xs.extend([
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MAX,
            f32::MIN,
        ]);
        xs
    }

    /// The wide passes (AVX-512 or AVX2, whichever the CPU running the test has) give the bits
    /// the same steps give one element at a time in code compiled for any x86-64.
    #[test]
    fn the_wide_passes_compute_what_the_plain_steps_compute() {
        let xs = awkward_values();
        let plain: Vec<f32> = xs
            .iter()
            .map(|&x| std::hint::black_box(exp_for_f32(f64::from(x))) as f32)
            .collect();
        let wide = map_through_f64(&xs, exp_for_f32);
        assert!(
            plain
                .iter()
                .zip(&wide)
                .all(|(p, w)| p.to_bits() == w.to_bits())
        );
        for log in [false, true] {
            let n = 37;
            let mut wide = xs[..n * 100].to_vec();
            softmax_rows_f32(&mut wide, n, log);
            for (lane, got) in xs[..n * 100].chunks(n).zip(wide.chunks(n)) {
                let max = lane.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v));
                let max = if max.is_finite() { f64::from(max) } else { 0.0 };
                let exps: Vec<f64> = lane
                    .iter()
                    .map(|&v| std::hint::black_box(exp_for_f32(f64::from(v) - max)))
                    .collect();
                let sum = sum4(&exps);
                let want: Vec<f32> = if log {
                    let ln_sum = sum.ln();
                    lane.iter()
                        .map(|&v| (f64::from(v) - max - ln_sum) as f32)
                        .collect()
                } else {
                    exps.iter().map(|&e| (e * (1.0 / sum)) as f32).collect()
                };
                assert!(
                    want.iter()
                        .zip(got)
                        .all(|(w, g)| w.to_bits() == g.to_bits())
                );
            }
        }
    }

    #[test]
    fn exp_rounds_as_the_exact_value() {
        let n = compare(exp_for_f32, f64::exp, 1e-30, 100.0)
            + compare(|x| exp_for_f32(-x), |x| (-x).exp(), 1e-30, 120.0);
        assert!(n < 20, "{n} results off by one ulp");
        assert_eq!(exp_for_f32(f64::NEG_INFINITY) as f32, 0.0);
        assert_eq!(exp_for_f32(f64::INFINITY) as f32, f32::INFINITY);
        assert!(exp_for_f32(f64::NAN).is_nan());
        assert_eq!(exp_for_f32(0.0), 1.0);
    }
}
