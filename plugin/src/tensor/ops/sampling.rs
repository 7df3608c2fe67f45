//! Draws from the process's seeded generator (`random`) that take parameters per element or
//! per row: `multinomial` (indices drawn from each row of a tensor of weights, not
//! necessarily normalized, with or without replacement), `standard_gamma` (torch's
//! `_standard_gamma`, which Gamma, Beta and Dirichlet samples are made of), `poisson` and
//! `binomial` (counts and probabilities, element by element).
//! They draw, so a graph runs each once per call, in the program's order.

use crate::tensor::registry::{Arity, Attrs, Meta, OpDef};
use crate::tensor::{DType, Scalar, TResult, TensorData, TensorError};

pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("multinomial", Arity::Exactly(1), infer, |t, a| {
            sample(t[0], a)
        })
        .draws(),
        OpDef::new("standard_gamma", Arity::Exactly(1), same_float, |t, _| {
            per_element(t[0], standard_gamma)
        })
        .draws(),
        OpDef::new("poisson", Arity::Exactly(1), same_float, |t, _| {
            per_element(t[0], poisson)
        })
        .draws(),
        OpDef::new("binomial", Arity::Exactly(2), binomial_meta, |t, _| {
            binomial_draws(t[0], t[1])
        })
        .draws(),
    ]
}

/// `binomial(count, prob)`: two float tensors of one type and shape.
fn binomial_meta(m: &[Meta], a: &Attrs) -> TResult<Meta> {
    let meta = same_float(&m[..1], a)?;
    if m[1].dtype != meta.dtype || m[1].shape != meta.shape {
        return Err(TensorError::runtime(format!(
            "binomial: expected count and prob of one type and shape, got {} {:?} and {} {:?}",
            meta.dtype.name(),
            meta.shape,
            m[1].dtype.name(),
            m[1].shape
        )));
    }
    Ok(meta)
}

fn binomial_draws(count: &TensorData, prob: &TensorData) -> TResult<TensorData> {
    let out: Vec<Scalar> = count
        .to_scalars()
        .into_iter()
        .zip(prob.to_scalars())
        .map(|(n, p)| Scalar::Float(binomial(n.as_f64(), p.as_f64())))
        .collect();
    TensorData::from_scalars(count.shape(), &out, count.dtype())
}

/// A Binomial(n, p) draw: by inversion from 0 where few successes (or failures) are
/// expected, counting n Bernoulli trials otherwise.
fn binomial(n: f64, p: f64) -> f64 {
    if n.is_nan() || p.is_nan() || n < 0.0 || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    let n = n.floor();
    if p == 0.0 || n == 0.0 {
        return 0.0;
    }
    if p == 1.0 {
        return n;
    }
    // Draw the rarer outcome, so that the inversion's start (1 - p)^n stays normal.
    let (q, flipped) = if p > 0.5 { (1.0 - p, true) } else { (p, false) };
    let k = if n * q < 30.0 {
        let u = uniform();
        let ratio = q / (1.0 - q);
        let (mut k, mut term) = (0.0, (1.0 - q).powf(n));
        let mut total = term;
        while u > total && k < n {
            k += 1.0;
            term *= ratio * (n - k + 1.0) / k;
            total += term;
        }
        k
    } else {
        crate::tensor::random::uniform(n as usize)
            .into_iter()
            .filter(|&u| u < q)
            .count() as f64
    };
    if flipped { n - k } else { k }
}

/// A float tensor's own meta: a draw per element.
fn same_float(m: &[Meta], _: &Attrs) -> TResult<Meta> {
    if !m[0].dtype.is_float() {
        return Err(TensorError::runtime(format!(
            "expected a floating-point tensor of parameters, got {}",
            m[0].dtype.name()
        )));
    }
    Ok(m[0].clone())
}

/// `draw` of each element, in row-major order, in the tensor's type.
fn per_element(t: &TensorData, draw: fn(f64) -> f64) -> TResult<TensorData> {
    let out: Vec<Scalar> = t
        .to_scalars()
        .into_iter()
        .map(|s| Scalar::Float(draw(s.as_f64())))
        .collect();
    TensorData::from_scalars(t.shape(), &out, t.dtype())
}

