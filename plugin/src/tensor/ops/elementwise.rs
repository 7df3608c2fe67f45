//! Elementwise ops with broadcasting and NumPy's promotion: arithmetic, comparisons, logic,
//! clamp and where (the unary ops are in `unary.rs`).

use ndarray::{ArrayD, IxDyn, Zip};

pub use super::lineup::{Fit, Lineup, fit};
pub use super::unary::{Unary, unary};

use super::lineup::{pairs, zip_into};
use super::parallel::{PARALLEL_ELEMENTS, PIECE, threads};
use rayon::prelude::*;

use crate::tensor::data::{Element, TensorData};
use crate::tensor::dtype::DType;
use crate::tensor::error::{TResult, TensorError};
use crate::tensor::registry::{Arity, Attrs, Meta, OpDef};
use crate::tensor::shape::broadcast;

fn lineup<'a, T: Copy>(a: &'a ArrayD<T>, shape: &[usize]) -> Option<Lineup<'a, T>> {
    let s = a.as_slice()?;
    Some(Lineup::new(fit(a.shape(), shape)?, s))
}

/// The broadcast loop on row-major operands, without ndarray's general iteration; the
/// elements are those of the general path, computed by the same `f`.
fn zip_map_rowmajor<T: Element, U: Element>(
    a: &ArrayD<T>,
    b: &ArrayD<T>,
    shape: &[usize],
    f: &(impl Fn(T, T) -> U + Sync),
) -> Option<ArrayD<U>> {
    let out = zip_lined_up(
        lineup(a, shape)?,
        lineup(b, shape)?,
        shape.iter().product(),
        f,
    )?;
    Some(ArrayD::from_shape_vec(IxDyn(shape), out).expect("n elements"))
}

/// `f` over two lined-up operands, `n` elements, into a new vector; `None` for a pairing
/// [`zip_into`] does not handle. Large ones by parts on rayon's threads (each part a whole
/// number of the operands' repeating units, so that each lines up as a whole): the same
/// `f` on the same elements, so the same bits.
fn zip_lined_up<T: Copy + Sync, U: Send>(
    a: Lineup<'_, T>,
    b: Lineup<'_, T>,
    n: usize,
    f: &(impl Fn(T, T) -> U + Sync),
) -> Option<Vec<U>> {
    if !pairs(&a, &b, n) {
        return None;
    }
    let mut out: Vec<U> = Vec::with_capacity(n);
    let dst = &mut out.spare_capacity_mut()[..n];
    // One of the two is whole (`pairs`): the other's unit is the pair's.
    let unit = a.unit(n).max(b.unit(n)).max(1);
    if n >= PARALLEL_ELEMENTS && unit <= n / 2 && threads() > 1 {
        let part = PIECE.div_ceil(unit) * unit;
        dst.par_chunks_mut(part).enumerate().for_each(|(k, o)| {
            let (start, len) = (k * part, o.len());
            zip_into(a.part(start, len, n), b.part(start, len, n), o, f)
        });
    } else {
        zip_into(a, b, dst, f);
    }
    // SAFETY: `zip_into` wrote each of the `n` elements.
    unsafe { out.set_len(n) };
    Some(out)
}

