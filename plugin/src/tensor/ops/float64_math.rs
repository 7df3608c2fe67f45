//! Float64 `tanh`, `sigmoid`, `erf` and `log` by straight-line arithmetic that the compiler
//! vectorizes (in the wide passes of `vector_math`): within one or two ulps of the exact value,
//! as PyTorch's vectorized float64 kernels (SLEEF's `u10` functions) and glibc's own `tanh` and
//! `erf` are, at a sixth to a third of the library functions' cost (glibc's `tanh` branches per
//! element: 19 ns an element). `sin` and `cos` keep the library functions.

use super::vector_math::{LN2_HI, LN2_LO, exp_f64, split_by_ln2};

/// `exp(x) - 1` in f64 arithmetic for |x| up to 44 (clamped beyond: [`tanh_f64`]'s reach),
/// within about one ulp. As [`exp_f64`], x = n·ln2 + r; then e^x - 1 = 2^n·expm1(r) + (2^n - 1),
/// whose two terms are each nearly exact, and for |x| < ln2/2 (n = 0) expm1(x) itself, with no
/// cancellation: `r + r²·(1/2 + r/6 + ...)`, in which r is x exactly.
#[inline(always)]
fn expm1_f64(x: f64) -> f64 {
    let (n, r) = split_by_ln2(x.clamp(-44.0, 44.0));
    // 1/k! for k = 2..=15: the first term left out is below 2^-60 relative for |r| ≤ 0.35.
    const COEFFS: [f64; 14] = {
        let mut c = [0.0; 14];
        let mut factorial = 1.0;
        let mut k = 0;
        while k < 14 {
            factorial *= (k + 2) as f64;
            c[k] = 1.0 / factorial;
            k += 1;
        }
        c
    };
    let h = COEFFS
        .iter()
        .rev()
        .skip(1)
        .fold(COEFFS[13], |h, &c| h.mul_add(r, c));
    let p = (r * r).mul_add(h, r);
    // 2^n is a normal f64 for n in -64..=64; 2^n - 1 is exact for n ≤ 53 and rounds to 2^n,
    // as the sum does, above.
    let scale = f64::from_bits(((n + 1023) as u64) << 52);
    scale.mul_add(p, scale - 1.0)
}

/// `tanh(x)` in f64 arithmetic, without a branch: with a = |x| and t = e^(±2a) - 1 from
/// [`expm1_f64`], tanh(a) = 1 - 2/(t + 2) for a ≥ 1 and -t/(t + 2) below, where t = e^(-2a) - 1
/// keeps a small result's relative accuracy (glibc's steps); ±1 from a = 22 on (1 - tanh(22) is
/// below 2^-63). Each quotient is corrected for the rounding of its divisor and its own, which
/// glibc leaves out. Measured against the exact values (81,000 points from 10^-6 to 25, with
/// Python's `decimal`): at most 2.02 ulps off, 1.1 below 1/8 and 0.72 from 1 on; glibc's
/// `tanh` at most 2.06, with half again as many results a whole ulp or more off.
#[inline(always)]
pub fn tanh_f64(x: f64) -> f64 {
    let a = x.abs();
    let far = a >= 1.0;
    let t = expm1_f64(if far { 2.0 * a } else { -2.0 * a });
    // s + e = t + 2 exactly (Fast2Sum: |t| ≥ 2 where a ≥ 1, and |t| < 2 below).
    let s = t + 2.0;
    let e = if far { (t - s) + 2.0 } else { (2.0 - s) + t };
    // The quotient n/(s + e), n = 2 or -t: q = n/s rounded, and its remainder n - q·s exactly.
    let n = if far { 2.0 } else { -t };
    let q = n / s;
    let correction = ((-q).mul_add(s, n) - q * e) / s;
    let z = if far {
        1.0 - (q + correction)
    } else {
        q + correction
    };
    // NaN fails `a >= 22` and takes `z`, which is NaN.
    let z = if a >= 22.0 { 1.0 } else { z };
    z.copysign(x)
}

/// `sigmoid(x)` = 1/(1 + e^-x) in f64 arithmetic, from [`exp_f64`]: within two ulps of the
/// exact value (1.98 at most, measured as for [`tanh_f64`]).
#[inline(always)]
pub fn sigmoid_f64(x: f64) -> f64 {
    1.0 / (1.0 + exp_f64(-x))
}

