//! Elementary functions evaluated by straight-line arithmetic that the compiler vectorizes.
//!
//! `exp`, `erf` and `tanh` for float32 tensors, evaluated in f64 by straight-line arithmetic that
//! the compiler vectorizes: libm's `erff` and glibc's `exp` branch per element, and cost
//! several times more than the arithmetic. Both are accurate to about 1e-11 relative in f64,
//! far below float32's half ulp (6e-8), so their results round to float32 as the exact values
//! do, except where an exact value lies within 1e-11 of a rounding boundary (about one in
//! 10^4 for erf; never more than one ulp away).
//!
//! softmax, whose cost is its exponentials, takes its own: [`exp_f32`] in float32 arithmetic
//! and [`exp_f64`] in f64, each within one ulp, as PyTorch's softmax does (SLEEF's).
//!
//! Float64 `exp` is [`exp_f64`]; `tanh`, `sigmoid` and `erf` are in `float64_math`.
//!
//! The wide passes: [`map_wide`] (a new vector, by parts on rayon's threads when large),
//! [`map_into`] and [`map_in_place`] compile a loop over elements for AVX-512 or AVX2 with FMA.

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

/// `tanh(x)` for a float32 `x` given as f64, to about 1e-11 relative: odd; for |x| ≥ 0.3,
/// 1 - 2/(e^2|x| + 1) from [`exp_for_f32`] (the difference loses at most a factor 3.5 of the
/// exponential's accuracy there, and ±1 comes out beyond float32's reach of it); below,
/// Taylor's series to x^15, whose first term left out is below 3e-12 relative. libm's `tanh`
/// branches per element and cost 11 ns an element, ten times this.
#[inline(always)]
pub fn tanh_for_f32(x: f64) -> f64 {
    // The series' coefficients: 2^2n (2^2n - 1) B_2n / (2n)! for x^(2n-1), n = 2..=8.
    const SERIES: [f64; 7] = [
        -1.0 / 3.0,
        2.0 / 15.0,
        -17.0 / 315.0,
        62.0 / 2835.0,
        -1382.0 / 155_925.0,
        21844.0 / 6_081_075.0,
        -929_569.0 / 638_512_875.0,
    ];
    let a = x.abs();
    let z = a * a;
    let near = a + a * z * SERIES.iter().rev().fold(0.0, |acc, &c| acc * z + c);
    let far = 1.0 - 2.0 / (exp_for_f32(2.0 * a) + 1.0);
    // NaN takes `far`, which stays NaN.
    let t = if a < 0.3 { near } else { far };
    t.copysign(x)
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

/// Runs `body` compiled for AVX-512 or AVX2 (both with FMA) where the CPU has it: wider
/// vectors, the same operations in the same order (Rust fuses a multiply and an add only where
/// asked, by `mul_add`, whose result is exact-then-rounded on any CPU), so the same results
/// everywhere.
macro_rules! wide_vectors {
    ($name:ident, $body:expr) => {{
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx512f,avx2,fma")]
            unsafe fn wide512<R>(f: impl FnOnce() -> R) -> R {
                f()
            }
            #[target_feature(enable = "avx2,fma")]
            unsafe fn $name<R>(f: impl FnOnce() -> R) -> R {
                f()
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: the CPU has AVX-512F.
                return unsafe { wide512(|| $body) };
            }
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                // SAFETY: the CPU has AVX2 and FMA.
                return unsafe { $name(|| $body) };
            }
        }
        $body
    }};
}
pub(crate) use wide_vectors;

/// `f` over a slice into a new vector, in one vectorized pass (by parts on rayon's threads
/// when large). `f` is a closure marked `#[inline(always)]`: a large element function (float64
/// `erf`) was otherwise left out of the pass, compiled without FMA, and ran eight times slower
/// than in a plain loop.
pub fn map_wide<T: Copy + Sync, U: Copy + Default + Send>(
    xs: &[T],
    f: impl Fn(T) -> U + Sync,
) -> Vec<U> {
    // A plain loop over a zeroed vector: `collect` would be a call compiled without AVX2.
    let mut out = vec![U::default(); xs.len()];
    // `f` called, not passed on: `&F` as the element function is a call that the compiler
    // may leave out of line, compiled without FMA.
    super::parallel::by_lanes(xs, &mut out, 1, |xs, out| {
        map_into(
            xs,
            out,
            #[inline(always)]
            |x| f(x),
        )
    });
    out
}