fn zip_map<T: Element, U: Element>(
    a: &ArrayD<T>,
    b: &ArrayD<T>,
    shape: &[usize],
    f: impl Fn(T, T) -> U + Sync,
) -> ArrayD<U> {
    if let Some(out) = zip_map_rowmajor(a, b, shape, &f) {
        return out;
    }
    let dim = IxDyn(shape);
    let (a, b) = (
        a.broadcast(dim.clone()).expect("shapes were checked"),
        b.broadcast(dim).expect("shapes were checked"),
    );
    Zip::from(&a).and(&b).map_collect(|&x, &y| f(x, y))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binary {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    Maximum,
    Minimum,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    Xor,
    /// The angle of the point `(y=self, x=other)`, as `torch.atan2` (`arctan2`).
    Atan2,
    /// The remainder with the sign of the dividend, as C's `fmod` (`torch.fmod`; `%` is
    /// Python's, with the divisor's sign).
    Fmod,
    /// The regularized lower incomplete gamma function P(self, other) (`torch.igamma`).
    Igamma,
    /// Its complement Q(self, other) (`torch.igammac`).
    Igammac,
    /// The greatest common divisor of two ints (`torch.gcd`), non-negative.
    Gcd,
    /// The least common multiple of two ints (`torch.lcm`), non-negative.
    Lcm,
}

impl Binary {
    pub const ALL: [Binary; 24] = [
        Binary::Add,
        Binary::Sub,
        Binary::Mul,
        Binary::Div,
        Binary::FloorDiv,
        Binary::Mod,
        Binary::Pow,
        Binary::Maximum,
        Binary::Minimum,
        Binary::Eq,
        Binary::Ne,
        Binary::Lt,
        Binary::Le,
        Binary::Gt,
        Binary::Ge,
        Binary::And,
        Binary::Or,
        Binary::Xor,
        Binary::Atan2,
        Binary::Fmod,
        Binary::Igamma,
        Binary::Igammac,
        Binary::Gcd,
        Binary::Lcm,
    ];

    /// The op registered under `name`.
    pub fn named(name: &str) -> Option<Binary> {
        Self::ALL.into_iter().find(|op| op.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Binary::Add => "add",
            Binary::Sub => "sub",
            Binary::Mul => "mul",
            Binary::Div => "div",
            Binary::FloorDiv => "floordiv",
            Binary::Mod => "mod",
            Binary::Pow => "pow",
            Binary::Maximum => "maximum",
            Binary::Minimum => "minimum",
            Binary::Eq => "eq",
            Binary::Ne => "ne",
            Binary::Lt => "lt",
            Binary::Le => "le",
            Binary::Gt => "gt",
            Binary::Ge => "ge",
            Binary::And => "logical_and",
            Binary::Or => "logical_or",
            Binary::Xor => "logical_xor",
            Binary::Atan2 => "atan2",
            Binary::Fmod => "fmod",
            Binary::Igamma => "igamma",
            Binary::Igammac => "igammac",
            Binary::Gcd => "gcd",
            Binary::Lcm => "lcm",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            Binary::Eq | Binary::Ne | Binary::Lt | Binary::Le | Binary::Gt | Binary::Ge
        )
    }

    /// The type the operands are computed in.
    fn compute_dtype(self, a: DType, b: DType) -> TResult<DType> {
        let common = DType::promote(a, b);
        Ok(match self {
            Binary::Div | Binary::Atan2 | Binary::Igamma | Binary::Igammac => common.to_float(),
            Binary::Sub if common == DType::Bool => {
                return Err(TensorError::not_implemented(
                    "subtracting bool tensors is not supported; use ^ or logical_xor",
                ));
            }
            Binary::FloorDiv | Binary::Mod | Binary::Fmod | Binary::Pow
                if common == DType::Bool =>
            {
                DType::Int64
            }
            Binary::Gcd | Binary::Lcm if common != DType::Int64 => {
                let name = match common {
                    DType::Float64 => "Double",
                    DType::Float32 => "Float",
                    _ => "Bool",
                };
                return Err(TensorError::runtime(format!(
                    "\"{}_cpu\" not implemented for '{name}'",
                    self.name()
                )));
            }
            Binary::And | Binary::Or | Binary::Xor if common.is_float() => {
                return Err(TensorError::not_implemented(format!(
                    "{} needs bool or int64 tensors, not {}",
                    self.name(),
                    common.name()
                )));
            }
            _ => common,
        })
    }

    fn result_dtype(self, a: DType, b: DType) -> TResult<DType> {
        let compute = self.compute_dtype(a, b)?;
        Ok(if self.is_comparison() {
            DType::Bool
        } else {
            compute
        })
    }
}

fn int_op(op: Binary, x: i64, y: i64) -> i64 {
    match op {
        Binary::Add => x.wrapping_add(y),
        Binary::Sub => x.wrapping_sub(y),
        Binary::Mul => x.wrapping_mul(y),
        // Python's floor division and remainder; NumPy gives 0 for a zero divisor.
        Binary::FloorDiv => {
            if y == 0 {
                0
            } else {
                let q = x.wrapping_div(y);
                if (x % y != 0) && ((x < 0) != (y < 0)) {
                    q - 1
                } else {
                    q
                }
            }
        }
        Binary::Mod => {
            if y == 0 {
                0
            } else {
                let r = x.wrapping_rem(y);
                if r != 0 && ((r < 0) != (y < 0)) {
                    r + y
                } else {
                    r
                }
            }
        }
        // A zero divisor gives 0, as `Mod` does here.
        Binary::Fmod => x.checked_rem(y).unwrap_or(0),
        Binary::Pow => x.wrapping_pow(y as u32),
        Binary::Maximum => x.max(y),
        Binary::Minimum => x.min(y),
        Binary::And => x & y,
        Binary::Or => x | y,
        Binary::Xor => x ^ y,
        Binary::Gcd => gcd(x, y),
        Binary::Lcm => {
            let g = gcd(x, y);
            if g == 0 {
                0
            } else {
                (x / g).wrapping_mul(y).wrapping_abs()
            }
        }
        _ => unreachable!("not an integer arithmetic op"),
    }
}

/// Euclid's algorithm on the magnitudes (as torch's, `gcd(i64::MIN, 0)` wraps).
fn gcd(x: i64, y: i64) -> i64 {
    let (mut a, mut b) = (x.wrapping_abs(), y.wrapping_abs());
    while b != 0 {
        (a, b) = (b, a.wrapping_rem(b));
    }
    a.wrapping_abs()
}

#[inline]
pub fn float_op(op: Binary, x: f64, y: f64) -> f64 {
    match op {
        Binary::Add => x + y,
        Binary::Sub => x - y,
        Binary::Mul => x * y,
        Binary::Div => x / y,
        Binary::FloorDiv => (x / y).floor(),
        Binary::Mod => {
            let r = x % y;
            if r != 0.0 && ((r < 0.0) != (y < 0.0)) {
                r + y
            } else {
                r
            }
        }
        Binary::Pow => x.powf(y),
        Binary::Atan2 => x.atan2(y),
        // Rust's `%` of floats is C's fmod, exact.
        Binary::Fmod => x % y,
        Binary::Igamma => super::special_functions::gammainc(x, y),
        Binary::Igammac => super::special_functions::gammaincc(x, y),
        // NaN wins, as in NumPy's maximum/minimum.
        Binary::Maximum => {
            if x.is_nan() || y.is_nan() {
                f64::NAN
            } else {
                x.max(y)
            }
        }
        Binary::Minimum => {
            if x.is_nan() || y.is_nan() {
                f64::NAN
            } else {
                x.min(y)
            }
        }
        _ => unreachable!("not a float arithmetic op"),
    }
}

/// A comparison of every pair of elements: one loop per comparison (a loop that asks which
/// comparison per element does not vectorize: 8x128x128 float32 `x > y` took 135 µs).
fn compared<T: Element + PartialOrd>(
    op: Binary,
    x: &ArrayD<T>,
    y: &ArrayD<T>,
    shape: &[usize],
) -> ArrayD<bool> {
    match op {
        Binary::Eq => zip_map(x, y, shape, |p, q| p == q),
        Binary::Ne => zip_map(x, y, shape, |p, q| p != q),
        Binary::Lt => zip_map(x, y, shape, |p, q| p < q),
        Binary::Le => zip_map(x, y, shape, |p, q| p <= q),
        Binary::Gt => zip_map(x, y, shape, |p, q| p > q),
        Binary::Ge => zip_map(x, y, shape, |p, q| p >= q),
        _ => unreachable!("not a comparison"),
    }
}

pub fn binary(op: Binary, a: &TensorData, b: &TensorData) -> TResult<TensorData> {
    let shape = broadcast(a.shape(), b.shape())?;
    let dt = op.compute_dtype(a.dtype(), b.dtype())?;
    if op == Binary::Pow
        && dt == DType::Int64
        && b.to_dtype(DType::Int64)
            .to_scalars()
            .iter()
            .any(|s| s.as_i64() < 0)
    {
        return Err(TensorError::runtime(
            "integers to negative integer powers are not allowed",
        ));
    }
    let (a, b) = (a.to_dtype(dt), b.to_dtype(dt));
    Ok(match (a.as_ref(), b.as_ref()) {
        (TensorData::Bool(x), TensorData::Bool(y)) => {
            if op.is_comparison() {
                TensorData::Bool(compared(op, x, y, &shape))
            } else {
                TensorData::Bool(zip_map(x, y, &shape, |p, q| match op {
                    Binary::Add | Binary::Or | Binary::Maximum => p | q,
                    Binary::Mul | Binary::And | Binary::Minimum => p & q,
                    Binary::Xor => p ^ q,
                    _ => unreachable!("bool ops are checked by compute_dtype"),
                }))
            }
        }
        (TensorData::Int64(x), TensorData::Int64(y)) => {
            if op.is_comparison() {
                TensorData::Bool(compared(op, x, y, &shape))
            } else {
                TensorData::Int64(zip_map(x, y, &shape, |p, q| int_op(op, p, q)))
            }
        }
        (TensorData::Float32(x), TensorData::Float32(y)) => {
            if op.is_comparison() {
                TensorData::Bool(compared(op, x, y, &shape))
            } else {
                // + - * / in float32 are correctly rounded, as the float64 operation rounded
                // to float32 is: the same results, one loop per op (which vectorizes).
                TensorData::Float32(match op {
                    Binary::Add => zip_map(x, y, &shape, |p: f32, q| p + q),
                    Binary::Sub => zip_map(x, y, &shape, |p: f32, q| p - q),
                    Binary::Mul => zip_map(x, y, &shape, |p: f32, q| p * q),
                    Binary::Div => zip_map(x, y, &shape, |p: f32, q| p / q),
                    _ => zip_map(x, y, &shape, |p, q| {
                        float_op(op, f64::from(p), f64::from(q)) as f32
                    }),
                })
            }
        }
        (TensorData::Float64(x), TensorData::Float64(y)) => {
            if op.is_comparison() {
                TensorData::Bool(compared(op, x, y, &shape))
            } else {
                // The same arithmetic as `float_op` (which a lowered graph uses), one loop
                // per op.
                TensorData::Float64(match op {
                    Binary::Add => zip_map(x, y, &shape, |p: f64, q| p + q),
                    Binary::Sub => zip_map(x, y, &shape, |p: f64, q| p - q),
                    Binary::Mul => zip_map(x, y, &shape, |p: f64, q| p * q),
                    Binary::Div => zip_map(x, y, &shape, |p: f64, q| p / q),
                    _ => zip_map(x, y, &shape, |p, q| float_op(op, p, q)),
                })
            }
        }
        _ => unreachable!("both operands were cast to one type"),
    })
}

/// `clamp(x, min=None, max=None)`: bounds are Python numbers, weakly typed.
pub fn clamp(t: &TensorData, min: Option<f64>, max: Option<f64>) -> TResult<TensorData> {
    let mut out = t.clone();
    if let Some(lo) = min {
        out = binary(Binary::Maximum, &out, &bound(lo, t.dtype()))?;
    }
    if let Some(hi) = max {
        out = binary(Binary::Minimum, &out, &bound(hi, t.dtype()))?;
    }
    Ok(out)
}

fn bound(v: f64, dt: DType) -> TensorData {
    let scalar = if v.fract() == 0.0 && !dt.is_float() {
        crate::tensor::data::Scalar::Int(v as i64)
    } else {
        crate::tensor::data::Scalar::Float(v)
    };
    let d = crate::tensor::dtype::weak_scalar_dtype(scalar, dt);
    TensorData::full(&[], scalar, d)
}

fn clamp_dtype(t: DType, attrs: &Attrs) -> TResult<DType> {
    let mut dt = t;
    for name in ["min", "max"] {
        if let Some(v) = attrs.opt_float(name)? {
            dt = DType::promote(dt, bound(v, t).dtype());
        }
    }
    Ok(dt)
}

/// `where(cond, a, b)`: `a` where `cond` is true, else `b`; all three broadcast.
pub fn where_(cond: &TensorData, a: &TensorData, b: &TensorData) -> TResult<TensorData> {
    let shape = broadcast(&broadcast(cond.shape(), a.shape())?, b.shape())?;
    let dt = DType::promote(a.dtype(), b.dtype());
    let c = cond.to_dtype(DType::Bool);
    let TensorData::Bool(c) = c.as_ref() else {
        unreachable!("cast to bool")
    };
    let c = c.broadcast(IxDyn(&shape)).expect("checked").to_owned();
    fn pick<T: Element>(
        c: &ArrayD<bool>,
        a: &ArrayD<T>,
        b: &ArrayD<T>,
        shape: &[usize],
    ) -> ArrayD<T> {
        let dim = IxDyn(shape);
        let (a, b) = (
            a.broadcast(dim.clone()).expect("checked"),
            b.broadcast(dim).expect("checked"),
        );
        Zip::from(c)
            .and(&a)
            .and(&b)
            .map_collect(|&k, &x, &y| if k { x } else { y })
    }
    Ok(match (a.to_dtype(dt).as_ref(), b.to_dtype(dt).as_ref()) {
        (TensorData::Bool(x), TensorData::Bool(y)) => TensorData::Bool(pick(&c, x, y, &shape)),
        (TensorData::Int64(x), TensorData::Int64(y)) => TensorData::Int64(pick(&c, x, y, &shape)),
        (TensorData::Float32(x), TensorData::Float32(y)) => {
            TensorData::Float32(pick(&c, x, y, &shape))
        }
        (TensorData::Float64(x), TensorData::Float64(y)) => {
            TensorData::Float64(pick(&c, x, y, &shape))
        }
        _ => unreachable!("cast to one type"),
    })
}

pub fn ops() -> Vec<OpDef> {
    let mut out = Vec::new();
    for op in Binary::ALL {
        out.push(OpDef::new(
            op.name(),
            Arity::Exactly(2),
            move |m: &[Meta], _| {
                Ok(Meta {
                    shape: broadcast(&m[0].shape, &m[1].shape)?,
                    dtype: op.result_dtype(m[0].dtype, m[1].dtype)?,
                })
            },
            move |t: &[&TensorData], _| binary(op, t[0], t[1]),
        ));
    }
    for op in Unary::ALL {
        out.push(OpDef::new(
            op.name(),
            Arity::Exactly(1),
            move |m: &[Meta], _| {
                Ok(Meta {
                    shape: m[0].shape.clone(),
                    dtype: op.result_dtype(m[0].dtype)?,
                })
            },
            move |t: &[&TensorData], _| unary(op, t[0]),
        ));
    }
    out.push(OpDef::new(
        "clamp",
        Arity::Exactly(1),
        |m: &[Meta], a: &Attrs| {
            Ok(Meta {
                shape: m[0].shape.clone(),
                dtype: clamp_dtype(m[0].dtype, a)?,
            })
        },
        |t: &[&TensorData], a: &Attrs| clamp(t[0], a.opt_float("min")?, a.opt_float("max")?),
    ));
    out.push(OpDef::new(
        "where",
        Arity::Exactly(3),
        |m: &[Meta], _| {
            Ok(Meta {
                shape: broadcast(&broadcast(&m[0].shape, &m[1].shape)?, &m[2].shape)?,
                dtype: DType::promote(m[1].dtype, m[2].dtype),
            })
        },
        |t: &[&TensorData], _| where_(t[0], t[1], t[2]),
    ));
    out.push(OpDef::new(
        "to",
        Arity::Exactly(1),
        |m: &[Meta], a: &Attrs| match a.get("dtype") {
            crate::tensor::registry::Attr::DType(d) => Ok(Meta {
                shape: m[0].shape.clone(),
                dtype: *d,
            }),
            other => Err(TensorError::type_error(format!(
                "dtype must be a symtrace dtype, not {other:?}"
            ))),
        },
        |t: &[&TensorData], a: &Attrs| match a.get("dtype") {
            crate::tensor::registry::Attr::DType(d) => Ok(t[0].cast(*d)),
            _ => unreachable!("checked by inference"),
        },
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Dimension;

    /// A large binary op runs by parts on several threads, each operand lined up anew for its
    /// part: every pairing (whole, one element, rows, runs) gives what one thread gives, with
    /// parts that end mid-way through the rows of a 211-element bias.
    #[test]
    fn large_binary_ops_by_parts_compute_what_one_thread_computes() {
        let out_shape = [3, 97, 211];
        let make = |shape: &[usize], seed: f64| {
            TensorData::Float64(ArrayD::from_shape_fn(IxDyn(shape), |ix| {
                let i: usize = (0..ix.ndim()).map(|d| ix[d] * (d + 7)).sum();
                (i as f64 * 0.37 + seed).sin()
            }))
        };
        let shapes: [&[usize]; 6] = [
            &out_shape,
            &[211],
            &[1],
            &[3, 97, 1],
            &[1, 1, 211],
            &[3, 1, 1],
        ];
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let three = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let mut pairs = 0;
        for sa in shapes {
            for sb in shapes {
                if sa != out_shape && sb != out_shape {
                    continue;
                }
                let (a, b) = (make(sa, 0.1), make(sb, 0.7));
                for op in [Binary::Sub, Binary::Div, Binary::Lt] {
                    let alone = one.install(|| binary(op, &a, &b)).unwrap();
                    let split = three.install(|| binary(op, &a, &b)).unwrap();
                    assert_eq!(alone.shape(), out_shape);
                    assert!(alone == split, "{op:?} {sa:?} {sb:?}");
                    // Against the definition, element by element.
                    if op == Binary::Sub {
                        let (TensorData::Float64(x), TensorData::Float64(y)) = (&a, &b) else {
                            unreachable!()
                        };
                        let (x, y) = (
                            x.broadcast(IxDyn(&out_shape)).unwrap(),
                            y.broadcast(IxDyn(&out_shape)).unwrap(),
                        );
                        let TensorData::Float64(got) = &split else {
                            unreachable!()
                        };
                        assert!(Zip::from(got).and(&x).and(&y).all(|&g, &p, &q| g == p - q));
                    }
                }
                pairs += 1;
            }
        }
        assert_eq!(pairs, 11);
    }
}