fn uniform() -> f64 {
    crate::tensor::random::uniform(1)[0]
}

/// A Gamma(alpha, 1) draw by Marsaglia and Tsang's squeeze ("A simple method for generating
/// gamma variables", 2000); a shape under 1 is drawn at shape + 1 and scaled by U^(1/shape).
fn standard_gamma(alpha: f64) -> f64 {
    if alpha.is_nan() || alpha < 0.0 {
        return f64::NAN;
    }
    if alpha == 0.0 {
        return 0.0;
    }
    if alpha < 1.0 {
        // 1 - U is in (0, 1]: a zero would give 0 where the power is defined.
        return standard_gamma(alpha + 1.0) * (1.0 - uniform()).powf(1.0 / alpha);
    }
    let d = alpha - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = crate::tensor::random::normal(1)[0];
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = uniform();
        if u < 1.0 - 0.0331 * x.powi(4) || u.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
            return d * v;
        }
    }
}

/// A Poisson(rate) draw: by inversion (the first k whose cumulative probability passes a
/// uniform draw) under 10, by Hörmann's transformed rejection (PTRS, "The transformed
/// rejection method for generating Poisson random variables", 1993) from there.
fn poisson(rate: f64) -> f64 {
    if rate.is_nan() || rate < 0.0 {
        return f64::NAN;
    }
    if rate == 0.0 {
        return 0.0;
    }
    if rate < 10.0 {
        let u = uniform();
        let (mut k, mut term) = (0.0, (-rate).exp());
        let mut total = term;
        while u > total && term > 0.0 {
            k += 1.0;
            term *= rate / k;
            total += term;
        }
        return k;
    }
    let (slam, loglam) = (rate.sqrt(), rate.ln());
    let b = 0.931 + 2.53 * slam;
    let a = -0.059 + 0.02483 * b;
    let inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
    let vr = 0.9277 - 3.6224 / (b - 2.0);
    loop {
        let u = uniform() - 0.5;
        let v = uniform();
        let us = 0.5 - u.abs();
        let k = ((2.0 * a / us + b) * u + rate + 0.43).floor();
        if us >= 0.07 && v <= vr {
            return k;
        }
        if k < 0.0 || (us < 0.013 && v > us) {
            continue;
        }
        if v.ln() + inv_alpha.ln() - (a / (us * us) + b).ln()
            <= -rate + k * loglam - libm::lgamma(k + 1.0)
        {
            return k;
        }
    }
}

/// The samples per row, checked as torch checks them before it draws.
fn count(weights: &Meta, a: &Attrs) -> TResult<usize> {
    if !(1..=2).contains(&weights.shape.len()) {
        return Err(TensorError::runtime("prob_dist must be 1 or 2 dim"));
    }
    if !weights.dtype.is_float() {
        return Err(TensorError::runtime(format!(
            "multinomial only supports floating-point dtypes for input, got: {}",
            weights.dtype.name()
        )));
    }
    let n = a.int("num_samples")?;
    if n <= 0 {
        return Err(TensorError::runtime("cannot sample n_sample <= 0 samples"));
    }
    let categories = *weights.shape.last().expect("one or two dims");
    if !a.flag("replacement") && n as usize > categories {
        return Err(TensorError::runtime(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement",
        ));
    }
    Ok(n as usize)
}

fn infer(m: &[Meta], a: &Attrs) -> TResult<Meta> {
    let n = count(&m[0], a)?;
    let mut shape = m[0].shape.clone();
    *shape.last_mut().expect("one or two dims") = n;
    Ok(Meta {
        shape,
        dtype: DType::Int64,
    })
}