/// A function whose body (a loop over elements) is compiled for AVX-512 or AVX2 (both with
/// FMA) where the CPU has it, as [`wide_vectors!`] does, but with the body in each wrapper's
/// own code rather than in a closure that the compiler may leave out of line (and compile
/// without FMA, each fused multiply-add a library call).
macro_rules! wide_fn {
    ($(#[$m:meta])* $vis:vis fn $name:ident<$($g:ident $(: $b:path)?),*>($($arg:ident: $ty:ty),*) $body:block) => {
        $(#[$m])*
        $vis fn $name<$($g $(: $b)?),*>($($arg: $ty),*) {
            #[inline(always)]
            fn each<$($g $(: $b)?),*>($($arg: $ty),*) $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx512f,avx2,fma")]
                unsafe fn wide512<$($g $(: $b)?),*>($($arg: $ty),*) {
                    each($($arg),*)
                }
                #[target_feature(enable = "avx2,fma")]
                unsafe fn wide256<$($g $(: $b)?),*>($($arg: $ty),*) {
                    each($($arg),*)
                }
                if std::arch::is_x86_feature_detected!("avx512f") {
                    // SAFETY: the CPU has AVX-512F.
                    return unsafe { wide512($($arg),*) };
                }
                if std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
                {
                    // SAFETY: the CPU has AVX2 and FMA.
                    return unsafe { wide256($($arg),*) };
                }
            }
            each($($arg),*)
        }
    };
}

pub(crate) use wide_fn;

wide_fn! {
    /// `f` of each element of `xs` into `out` (of the same length), in one vectorized pass.
    #[inline(always)]
    pub fn map_into<T: Copy, U>(xs: &[T], out: &mut [U], f: impl Fn(T) -> U) {
        for (o, &x) in out.iter_mut().zip(xs) {
            *o = f(x);
        }
    }
}

wide_fn! {
    /// `f` of each element of `buf`, in place, in one vectorized pass.
    #[inline(always)]
    pub fn map_in_place<T: Copy>(buf: &mut [T], f: impl Fn(T) -> T) {
        for x in buf.iter_mut() {
            *x = f(*x);
        }
    }
}

/// `exp(x)` in float32 arithmetic, within about one ulp of the exact value (not always the
/// correctly rounded one, as [`exp_for_f32`] is): sixteen lanes to a 512-bit vector instead of
/// eight, for softmax, whose exponentials dominate its cost. Every step is a rounding-exact
/// IEEE operation or a fused multiply-add, so the result is the same on any x86-64 (the FMA
/// instruction where the CPU has it, the library's exact `fmaf` where not).
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    // Beyond these bounds the result is `inf` or 0; clamping keeps the scale's exponent
    // within reach. NaN stays NaN through `clamp`.
    let x = x.clamp(-104.0, 89.0);
    // x = n·ln2 + r, n the nearest integer to x·log2(e), from the low bits of a sum with
    // 1.5·2^23; ln2 in two parts (Cody and Waite) so that r is nearly exact.
    const ROUNDER: f32 = 12_582_912.0;
    const LN2_HI: f32 = 0.693_145_751_953_125;
    const LN2_LO: f32 = 1.428_606_765_330_187e-6;
    let shifted = x.mul_add(std::f32::consts::LOG2_E, ROUNDER);
    let n = shifted - ROUNDER;
    let r = (-n).mul_add(LN2_HI, x);
    let r = (-n).mul_add(LN2_LO, r);
    // Taylor series to r^7 (|r| ≤ 0.35: the first term left out is below 2^-27 relative).
    let p = (1.0 / 5040.0f32).mul_add(r, 1.0 / 720.0);
    let p = p.mul_add(r, 1.0 / 120.0);
    let p = p.mul_add(r, 1.0 / 24.0);
    let p = p.mul_add(r, 1.0 / 6.0);
    let p = p.mul_add(r, 0.5);
    let p = p.mul_add(r, 1.0);
    let p = p.mul_add(r, 1.0);
    // 2^n as two factors, each a normal float32 for n in -150..=128, so that a subnormal
    // result is rounded once, by the last product.
    let n = shifted.to_bits().wrapping_sub(ROUNDER.to_bits()) as i32;
    let half = n >> 1;
    let scale = |e: i32| f32::from_bits(((e + 127) as u32) << 23);
    // At the lower bound (-inf, a mask's -1e9) the result is 0: a zero factor gives it
    // without an underflow, which costs the CPU a microcode assist (an exp over 4096 such
    // elements took 16.3 µs instead of 1.3).
    let low = if x > -104.0 { scale(n - half) } else { 0.0 };
    p * scale(half) * low
}

