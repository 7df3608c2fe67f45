//! Ops that make a tensor from their attributes alone. Eager calls and graphs share them, so
//! that a graph can make `arange(T)` or `linspace(a, b, T)` for a `T` that changes from call
//! to call, and draw
//! `rand`/`randn` when it runs, in the order the program draws them.

use crate::tensor::registry::{Arity, Attr, Attrs, Meta, OpDef};
use crate::tensor::{DType, Scalar, TResult, TensorData, TensorError};

/// How many elements `arange(start, end, step)` has, for ints (`step` is never zero).
fn arange_len(start: i64, end: i64, step: i64) -> TResult<usize> {
    if step == 0 {
        return Err(TensorError::runtime(
            "arange() step must not be zero".to_owned(),
        ));
    }
    let span = i128::from(end) - i128::from(start);
    let step = i128::from(step);
    // Python's ceil division of the span by the step, never below zero.
    let n = (-(-span).div_euclid(step)).max(0);
    let n = usize::try_from(n)
        .map_err(|_| TensorError::runtime("arange() has too many elements".to_owned()))?;
    crate::tensor::shape::check_size(&[n])?;
    Ok(n)
}

/// `rand` (uniform in [0, 1)) or `randn` (standard normal) of `a`'s shape and dtype, drawn
/// from the process's seeded generator.
fn random(a: &Attrs, normal: bool) -> TResult<TensorData> {
    let shape = full_shape(a)?;
    let n = shape.iter().product();
    let drawn = if normal {
        crate::tensor::random::normal(n)
    } else {
        crate::tensor::random::uniform(n)
    };
    let values: Vec<Scalar> = drawn.into_iter().map(Scalar::Float).collect();
    TensorData::from_scalars(&shape, &values, dtype_of(a))
}

/// `steps` values from `start` to `end`, evenly spaced (`start + (end - start) * i / (steps -
/// 1)`, so that both ends are exact), in `a`'s dtype.
fn linspace(a: &Attrs) -> TResult<TensorData> {
    let steps = linspace_len(a)?;
    let number = |name: &str| {
        a.opt_float(name)?
            .ok_or_else(|| TensorError::type_error(format!("linspace() needs a {name}")))
    };
    let (start, end) = (number("start")?, number("end")?);
    let values: Vec<Scalar> = (0..steps)
        .map(|i| {
            Scalar::Float(if steps == 1 {
                start
            } else {
                start + (end - start) * i as f64 / (steps - 1) as f64
            })
        })
        .collect();
    TensorData::from_scalars(&[steps], &values, dtype_of(a))
}

fn linspace_len(a: &Attrs) -> TResult<usize> {
    let steps = a.int("steps")?;
    let steps = usize::try_from(steps)
        .map_err(|_| TensorError::runtime("number of steps must be non-negative".to_owned()))?;
    crate::tensor::shape::check_size(&[steps])?;
    Ok(steps)
}

fn dtype_of(a: &Attrs) -> DType {
    match a.get("dtype") {
        Attr::DType(d) => *d,
        _ => DType::Int64,
    }
}

/// The sizes of `full`, checked as a shape.
fn full_shape(a: &Attrs) -> TResult<Vec<usize>> {
    let shape = a
        .ints("shape")?
        .into_iter()
        .map(|n| {
            usize::try_from(n)
                .map_err(|_| TensorError::runtime(format!("full() with a negative size ({n})")))
        })
        .collect::<TResult<Vec<usize>>>()?;
    crate::tensor::shape::check_size(&shape)?;
    Ok(shape)
}

fn fill_value(a: &Attrs) -> TResult<Scalar> {
    match a.get("value") {
        Attr::Bool(b) => Ok(Scalar::Bool(*b)),
        Attr::Int(i) => Ok(Scalar::Int(*i)),
        Attr::Float(f) => Ok(Scalar::Float(*f)),
        other => Err(TensorError::type_error(format!(
            "full() needs a number as its value, not {other:?}"
        ))),
    }
}

pub fn ops() -> Vec<OpDef> {
    let shaped = |_: &[Meta], a: &Attrs| {
        Ok(Meta {
            shape: full_shape(a)?,
            dtype: dtype_of(a),
        })
    };
    vec![
        OpDef::new("rand", Arity::Exactly(0), shaped, |_, a| random(a, false)).draws(),
        OpDef::new("randn", Arity::Exactly(0), shaped, |_, a| random(a, true)).draws(),
        // `zeros`, `ones` and `full` of sizes that change from call to call, in a graph.
        OpDef::new(
            "full",
            Arity::Exactly(0),
            shaped,
            |_: &[&TensorData], a: &Attrs| {
                Ok(TensorData::full(
                    &full_shape(a)?,
                    fill_value(a)?,
                    dtype_of(a),
                ))
            },
        ),
        OpDef::new(
            "linspace",
            Arity::Exactly(0),
            |_: &[Meta], a: &Attrs| {
                Ok(Meta {
                    shape: vec![linspace_len(a)?],
                    dtype: dtype_of(a),
                })
            },
            |_: &[&TensorData], a: &Attrs| linspace(a),
        ),
        OpDef::new(
            "arange",
            Arity::Exactly(0),
            |_: &[Meta], a: &Attrs| {
                Ok(Meta {
                    shape: vec![arange_len(a.int("start")?, a.int("end")?, a.int("step")?)?],
                    dtype: dtype_of(a),
                })
            },
            |_: &[&TensorData], a: &Attrs| {
                let (start, step) = (a.int("start")?, a.int("step")?);
                let n = arange_len(start, a.int("end")?, step)?;
                let values: Vec<Scalar> = (0..n as i64)
                    .map(|i| Scalar::Int(start + i * step))
                    .collect();
                TensorData::from_scalars(&[n], &values, dtype_of(a))
            },
        ),
        // `eye(n, m)`: ones where the row is the column (of sizes that may change, in a graph).
        OpDef::new(
            "eye",
            Arity::Exactly(0),
            |_: &[Meta], a: &Attrs| {
                Ok(Meta {
                    shape: eye_shape(a)?.to_vec(),
                    dtype: dtype_of(a),
                })
            },
            |_: &[&TensorData], a: &Attrs| {
                let [n, m] = eye_shape(a)?;
                let values: Vec<Scalar> = (0..n * m)
                    .map(|k| Scalar::Int(i64::from(k / m == k % m)))
                    .collect();
                TensorData::from_scalars(&[n, m], &values, dtype_of(a))
            },
        ),
    ]
}

/// The rows and columns of `eye`, checked as a shape.
fn eye_shape(a: &Attrs) -> TResult<[usize; 2]> {
    let size = |name: &str| {
        let n = a.int(name)?;
        usize::try_from(n).map_err(|_| {
            TensorError::runtime(format!("{name} must be greater or equal to 0, got {n}"))
        })
    };
    let shape = [size("n")?, size("m")?];
    crate::tensor::shape::check_size(&shape)?;
    Ok(shape)
}