fn sample(weights: &TensorData, a: &Attrs) -> TResult<TensorData> {
    let meta = Meta::of(weights);
    let n = count(&meta, a)?;
    let replacement = a.flag("replacement");
    let categories = *meta.shape.last().expect("one or two dims");
    let values: Vec<f64> = weights
        .to_scalars()
        .into_iter()
        .map(Scalar::as_f64)
        .collect();
    let mut out = Vec::with_capacity(values.len() / categories.max(1) * n);
    for row in values.chunks(categories) {
        if row.iter().any(|&w| !w.is_finite() || w < 0.0) {
            return Err(TensorError::runtime(
                "probability tensor contains either `inf`, `nan` or element < 0",
            ));
        }
        if row.iter().sum::<f64>() <= 0.0 {
            return Err(TensorError::runtime(
                "invalid multinomial distribution (sum of probabilities <= 0)",
            ));
        }
        let mut left = row.to_vec();
        for u in crate::tensor::random::uniform(n) {
            let Some(i) = pick(&left, u) else {
                return Err(TensorError::runtime(
                    "invalid multinomial distribution (with replacement=False, not enough non-negative category to sample)",
                ));
            };
            out.push(Scalar::Int(i as i64));
            if !replacement {
                left[i] = 0.0;
            }
        }
    }
    let mut shape = meta.shape;
    *shape.last_mut().expect("one or two dims") = n;
    TensorData::from_scalars(&shape, &out, DType::Int64)
}

/// The category a uniform draw `u` in [0, 1) falls in, each weighted by its share of the
/// total; never one of weight zero (`None`: all are).
fn pick(weights: &[f64], u: f64) -> Option<usize> {
    let total: f64 = weights.iter().sum();
    if total <= 0.0 {
        return None;
    }
    let target = u * total;
    let mut below = 0.0;
    let mut last = None;
    for (i, &w) in weights.iter().enumerate() {
        if w > 0.0 {
            below += w;
            last = Some(i);
            if target < below {
                return last;
            }
        }
    }
    last // rounding: the sum fell short of the total
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mean and variance of many draws, within a few standard errors of the law's.
    fn moments(draw: fn(f64) -> f64, p: f64, n: usize) -> (f64, f64) {
        let xs: Vec<f64> = (0..n).map(|_| draw(p)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        (mean, var)
    }

    #[test]
    fn gamma_poisson_and_binomial_draws_have_their_laws_moments() {
        for &alpha in &[0.3, 1.0, 2.5, 40.0] {
            let (mean, var) = moments(standard_gamma, alpha, 20_000);
            let se = (alpha / 20_000.0).sqrt();
            assert!(
                (mean - alpha).abs() < 5.0 * se,
                "gamma {alpha}: mean {mean}"
            );
            assert!(
                (var - alpha).abs() < 0.1 * alpha,
                "gamma {alpha}: variance {var}"
            );
        }
        for &rate in &[0.5, 4.0, 30.0, 1000.0] {
            let (mean, var) = moments(poisson, rate, 20_000);
            let se = (rate / 20_000.0).sqrt();
            assert!(
                (mean - rate).abs() < 5.0 * se,
                "poisson {rate}: mean {mean}"
            );
            assert!(
                (var - rate).abs() < 0.1 * rate,
                "poisson {rate}: variance {var}"
            );
        }
        assert_eq!(standard_gamma(0.0), 0.0);
        assert!(poisson(-1.0).is_nan());
        for &(n, p) in &[(10.0, 0.3), (200.0, 0.9), (5000.0, 0.5), (40.0, 0.01)] {
            let xs: Vec<f64> = (0..20_000).map(|_| binomial(n, p)).collect();
            let mean = xs.iter().sum::<f64>() / xs.len() as f64;
            let se = (n * p * (1.0 - p) / 20_000.0).sqrt();
            assert!(
                (mean - n * p).abs() < 5.0 * se,
                "binomial {n} {p}: mean {mean}"
            );
            assert!(xs.iter().all(|&x| (0.0..=n).contains(&x) && x == x.floor()));
        }
        assert_eq!(binomial(7.0, 1.0), 7.0);
        assert!(binomial(3.0, 1.5).is_nan());
    }

    #[test]
    fn picks_by_weight_and_never_a_zero_weight() {
        let w = [0.0, 1.0, 0.0, 3.0];
        assert_eq!(pick(&w, 0.0), Some(1));
        assert_eq!(pick(&w, 0.24), Some(1));
        assert_eq!(pick(&w, 0.26), Some(3));
        assert_eq!(pick(&w, 0.999_999), Some(3));
        assert_eq!(pick(&[0.0, 0.0], 0.5), None);
    }
}