/// ln2's first 32 bits and the rest: n·LN2_HI is exact for |n| < 2^21.
pub(crate) const LN2_HI: f64 = 6.931_471_803_691_238_164_9e-1;
pub(crate) const LN2_LO: f64 = 1.908_214_929_270_587_700_02e-10;

/// x = n·ln2 + r with n the integer nearest x·log2(e) (|r| ≤ ln2/2, about), for |x| below
/// 2^21·ln2: n from the low bits of a sum with 1.5·2^52 (no float-to-int conversion, which
/// AVX2 lacks), and r exact to the rounding of its second step (x - n·LN2_HI is exact, the
/// two being close).
#[inline(always)]
pub(crate) fn split_by_ln2(x: f64) -> (i64, f64) {
    const ROUNDER: f64 = 6_755_399_441_055_744.0;
    let shifted = x.mul_add(std::f64::consts::LOG2_E, ROUNDER);
    let n = shifted - ROUNDER;
    let r = (-n).mul_add(LN2_HI, x);
    let r = (-n).mul_add(LN2_LO, r);
    (shifted.to_bits().wrapping_sub(ROUNDER.to_bits()) as i64, r)
}

/// `exp(x)` in f64 arithmetic, within one ulp of the exact value: eight lanes to a 512-bit
/// vector where glibc's `exp` takes a call and branches per element (the float64 softmax of
/// 8×128×128, one thread: 902 µs through it). The same steps as [`exp_f32`], every one exact
/// or one rounding (fused multiply-adds), so the result is the same on any x86-64.
#[inline(always)]
pub fn exp_f64(x: f64) -> f64 {
    // Beyond these bounds the result is `inf` or 0. NaN stays NaN through `clamp`.
    let x = x.clamp(-746.0, 710.0);
    let (n, r) = split_by_ln2(x);
    // Taylor series to r^13 (|r| ≤ 0.35: the first term left out is below 2^-57 relative),
    // by Horner's rule.
    const INVERSE_FACTORIALS: [f64; 14] = [
        1.0,
        1.0,
        1.0 / 2.0,
        1.0 / 6.0,
        1.0 / 24.0,
        1.0 / 120.0,
        1.0 / 720.0,
        1.0 / 5040.0,
        1.0 / 40320.0,
        1.0 / 362_880.0,
        1.0 / 3_628_800.0,
        1.0 / 39_916_800.0,
        1.0 / 479_001_600.0,
        1.0 / 6_227_020_800.0,
    ];
    let p = INVERSE_FACTORIALS
        .iter()
        .rev()
        .skip(1)
        .fold(INVERSE_FACTORIALS[13], |p, &c| p.mul_add(r, c));
    // 2^n as two factors, each a normal f64 for n in -1077..=1025.
    let half = n >> 1;
    let scale = |e: i64| f64::from_bits(((e + 1023) as u64) << 52);
    // At the lower bound, 0 without an underflow (see `exp_f32`).
    let low = if x > -746.0 { scale(n - half) } else { 0.0 };
    p * scale(half) * low
}

#[cfg(test)]
pub(crate) mod tests {
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

