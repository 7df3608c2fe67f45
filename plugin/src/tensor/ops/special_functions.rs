//! The special functions torch has that `libm` has not: `erfinv` and `digamma`, in f64.
//! (`erfc` and `lgamma` are `libm`'s.)

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
}
