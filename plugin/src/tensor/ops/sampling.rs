//! `multinomial`: indices drawn from each row of a tensor of weights (probabilities, not
//! necessarily normalized), with or without replacement, from the process's seeded generator
//! (`random`). It draws, so a graph runs it once per call, in the program's order.

use crate::tensor::registry::{Arity, Attrs, Meta, OpDef};
use crate::tensor::{DType, Scalar, TResult, TensorData, TensorError};

pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new("multinomial", Arity::Exactly(1), infer, |t, a| {
            sample(t[0], a)
        })
        .draws(),
    ]
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