    #[test]
    fn tanh_rounds_as_the_exact_value() {
        let n = compare(tanh_for_f32, f64::tanh, 1e-30, 12.0)
            + compare(|x| -tanh_for_f32(-x), f64::tanh, 1e-30, 12.0);
        assert!(n < 5_000, "{n} of 18 million results off by one ulp");
        assert_eq!(tanh_for_f32(0.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(tanh_for_f32(-0.0).to_bits(), (-0.0f64).to_bits());
        assert!(tanh_for_f32(f64::NAN).is_nan());
        assert_eq!(tanh_for_f32(f64::INFINITY), 1.0);
        assert_eq!(tanh_for_f32(f64::NEG_INFINITY), -1.0);
        assert_eq!(tanh_for_f32(1e-40), 1e-40);
    }

    /// Values with every sign, size and special case float32 has.
    pub(crate) fn awkward_values() -> Vec<f32> {
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

    /// The wide pass of `f` over `xs` gives the bits of `f` one element at a time in code
    /// compiled for any x86-64.
    pub(crate) fn same_as_plain(xs: &[f64], f: impl Fn(f64) -> f64 + Sync + Copy) {
        let plain: Vec<f64> = xs.iter().map(|&x| std::hint::black_box(f(x))).collect();
        let wide = map_wide(xs, f);
        assert!(
            plain
                .iter()
                .zip(&wide)
                .all(|(p, w)| p.to_bits() == w.to_bits() || (p.is_nan() && w.is_nan()))
        );
    }

    /// The wide passes (AVX-512 or AVX2, whichever the CPU running the test has) give the bits
    /// the same steps give one element at a time in code compiled for any x86-64.
    #[test]
    fn the_wide_passes_compute_what_the_plain_steps_compute() {
        let xs = awkward_values();
        // `f` a function item, so that the wide pass inlines it.
        fn through_f64(xs: &[f32], f: impl Fn(f64) -> f64 + Sync + Copy) {
            let plain: Vec<f32> = xs
                .iter()
                .map(|&x| std::hint::black_box(f(f64::from(x))) as f32)
                .collect();
            let wide = map_wide(xs, |x| f(f64::from(x)) as f32);
            assert!(
                plain
                    .iter()
                    .zip(&wide)
                    .all(|(p, w)| p.to_bits() == w.to_bits())
            );
        }
        through_f64(&xs, exp_for_f32);
        through_f64(&xs, tanh_for_f32);
        let plain: Vec<f32> = xs
            .iter()
            .map(|&x| std::hint::black_box(exp_f32(x)))
            .collect();
        let mut wide = xs.clone();
        // In a closure: the macro returns from the function it is in.
        (|| wide_vectors!(exp_avx2, wide.iter_mut().for_each(|x| *x = exp_f32(*x))))();
        assert!(
            plain
                .iter()
                .zip(&wide)
                .all(|(p, w)| p.to_bits() == w.to_bits() || (p.is_nan() && w.is_nan()))
        );
        let xs: Vec<f64> = xs.iter().map(|&x| f64::from(x) * 25.0).collect();
        same_as_plain(&xs, exp_f64);
    }

    /// Within one ulp of the correctly rounded value everywhere, subnormal results included.
    #[test]
    fn the_float32_exp_is_within_one_ulp() {
        let mut off = 0;
        let mut x = -110.0f32;
        while x < 90.0 {
            let got = exp_f32(x);
            let want = f64::from(x).exp() as f32;
            let ulps = (got.to_bits() as i64 - want.to_bits() as i64).abs();
            assert!(ulps <= 1, "{x}: {got} vs {want}");
            off += ulps;
            x += 0.000_713;
        }
        // Most results are the correctly rounded ones.
        assert!(off < 280_000 / 5, "{off} of 280000 results off by one ulp");
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp_f32(88.8), f32::INFINITY);
        // Either side of the lower bound, where 0 comes from a zero factor.
        assert_eq!(exp_f32(-104.0), 0.0);
        assert_eq!(exp_f32(-1e9), 0.0);
        assert_eq!(exp_f32(-103.2), f32::from_bits(1));
        assert!(exp_f32(f32::NAN).is_nan());
        assert_eq!(exp_f32(0.0), 1.0);
    }

    /// Within one ulp of glibc's `exp` (itself within one ulp of the exact value, nearly
    /// always the correctly rounded one), subnormal results included.
    #[test]
    fn the_float64_exp_is_within_one_ulp_of_the_librarys() {
        let mut off = 0;
        let mut x = -750.0f64;
        while x < 712.0 {
            let got = exp_f64(x);
            let want = x.exp();
            let ulps = (got.to_bits() as i64 - want.to_bits() as i64).abs();
            assert!(ulps <= 1, "{x}: {got:e} vs {want:e}");
            off += ulps;
            x += 0.000_713_1;
        }
        assert!(
            off < 2_050_000 / 5,
            "{off} of 2.05 million results off by one ulp"
        );
        assert_eq!(exp_f64(f64::NEG_INFINITY), 0.0);
        assert_eq!(exp_f64(f64::INFINITY), f64::INFINITY);
        assert_eq!(exp_f64(709.8), f64::INFINITY);
        assert_eq!(exp_f64(-746.0), 0.0);
        assert_eq!(exp_f64(-1e300), 0.0);
        assert_eq!(exp_f64(-744.5), f64::from_bits(1));
        assert!(exp_f64(f64::NAN).is_nan());
        assert_eq!(exp_f64(0.0), 1.0);
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
