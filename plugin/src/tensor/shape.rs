//! Shape arithmetic shared by shape inference and kernels: broadcasting and dimension
//! normalization.

use super::error::{TResult, TensorError, shape_str};

/// The broadcast of two shapes (NumPy rules: align from the right; a 1 stretches).
pub fn broadcast(a: &[usize], b: &[usize]) -> TResult<Vec<usize>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let da = if i < n - a.len() {
            1
        } else {
            a[i - (n - a.len())]
        };
        let db = if i < n - b.len() {
            1
        } else {
            b[i - (n - b.len())]
        };
        out[i] = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => {
                return Err(TensorError::runtime(format!(
                    "cannot broadcast {} with {}",
                    shape_str(a),
                    shape_str(b)
                )));
            }
        };
    }
    Ok(out)
}

/// The shape `flatten(start_dim, end_dim)` gives: the dimensions from `start` to `end`
/// (each may count from the end) as one, their product; a 0-d tensor becomes 1-d.
pub fn flattened(shape: &[usize], start: i64, end: i64) -> TResult<Vec<usize>> {
    let (s, e) = (
        normalize_dim(start, shape.len())?,
        normalize_dim(end, shape.len())?,
    );
    if shape.is_empty() {
        return Ok(vec![1]);
    }
    if s > e {
        return Err(TensorError::runtime(
            "flatten() has invalid args: start_dim cannot come after end_dim",
        ));
    }
    let mut out = shape[..s].to_vec();
    out.push(shape[s..=e].iter().product());
    out.extend_from_slice(&shape[e + 1..]);
    Ok(out)
}

/// A dimension given from the end (`-1` is the last) made absolute, for a tensor of `ndim`.
pub fn normalize_dim(dim: i64, ndim: usize) -> TResult<usize> {
    // A 0-d tensor takes dim 0 or -1, as in torch.
    let n = (ndim as i64).max(1);
    let d = if dim < 0 { dim + n } else { dim };
    if d < 0 || d >= n {
        return Err(TensorError::index(format!(
            "dimension {dim} is out of range for a tensor of {ndim} dimension{}",
            if ndim == 1 { "" } else { "s" }
        )));
    }
    Ok(d as usize)
}

/// The most elements a tensor may have: tensors live in memory whole, so a larger one is
/// refused with an error instead of aborting the process on allocation.
pub const MAX_ELEMENTS: usize = 1 << 34;

pub fn check_size(shape: &[usize]) -> TResult<()> {
    match shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d)) {
        Some(n) if n <= MAX_ELEMENTS => Ok(()),
        _ => Err(TensorError::runtime(format!(
            "a tensor of shape {} is too large (more than {MAX_ELEMENTS} elements)",
            shape_str(shape)
        ))),
    }
}

pub fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting() {
        assert_eq!(broadcast(&[2, 3], &[3]).unwrap(), vec![2, 3]);
        assert_eq!(broadcast(&[2, 1], &[1, 4]).unwrap(), vec![2, 4]);
        assert_eq!(broadcast(&[], &[5]).unwrap(), vec![5]);
        assert_eq!(broadcast(&[0, 3], &[1, 3]).unwrap(), vec![0, 3]);
        assert_eq!(
            broadcast(&[2, 3], &[4]).unwrap_err().message,
            "cannot broadcast (2, 3) with (4,)"
        );
    }

    #[test]
    fn dims() {
        assert_eq!(normalize_dim(-1, 3).unwrap(), 2);
        assert!(normalize_dim(3, 3).is_err());
        assert!(normalize_dim(-4, 3).is_err());
    }
}
