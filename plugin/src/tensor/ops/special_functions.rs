//! The special functions torch has that `libm` has not: `erfinv`, `digamma` and the
//! regularized incomplete gamma functions, in f64. (`erfc` and `lgamma` are `libm`'s.)

use std::f64::consts::PI;

/// The inverse of `erf` on [-1, 1] (±1 give ±infinity, outside is NaN): Giles' polynomial
/// approximation ("Approximating the erfinv function", 2010), good to single precision, then
/// Newton steps on `erf` (on `erfc` where |x| > 0.5, whose complement 1 - |x| is exact
/// there) to double precision.
pub fn erfinv(x: f64) -> f64 {
    if x.is_nan() || x.abs() > 1.0 {
        return f64::NAN;
    }
    if x.abs() == 1.0 {
        return x * f64::INFINITY;
    }
    let w = -((1.0 - x) * (1.0 + x)).ln();
    let p = if w < 5.0 {
        let w = w - 2.5;
        [
            3.432_739_39e-07,
            -3.523_387_7e-06,
            -4.391_506_54e-06,
            0.000_218_580_87,
            -0.001_253_725_03,
            -0.004_177_681_64,
            0.246_640_727,
            1.501_409_41,
        ]
        .iter()
        .fold(2.810_226_36e-08, |p, c| c + p * w)
    } else {
        let w = w.sqrt() - 3.0;
        [
            0.000_100_950_558,
            0.001_349_343_22,
            -0.003_673_428_44,
            0.005_739_507_73,
            -0.007_622_461_3,
            0.009_438_870_47,
            1.001_674_06,
            2.832_976_82,
        ]
        .iter()
        .fold(-0.000_200_214_257, |p, c| c + p * w)
    };
    let mut y = p * x;
    let slope = 2.0 / PI.sqrt();
    for _ in 0..3 {
        let residual = if x.abs() > 0.5 {
            // erfc(|y|) - (1 - |x|), with y's sign.
            x.signum() * ((1.0 - x.abs()) - libm::erfc(y.abs()))
        } else {
            libm::erf(y) - x
        };
        let step = residual / (slope * (-y * y).exp());
        if !step.is_finite() {
            break;
        }
        y -= step;
    }
    y
}

/// The logarithmic derivative of the gamma function: torch's values at the poles (-infinity
/// at +0, +infinity at -0, NaN at the negative integers), the reflection formula below 0,
/// the recurrence up to 10 and the asymptotic series from there (its first term left out is
/// below 1e-15 there).
pub fn digamma(x: f64) -> f64 {
    if x == 0.0 {
        return if x.is_sign_negative() {
            f64::INFINITY
        } else {
            f64::NEG_INFINITY
        };
    }
    if x < 0.0 {
        if x == x.floor() {
            return f64::NAN;
        }
        return digamma(1.0 - x) - PI / (PI * x).tan();
    }
    let (mut x, mut result) = (x, 0.0);
    while x < 10.0 {
        result -= 1.0 / x;
        x += 1.0;
    }
    let inv2 = 1.0 / (x * x);
    // Σ B₂ₖ / (2k x²ᵏ) for k = 1..6, Horner in 1/x².
    let series = inv2
        * (1.0 / 12.0
            - inv2
                * (1.0 / 120.0
                    - inv2
                        * (1.0 / 252.0
                            - inv2
                                * (1.0 / 240.0 - inv2 * (1.0 / 132.0 - inv2 * 691.0 / 32760.0)))));
    result + x.ln() - 0.5 / x - series
}

/// The regularized lower incomplete gamma function P(a, x) (`torch.special.gammainc`, the
/// Gamma distribution's cdf), with torch's values at the ends: NaN for a negative argument,
/// 0 at x = 0, 1 at x = ∞, and for a = 0 1 where x > 0.
pub fn gammainc(a: f64, x: f64) -> f64 {
    match gamma_ends(a, x) {
        Some(p) => p,
        None if x < a + 1.0 => lower_series(a, x),
        None => 1.0 - upper_fraction(a, x),
    }
}

/// The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)
/// (`torch.special.gammaincc`), computed on the side where it does not cancel.
pub fn gammaincc(a: f64, x: f64) -> f64 {
    match gamma_ends(a, x) {
        Some(p) => 1.0 - p,
        None if x < a + 1.0 => 1.0 - lower_series(a, x),
        None => upper_fraction(a, x),
    }
}

