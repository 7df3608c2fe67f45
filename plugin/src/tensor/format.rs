//! repr and str of a tensor, laid out like NumPy's: `tensor([[1., 2.],\n        [3., 4.]])`
//! for repr (with `dtype=` when it is not the default for its kind), `[[1. 2.]\n [3. 4.]]`
//! for str.

use super::data::{Scalar, TensorData};
use super::dtype::DType;

fn element(s: Scalar) -> String {
    match s {
        Scalar::Bool(b) => if b { "True" } else { "False" }.to_owned(),
        Scalar::Int(i) => i.to_string(),
        Scalar::Float(f) => {
            if f.is_nan() {
                "nan".into()
            } else if f.is_infinite() {
                if f > 0.0 { "inf".into() } else { "-inf".into() }
            } else if f.fract() == 0.0 && f.abs() < 1e16 {
                format!("{f:.0}.")
            } else if f.abs() >= 1e16 || f.abs() < 1e-4 {
                format!("{f:.8e}")
            } else {
                let s = format!("{f:.8}");
                s.trim_end_matches('0').to_owned()
            }
        }
    }
}

/// As NumPy: `[2.5, 5. , 7.5]`, the points one above the other, short fractions padded.
fn align_decimal_points(items: &mut [String]) {
    let split = |s: &str| s.find('.').filter(|_| !s.contains('e')).map(|p| p + 1);
    let frac = items
        .iter()
        .filter_map(|s| split(s).map(|p| s.len() - p))
        .max()
        .unwrap_or(0);
    for s in items.iter_mut() {
        if let Some(p) = split(s) {
            let pad = frac - (s.len() - p);
            s.push_str(&" ".repeat(pad));
        }
    }
}

fn nest(shape: &[usize], items: &[String], width: usize, sep: &str, indent: usize) -> String {
    match shape {
        [] => items[0].clone(),
        [_] => format!(
            "[{}]",
            items
                .iter()
                .map(|s| format!("{s:>width$}"))
                .collect::<Vec<_>>()
                .join(sep)
        ),
        [n, rest @ ..] => {
            let chunk = items.len() / n.max(&1);
            let rows: Vec<String> = (0..*n)
                .map(|i| {
                    nest(
                        rest,
                        &items[i * chunk..(i + 1) * chunk],
                        width,
                        sep,
                        indent + 1,
                    )
                })
                .collect();
            let newlines = "\n".repeat(rest.len());
            let glue = format!("{}{newlines}{}", sep.trim_end(), " ".repeat(indent + 1));
            format!("[{}]", rows.join(&glue))
        }
    }
}

fn body(t: &TensorData, sep: &str, indent: usize) -> String {
    if t.numel() == 0 {
        return "[]".into();
    }
    let mut items: Vec<String> = t.to_scalars().into_iter().map(element).collect();
    if t.dtype().is_float() {
        align_decimal_points(&mut items);
    }
    let width = items.iter().map(String::len).max().unwrap_or(0);
    nest(t.shape(), &items, width, sep, indent)
}

pub fn repr(t: &TensorData) -> String {
    let default = matches!(t.dtype(), DType::Float64 | DType::Int64 | DType::Bool);
    let shown = if t.numel() == 0 && t.ndim() > 1 {
        format!("[], shape={}", super::error::shape_str(t.shape()))
    } else {
        body(t, ", ", 7)
    };
    if default {
        format!("tensor({shown})")
    } else {
        format!("tensor({shown}, dtype={})", t.dtype().name())
    }
}

pub fn str(t: &TensorData) -> String {
    body(t, " ", 0)
}