/// `erf(x)` in f64 arithmetic without a branch, by fdlibm's method and coefficients (those of
/// the `libm` crate's `erf`, which it replaces, and of glibc's): every range's formula is
/// computed and the one for |x| chosen, so that the loop is a vectorized one. Where fdlibm
/// calls `exp`, this takes [`exp_f64`]; its polynomials' steps are fused multiply-adds; and for
/// 0.84375 ≤ |x| < 1.25 it takes fdlibm's own later formula, `erx + P/Q` (one rounding where
/// `1 - (1 - erx - P/Q)` has three). Measured against the exact values (75,000 points from
/// 10^-9 to 6.5, with mpmath): at most 0.93 ulp off, as the library's.
///
/// The coefficients: Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
/// Developed at SunPro, a Sun Microsystems, Inc. business. Permission to use, copy, modify,
/// and distribute this software is freely granted, provided that this notice is preserved.
#[inline(always)]
pub fn erf_f64(x: f64) -> f64 {
    /// `c[0] + z·(c[1] + z·(...))`, each step one fused multiply-add (fdlibm's steps are a
    /// multiply and an add: half as many instructions, each step's error no larger).
    #[inline(always)]
    fn poly(z: f64, c: &[f64]) -> f64 {
        c.iter()
            .rev()
            .skip(1)
            .fold(c[c.len() - 1], |p, &k| p.mul_add(z, k))
    }
    const ERX: f64 = 8.45062911510467529297e-01;
    const EFX8: f64 = 1.02703333676410069053e+00;
    const PP: [f64; 5] = [
        1.28379167095512558561e-01,
        -3.25042107247001499370e-01,
        -2.84817495755985104766e-02,
        -5.77027029648944159157e-03,
        -2.37630166566501626084e-05,
    ];
    const QQ: [f64; 6] = [
        1.0,
        3.97917223959155352819e-01,
        6.50222499887672944485e-02,
        5.08130628187576562776e-03,
        1.32494738004321644526e-04,
        -3.96022827877536812320e-06,
    ];
    const PA: [f64; 7] = [
        -2.36211856075265944077e-03,
        4.14856118683748331666e-01,
        -3.72207876035701323847e-01,
        3.18346619901161753674e-01,
        -1.10894694282396677476e-01,
        3.54783043256182359371e-02,
        -2.16637559486879084300e-03,
    ];
    const QA: [f64; 7] = [
        1.0,
        1.06420880400844228286e-01,
        5.40397917702171048937e-01,
        7.18286544141962662868e-02,
        1.26171219808761642112e-01,
        1.36370839120290507362e-02,
        1.19844998467991074170e-02,
    ];
    const RA: [f64; 8] = [
        -9.86494403484714822705e-03,
        -6.93858572707181764372e-01,
        -1.05586262253232909814e+01,
        -6.23753324503260060396e+01,
        -1.62396669462573470355e+02,
        -1.84605092906711035994e+02,
        -8.12874355063065934246e+01,
        -9.81432934416914548592e+00,
    ];
    const SA: [f64; 9] = [
        1.0,
        1.96512716674392571292e+01,
        1.37657754143519042600e+02,
        4.34565877475229228821e+02,
        6.45387271733267880336e+02,
        4.29008140027567833386e+02,
        1.08635005541779435134e+02,
        6.57024977031928170135e+00,
        -6.04244152148580987438e-02,
    ];
    const RB: [f64; 7] = [
        -9.86494292470009928597e-03,
        -7.99283237680523006574e-01,
        -1.77579549177547519889e+01,
        -1.60636384855821916062e+02,
        -6.37566443368389627722e+02,
        -1.02509513161107724954e+03,
        -4.83519191608651397019e+02,
    ];
    const SB: [f64; 8] = [
        1.0,
        3.03380607434824582924e+01,
        3.25792512996573918826e+02,
        1.53672958608443695994e+03,
        3.19985821950859553908e+03,
        2.55305040643316442583e+03,
        4.74528541206955367215e+02,
        -2.24409524465858183362e+01,
    ];
    let a = x.abs();
    // Each range's P/Q, of its own variable, with one division for all: the polynomials of
    // every range are computed for every element (the loop is vectorized), the quotient once.
    // |x| < 0.84375: x + x·P/Q of x²; 0.84375 ≤ |x| < 1.25: erf(1) rounded to 24 bits, plus
    // P/Q of |x| - 1; 1.25 ≤ |x| < 6: 1 - erfc, erfc = exp(-x² - 0.5625 + R/S of 1/x²) / x,
    // with x² split into z² (exact: z is |x| cut to its 21 high bits) and (z - |x|)(z + |x|).
    let z = a * a;
    let s = a - 1.0;
    let w = 1.0 / (a * a);
    let (numerator, denominator) = if a < 0.84375 {
        (poly(z, &PP), poly(z, &QQ))
    } else if a < 1.25 {
        (poly(s, &PA), poly(s, &QA))
    } else if a < 1.0 / 0.35 {
        (poly(w, &RA), poly(w, &SA))
    } else {
        (poly(w, &RB), poly(w, &SB))
    };
    let q = numerator / denominator;
    // For |x| < 2^-28 (where x·x underflows) x·(1 + efx).
    let near = if a < 3.725_290_298_461_914e-9 {
        0.125 * (8.0 * a + EFX8 * a)
    } else {
        a + a * q
    };
    let middle = ERX + q;
    let zz = f64::from_bits(a.to_bits() & 0xffff_ffff_0000_0000);
    let far = 1.0 - exp_f64(-zz * zz - 0.5625) * exp_f64((zz - a) * (zz + a) + q) / a;
    let y = if a < 0.84375 {
        near
    } else if a < 1.25 {
        middle
    } else if a < 6.0 {
        far
    } else {
        1.0
    };
    // NaN stays NaN (it took the last branch).
    if a.is_nan() { x } else { y.copysign(x) }
}