/// P(a, x) where one argument is at an end of its domain or out of it, in torch's order (so
/// that P(NaN, 0) is 0 and P(NaN, ∞) is 1, as torch gives).
fn gamma_ends(a: f64, x: f64) -> Option<f64> {
    if a < 0.0 || x < 0.0 {
        return Some(f64::NAN);
    }
    if a == 0.0 {
        return Some(if x > 0.0 { 1.0 } else { f64::NAN });
    }
    if x == 0.0 {
        return Some(0.0);
    }
    if a.is_infinite() {
        return Some(if x.is_infinite() { f64::NAN } else { 0.0 });
    }
    if x.is_infinite() {
        return Some(1.0);
    }
    if a.is_nan() || x.is_nan() {
        return Some(f64::NAN);
    }
    None
}

/// e^(-x) x^a / Γ(a), in logarithms (large a and x overflow the factors alone).
fn gamma_prefactor(a: f64, x: f64) -> f64 {
    (a * x.ln() - x - libm::lgamma(a)).exp()
}

/// P(a, x) by its power series, for x < a + 1 where the terms fall fast.
fn lower_series(a: f64, x: f64) -> f64 {
    let (mut term, mut sum, mut n) = (1.0 / a, 1.0 / a, a);
    for _ in 0..GAMMA_ITERATIONS {
        n += 1.0;
        term *= x / n;
        sum += term;
        if term.abs() < sum.abs() * f64::EPSILON {
            break;
        }
    }
    (sum * gamma_prefactor(a, x)).min(1.0)
}

/// Q(a, x) by its continued fraction (modified Lentz), for x ≥ a + 1.
fn upper_fraction(a: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut b = x + 1.0 - a;
    let mut c = 1.0 / TINY;
    let mut d = 1.0 / b;
    let mut h = d;
    for i in 1..=GAMMA_ITERATIONS {
        let an = -(i as f64) * (i as f64 - a);
        b += 2.0;
        d = an * d + b;
        if d.abs() < TINY {
            d = TINY;
        }
        c = b + an / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < f64::EPSILON {
            break;
        }
    }
    (gamma_prefactor(a, x) * h).min(1.0)
}

/// Enough for double precision up to a of about 10⁸ (the terms needed grow as √a).
const GAMMA_ITERATIONS: usize = 100_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erfinv_inverts_erf_to_the_last_bits() {
        for &x in &[
            -0.999_999,
            -0.9,
            -0.5,
            -1e-10,
            0.0,
            0.3,
            0.75,
            0.999_999_999,
        ] {
            let y = erfinv(x);
            assert!((libm::erf(y) - x).abs() <= 2.0 * f64::EPSILON, "{x}");
        }
        assert_eq!(erfinv(1.0), f64::INFINITY);
        assert!(erfinv(1.5).is_nan());
    }

    #[test]
    fn digamma_has_its_known_values() {
        let euler = 0.577_215_664_901_532_9;
        assert!((digamma(1.0) + euler).abs() < 1e-14);
        assert!((digamma(0.5) + euler + 2.0 * 2f64.ln()).abs() < 1e-14);
        assert!((digamma(-0.5) - (digamma(1.5) - PI / (-PI * 0.5).tan())).abs() < 1e-14);
        assert_eq!(digamma(0.0), f64::NEG_INFINITY);
        assert!(digamma(-2.0).is_nan());
    }

    #[test]
    fn incomplete_gamma_has_its_known_values() {
        // P(1, x) = 1 - e^-x; P(1/2, x) = erf(√x).
        for &x in &[1e-3, 0.5, 1.0, 2.0, 10.0, 40.0] {
            assert!(
                (gammainc(1.0, x) - (1.0 - (-x as f64).exp())).abs() < 1e-14,
                "{x}"
            );
            assert!(
                (gammainc(0.5, x) - libm::erf(x.sqrt())).abs() < 1e-14,
                "{x}"
            );
            assert!(
                (gammaincc(1.0, x) - (-x as f64).exp()).abs()
                    < 1e-14 * (-x as f64).exp().max(1e-300) + 1e-300,
                "{x}"
            );
        }
        assert_eq!(gammainc(2.0, 0.0), 0.0);
        assert_eq!(gammainc(2.0, f64::INFINITY), 1.0);
        assert_eq!(gammainc(0.0, 1.0), 1.0);
        assert!(gammainc(-1.0, 1.0).is_nan());
        assert!(gammainc(1.0, -1.0).is_nan());
    }
}