/// `ln(x)` in f64 arithmetic without a branch, by fdlibm's method as musl writes it (the `libm`
/// crate's `log`, whose bits it gives: the same operations in the same order, none fused):
/// x = 2^k·m with m in [√2/2, √2), then ln(m) = f - f²/2 + s·(f²/2 + R(s²)), f = m - 1,
/// s = f/(2 + f). Within one ulp of the exact value (glibc's table-driven `log`, which it
/// replaces, within 0.52, branches and looks up a table per element: 5 ns an element).
#[inline(always)]
pub fn log_f64(x: f64) -> f64 {
    const LG: [f64; 7] = [
        6.666666666666735130e-01,
        3.999999999940941908e-01,
        2.857142874366239149e-01,
        2.222219843214978396e-01,
        1.818357216161805012e-01,
        1.531383769920937332e-01,
        1.479819860511658591e-01,
    ];
    // A subnormal scaled up by 2^54 (its exponent taken back in k).
    let subnormal = x < f64::MIN_POSITIVE;
    let scaled = if subnormal {
        x * 18_014_398_509_481_984.0
    } else {
        x
    };
    let bits = scaled.to_bits();
    // The high word moved so that m's range [√2/2, √2) starts an exponent: k is then its
    // exponent, and m the mantissa put back under the exponent of [√2/2, 1).
    let high = ((bits >> 32) as u32).wrapping_add(0x3ff0_0000 - 0x3fe6_a09e);
    let k = (high >> 20) as i32 - 0x3ff - if subnormal { 54 } else { 0 };
    let high = (high & 0x000f_ffff) + 0x3fe6_a09e;
    let m = f64::from_bits((u64::from(high) << 32) | (bits & 0xffff_ffff));
    let f = m - 1.0;
    let hfsq = 0.5 * f * f;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * (LG[1] + w * (LG[3] + w * LG[5]));
    let t2 = z * (LG[0] + w * (LG[2] + w * (LG[4] + w * LG[6])));
    let r = t2 + t1;
    let dk = f64::from(k);
    let y = s * (hfsq + r) + dk * LN2_LO - hfsq + f + dk * LN2_HI;
    if x == 0.0 {
        f64::NEG_INFINITY
    } else if x.is_nan() {
        x
    } else if x < 0.0 {
        f64::NAN
    } else if x == f64::INFINITY {
        x
    } else {
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::ops::vector_math::tests::{awkward_values, same_as_plain};

    /// Ulps between two f64 results of the same sign.
    fn ulps(a: f64, b: f64) -> i64 {
        (a.to_bits() as i64 - b.to_bits() as i64).abs()
    }

    /// Every `step`-th f64 of `lo..hi` (both positive) and its negation: `f` against the library
    /// function (`want`), at most `max_ulps` apart; the number of results that differ.
    fn against_library(
        f: fn(f64) -> f64,
        want: fn(f64) -> f64,
        lo: f64,
        hi: f64,
        step: u64,
        max_ulps: i64,
    ) -> usize {
        let mut differ = 0;
        let mut x = lo;
        while x < hi {
            for x in [x, -x] {
                let (got, want) = (f(x), want(x));
                assert!(ulps(got, want) <= max_ulps, "{x:e}: {got:e} vs {want:e}");
                differ += usize::from(got != want);
            }
            x = f64::from_bits(x.to_bits() + step);
        }
        differ
    }

    /// `f` gives each pair's value exactly (its bits; any NaN for a NaN).
    fn exactly(f: fn(f64) -> f64, pairs: &[(f64, f64)]) {
        for &(x, want) in pairs {
            let got = f(x);
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "f({x:e}) = {got:e}, not {want:e}"
            );
        }
    }

    /// Within four ulps of glibc's `tanh` (each is within about two of the exact value; see
    /// `tanh_f64`), from the subnormals to where tanh is ±1, and exactly the special values.
    #[test]
    fn the_float64_tanh_is_within_four_ulps_of_the_librarys() {
        // 2.3 million values, about 10^5 per binade, and 10^6 more between 0.25 and 22,
        // where the two formulas meet (at 1) and the exponential is used.
        let n = against_library(tanh_f64, f64::tanh, 1e-310, 30.0, 1 << 45, 4)
            + against_library(tanh_f64, f64::tanh, 0.25, 22.0, 1 << 42, 4);
        assert!(n < 3_300_000 / 4, "{n} of 3.3 million results differ");
        exactly(
            tanh_f64,
            &[
                (0.0, 0.0),
                (-0.0, -0.0),
                (f64::INFINITY, 1.0),
                (f64::NEG_INFINITY, -1.0),
                (22.0, 1.0),
                (1e300, 1.0),
                (5e-324, 5e-324),
                (1e-20, 1e-20),
                (f64::NAN, f64::NAN),
            ],
        );
    }

    /// Within two ulps of 1/(1 + e^-x) computed with glibc's `exp`, from where it is 0 to
    /// where it is 1.
    #[test]
    fn the_float64_sigmoid_is_within_two_ulps_of_the_librarys() {
        let library = |x: f64| 1.0 / (1.0 + (-x).exp());
        let n = against_library(sigmoid_f64, library, 1e-310, 800.0, 1 << 45, 2);
        assert!(n < 2_400_000 / 4, "{n} of 2.4 million results differ");
        exactly(
            sigmoid_f64,
            &[
                (0.0, 0.5),
                (f64::INFINITY, 1.0),
                (f64::NEG_INFINITY, 0.0),
                (-800.0, 0.0),
                (f64::NAN, f64::NAN),
            ],
        );
    }

    /// Within one ulp of the `libm` crate's `erf` (fdlibm's, as glibc's: within one ulp of the
    /// exact value), and exactly the special values.
    #[test]
    fn the_float64_erf_is_within_one_ulp_of_the_librarys() {
        let n = against_library(erf_f64, libm::erf, 1e-310, 8.0, 1 << 45, 1)
            + against_library(erf_f64, libm::erf, 0.5, 6.5, 1 << 41, 1);
        // Where they differ (one in 10^4), by the rounding of an `exp` or of `erx + P/Q`.
        assert!(n < 3_000, "{n} of 3 million results differ");
        exactly(
            erf_f64,
            &[
                (0.0, 0.0),
                (-0.0, -0.0),
                (f64::INFINITY, 1.0),
                (f64::NEG_INFINITY, -1.0),
                (6.0, 1.0),
                (-1e300, -1.0),
                (f64::NAN, f64::NAN),
            ],
        );
        assert_eq!(erf_f64(5e-324), libm::erf(5e-324));
    }

    /// The bits of the `libm` crate's `log` (the same steps), and within one ulp of glibc's
    /// (itself within 0.52 of the exact value), from the subnormals to the largest float64.
    #[test]
    fn the_float64_log_is_the_libm_crates() {
        let mut x = 5e-324f64;
        let mut differ = 0;
        while x < f64::MAX {
            let got = log_f64(x);
            assert_eq!(got.to_bits(), libm::log(x).to_bits(), "log({x:e})");
            assert!(
                ulps(got, x.ln()) <= 1,
                "log({x:e}): {got:e} vs {:e}",
                x.ln()
            );
            differ += usize::from(got != x.ln());
            x = f64::from_bits(x.to_bits() + (1 << 40) + 12_345);
        }
        // About one in a thousand, by an ulp.
        assert!(
            differ < 20_000,
            "{differ} of 8.4 million results differ from glibc's"
        );
        exactly(
            log_f64,
            &[
                (1.0, 0.0),
                (0.0, f64::NEG_INFINITY),
                (-0.0, f64::NEG_INFINITY),
                (f64::INFINITY, f64::INFINITY),
                (-1.0, f64::NAN),
                (f64::NEG_INFINITY, f64::NAN),
                (f64::NAN, f64::NAN),
            ],
        );
    }

    /// The wide passes give the bits the same steps give one element at a time.
    #[test]
    fn the_wide_passes_compute_what_the_plain_steps_compute() {
        let xs: Vec<f64> = awkward_values()
            .iter()
            .map(|&x| f64::from(x) * 25.0)
            .collect();
        same_as_plain(&xs, tanh_f64);
        same_as_plain(&xs, sigmoid_f64);
        same_as_plain(&xs, erf_f64);
        same_as_plain(&xs, log_f64);
    }
}
