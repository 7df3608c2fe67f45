//! Sizes as expressions over a graph's values. A graph recorded with dynamic dimensions keeps
//! the sizes the program computed from them (`B * T` for a view, `:T` for a slice,
//! `arange(T)`) as expressions of its values' dimensions, worked out again for every call; the
//! program's decisions on such sizes (`assert T <= block`, a size forced to be a constant) are
//! checks a call must pass before it takes the entry.

use std::fmt;

use super::ir::Value;
use super::size_floats::{Rounding, SizeFloat, eval_rounded, fmt_rounded};
use crate::tensor::index::{Index, slice_indices};
use crate::tensor::ops::select::encode_index;
use crate::tensor::{Attr, Attrs, TensorData};

/// An integer computed from the dimensions of a graph's values.
#[derive(Clone, Debug, PartialEq)]
pub enum SizeExpr {
    Const(i64),
    /// Dimension `dim` of a value of the graph.
    Dim(Value, usize),
    /// The value of a 0-d integer input of the graph: an int of the frame's that changes
    /// from call to call, given to the graph as a number.
    Item(Value),
    Bin(SizeOp, Box<SizeExpr>, Box<SizeExpr>),
    /// An int of a float computed from sizes (`int(T * 0.5)`, `round(T / 3)`).
    Round(Rounding, Box<SizeFloat>),
}

/// Python's integer operators on sizes (none of them can raise but `//` and `%` by zero,
/// which an expression never holds: the simulation computed it at trace time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeOp {
    Add,
    Sub,
    Mul,
    FloorDiv,
    Mod,
    /// `min(a, b)` and `max(a, b)` of two ints.
    Min,
    Max,
}

impl SizeOp {
    /// `a op b` as Python computes it on ints (`None` where Python would raise, or past i64).
    pub fn apply(self, a: i64, b: i64) -> Option<i64> {
        match self {
            SizeOp::Add => a.checked_add(b),
            SizeOp::Sub => a.checked_sub(b),
            SizeOp::Mul => a.checked_mul(b),
            SizeOp::FloorDiv => floor_div(a, b),
            SizeOp::Mod => floor_div(a, b).and_then(|q| a.checked_sub(q.checked_mul(b)?)),
            SizeOp::Min => Some(a.min(b)),
            SizeOp::Max => Some(a.max(b)),
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            SizeOp::Add => "+",
            SizeOp::Sub => "-",
            SizeOp::Mul => "*",
            SizeOp::FloorDiv => "//",
            SizeOp::Mod => "%",
            SizeOp::Min => "min",
            SizeOp::Max => "max",
        }
    }
}

/// Python's `//`: rounded toward negative infinity.
fn floor_div(a: i64, b: i64) -> Option<i64> {
    let q = a.checked_div(b)?;
    Some(if a % b != 0 && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    })
}

/// What an expression reads of a value: the size of a dimension, or the number a 0-d value
/// holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read {
    Dim(usize),
    Item,
}

impl SizeExpr {
    /// Its value, with `read(v, r)` what `r` reads of `v` (`None` if something is missing or
    /// the arithmetic leaves i64).
    pub fn eval(&self, read: &impl Fn(Value, Read) -> Option<i64>) -> Option<i64> {
        match self {
            SizeExpr::Const(c) => Some(*c),
            SizeExpr::Dim(v, d) => read(*v, Read::Dim(*d)),
            SizeExpr::Item(v) => read(*v, Read::Item),
            SizeExpr::Bin(op, a, b) => op.apply(a.eval(read)?, b.eval(read)?),
            SizeExpr::Round(r, x) => eval_rounded(*r, x, read),
        }
    }

    /// The values whose dimensions it reads.
    pub fn values(&self, out: &mut Vec<Value>) {
        match self {
            SizeExpr::Const(_) => {}
            SizeExpr::Dim(v, _) | SizeExpr::Item(v) => out.push(*v),
            SizeExpr::Bin(_, a, b) => {
                a.values(out);
                b.values(out);
            }
            SizeExpr::Round(_, x) => x.values(out),
        }
    }

    pub fn remap(&mut self, f: &impl Fn(Value) -> Value) {
        match self {
            SizeExpr::Const(_) => {}
            SizeExpr::Dim(v, _) | SizeExpr::Item(v) => *v = f(*v),
            SizeExpr::Bin(_, a, b) => {
                a.remap(f);
                b.remap(f);
            }
            SizeExpr::Round(_, x) => x.remap(f),
        }
    }
}

impl fmt::Display for SizeExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SizeExpr::Const(c) => write!(f, "{c}"),
            SizeExpr::Dim(v, d) => write!(f, "{v}.size({d})"),
            SizeExpr::Item(v) => write!(f, "{v}.item()"),
            SizeExpr::Bin(op @ (SizeOp::Min | SizeOp::Max), a, b) => {
                write!(f, "{}({a}, {b})", op.symbol())
            }
            SizeExpr::Bin(op, a, b) => write!(f, "({a} {} {b})", op.symbol()),
            SizeExpr::Round(r, x) => fmt_rounded(f, *r, x),
        }
    }
}

/// What `r` reads of a tensor: a dimension's size, or the value of a 0-d integer tensor.
pub fn read_tensor(t: &TensorData, r: Read) -> Option<i64> {
    match r {
        Read::Dim(d) => t.shape().get(d).and_then(|&n| i64::try_from(n).ok()),
        Read::Item if t.ndim() == 0 && t.dtype() == crate::tensor::DType::Int64 => {
            match t.to_scalars().first()? {
                crate::tensor::Scalar::Int(i) => Some(*i),
                _ => None,
            }
        }
        Read::Item => None,
    }
}

/// What `r` reads of a value known by its shape (its item, if any, given apart).
pub fn read_shape(shape: &[usize], item: Option<i64>, r: Read) -> Option<i64> {
    match r {
        Read::Dim(d) => shape.get(d).and_then(|&n| i64::try_from(n).ok()),
        Read::Item => item,
    }
}

/// How a check compares two sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeCmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl SizeCmp {
    pub fn holds(self, a: i64, b: i64) -> bool {
        match self {
            SizeCmp::Eq => a == b,
            SizeCmp::Ne => a != b,
            SizeCmp::Lt => a < b,
            SizeCmp::Le => a <= b,
            SizeCmp::Gt => a > b,
            SizeCmp::Ge => a >= b,
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            SizeCmp::Eq => "==",
            SizeCmp::Ne => "!=",
            SizeCmp::Lt => "<",
            SizeCmp::Le => "<=",
            SizeCmp::Gt => ">",
            SizeCmp::Ge => ">=",
        }
    }
}

/// A comparison of sizes the simulation relied on: `lhs cmp rhs` came out `outcome`.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeCheck {
    pub lhs: SizeExpr,
    pub cmp: SizeCmp,
    pub rhs: SizeExpr,
    pub outcome: bool,
}

impl SizeCheck {
    /// Whether it comes out as it did at trace time.
    pub fn passes(&self, dim: &impl Fn(Value, Read) -> Option<i64>) -> bool {
        match (self.lhs.eval(dim), self.rhs.eval(dim)) {
            (Some(a), Some(b)) => self.cmp.holds(a, b) == self.outcome,
            _ => false,
        }
    }

    pub fn values(&self, out: &mut Vec<Value>) {
        self.lhs.values(out);
        self.rhs.values(out);
    }

    pub fn remap(&mut self, f: &impl Fn(Value) -> Value) {
        self.lhs.remap(f);
        self.rhs.remap(f);
    }
}

impl fmt::Display for SizeCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (l, c, r) = (&self.lhs, self.cmp.symbol(), &self.rhs);
        match self.outcome {
            true => write!(f, "{l} {c} {r}"),
            false => write!(f, "not {l} {c} {r}"),
        }
    }
}

/// An attribute of a node that the program computed from sizes: worked out for each call.
#[derive(Clone, Debug, PartialEq)]
pub enum SymAttr {
    Int(String, SizeExpr),
    Ints(String, Vec<SizeExpr>),
    /// A basic index as the program wrote it, its slices resolved against the sizes of the
    /// indexed value (the node's first input) as `slice.indices` does: the `index` attribute.
    Index(Vec<SymIndex>),
}

/// One element of a basic index with sizes as expressions.
#[derive(Clone, Debug, PartialEq)]
pub enum SymIndex {
    Int(SizeExpr),
    Slice([Option<SizeExpr>; 3]),
    NewAxis,
    Ellipsis,
}

impl SymAttr {
    pub fn values(&self, out: &mut Vec<Value>) {
        match self {
            SymAttr::Int(_, e) => e.values(out),
            SymAttr::Ints(_, es) => es.iter().for_each(|e| e.values(out)),
            SymAttr::Index(items) => {
                for i in items {
                    match i {
                        SymIndex::Int(e) => e.values(out),
                        SymIndex::Slice(parts) => {
                            parts.iter().flatten().for_each(|e| e.values(out))
                        }
                        SymIndex::NewAxis | SymIndex::Ellipsis => {}
                    }
                }
            }
        }
    }

    pub fn remap(&mut self, f: &impl Fn(Value) -> Value) {
        match self {
            SymAttr::Int(_, e) => e.remap(f),
            SymAttr::Ints(_, es) => es.iter_mut().for_each(|e| e.remap(f)),
            SymAttr::Index(items) => {
                for i in items {
                    match i {
                        SymIndex::Int(e) => e.remap(f),
                        SymIndex::Slice(parts) => {
                            parts.iter_mut().flatten().for_each(|e| e.remap(f))
                        }
                        SymIndex::NewAxis | SymIndex::Ellipsis => {}
                    }
                }
            }
        }
    }

    /// The attribute's value for one call; `first` is the shape of the node's first input.
    fn resolve(
        &self,
        first: Option<&[usize]>,
        dim: &impl Fn(Value, Read) -> Option<i64>,
    ) -> Option<(&str, Attr)> {
        Some(match self {
            SymAttr::Int(name, e) => (name.as_str(), Attr::Int(e.eval(dim)?)),
            SymAttr::Ints(name, es) => (
                name.as_str(),
                Attr::Ints(es.iter().map(|e| e.eval(dim)).collect::<Option<_>>()?),
            ),
            SymAttr::Index(items) => {
                let shape = first?;
                let consumed = items
                    .iter()
                    .filter(|i| matches!(i, SymIndex::Int(_) | SymIndex::Slice(_)))
                    .count();
                let mut out = Vec::with_capacity(items.len());
                let mut d = 0;
                for item in items {
                    out.push(match item {
                        SymIndex::NewAxis => Index::NewAxis,
                        SymIndex::Ellipsis => {
                            d += shape.len().saturating_sub(consumed);
                            Index::Ellipsis
                        }
                        SymIndex::Int(e) => {
                            d += 1;
                            Index::Int(e.eval(dim)?)
                        }
                        SymIndex::Slice([a, b, c]) => {
                            let part = |p: &Option<SizeExpr>| match p {
                                None => Some(None),
                                Some(e) => e.eval(dim).map(Some),
                            };
                            let len = shape.get(d).copied().unwrap_or(0);
                            d += 1;
                            let (a, b, c) = slice_indices(part(a)?, part(b)?, part(c)?, len)?;
                            Index::Slice(a, b, c)
                        }
                    });
                }
                ("index", Attr::Ints(encode_index(&out)))
            }
        })
    }
}

/// The integer attributes of `attrs` as constants: for a node whose attributes hold at every
/// call that passes the checks the simulation made (a split along a dimension whose size is
/// checked).
pub fn pinned(attrs: &Attrs) -> Vec<SymAttr> {
    attrs
        .0
        .iter()
        .filter_map(|(name, a)| match a {
            Attr::Int(i) => Some(SymAttr::Int(name.clone(), SizeExpr::Const(*i))),
            Attr::Ints(v) => Some(SymAttr::Ints(
                name.clone(),
                v.iter().map(|i| SizeExpr::Const(*i)).collect(),
            )),
            _ => None,
        })
        .collect()
}

impl SymAttr {
    /// The attribute's name (`index` for a basic index).
    pub fn name(&self) -> &str {
        match self {
            SymAttr::Int(n, _) | SymAttr::Ints(n, _) => n,
            SymAttr::Index(_) => "index",
        }
    }
}

impl fmt::Display for SymAttr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |es: &[SizeExpr]| es.iter().map(ToString::to_string).collect::<Vec<_>>();
        match self {
            SymAttr::Int(n, e) => write!(f, "{n}={e}"),
            SymAttr::Ints(n, es) => write!(f, "{n}=[{}]", list(es).join(", ")),
            SymAttr::Index(items) => {
                let part =
                    |p: &Option<SizeExpr>| p.as_ref().map_or(String::new(), ToString::to_string);
                let items: Vec<String> = items
                    .iter()
                    .map(|i| match i {
                        SymIndex::Int(e) => e.to_string(),
                        SymIndex::Slice([a, b, None]) => format!("{}:{}", part(a), part(b)),
                        SymIndex::Slice([a, b, c]) => {
                            format!("{}:{}:{}", part(a), part(b), part(c))
                        }
                        SymIndex::NewAxis => "None".to_owned(),
                        SymIndex::Ellipsis => "...".to_owned(),
                    })
                    .collect();
                write!(f, "index=[{}]", items.join(", "))
            }
        }
    }
}

/// `attrs` with the symbolic ones worked out for one call (`None`: one cannot be, as when a
/// slice's step is zero).
pub fn resolve(
    attrs: &Attrs,
    sym: &[SymAttr],
    first: Option<&[usize]>,
    dim: &impl Fn(Value, Read) -> Option<i64>,
) -> Option<Attrs> {
    let mut out = attrs.clone();
    for s in sym {
        let (name, value) = s.resolve(first, dim)?;
        match out.0.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = value,
            None => out.0.push((name.to_owned(), value)),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_operators_round_as_python_does() {
        for (a, b) in [(7, 2), (-7, 2), (7, -2), (-7, -2), (6, 3), (0, 5)] {
            let q = (a as f64 / b as f64).floor() as i64;
            assert_eq!(SizeOp::FloorDiv.apply(a, b), Some(q), "{a} // {b}");
            assert_eq!(SizeOp::Mod.apply(a, b), Some(a - q * b), "{a} % {b}");
        }
        assert_eq!(SizeOp::FloorDiv.apply(1, 0), None);
        assert_eq!(SizeOp::Mul.apply(i64::MAX, 2), None);
    }

    #[test]
    fn slices_resolve_as_slice_indices_does() {
        // Values from CPython's slice(a, b, c).indices(n).
        let cases: &[(
            (Option<i64>, Option<i64>, Option<i64>),
            usize,
            (i64, i64, i64),
        )] = &[
            ((None, Some(3), None), 10, (0, 3, 1)),
            ((None, Some(30), None), 10, (0, 10, 1)),
            ((Some(-3), None, None), 10, (7, 10, 1)),
            ((Some(-30), Some(-20), None), 10, (0, 0, 1)),
            ((None, None, Some(-1)), 10, (9, -1, -1)),
            ((Some(20), Some(-30), Some(-2)), 10, (9, -1, -2)),
            ((Some(5), Some(2), Some(-1)), 4, (3, 2, -1)),
        ];
        for &((a, b, c), n, want) in cases {
            assert_eq!(
                slice_indices(a, b, c, n),
                Some(want),
                "{a:?}:{b:?}:{c:?} of {n}"
            );
        }
        assert_eq!(slice_indices(None, None, Some(0), 3), None);
    }

    #[test]
    fn symbolic_attributes_follow_the_sizes_of_each_call() {
        let t = SizeExpr::Dim(Value::Input(0), 1);
        let bt = SizeExpr::Bin(
            SizeOp::Mul,
            Box::new(SizeExpr::Dim(Value::Input(0), 0)),
            Box::new(t.clone()),
        );
        let attrs = Attrs::new().with("shape", Attr::Ints(vec![6, 4]));
        let sym = [SymAttr::Ints("shape".into(), vec![bt, SizeExpr::Const(4)])];
        let dims = |v: Value, r: Read| match r {
            Read::Dim(d) if v == Value::Input(0) => Some([2, 5, 4][d]),
            _ => None,
        };
        let r = resolve(&attrs, &sym, None, &dims).unwrap();
        assert_eq!(r.get("shape"), &Attr::Ints(vec![10, 4]));
        let index = [SymAttr::Index(vec![
            SymIndex::Ellipsis,
            SymIndex::Slice([None, Some(t.clone()), None]),
        ])];
        let r = resolve(&Attrs::new(), &index, Some(&[3, 64]), &dims).unwrap();
        assert_eq!(
            r.get("index"),
            &Attr::Ints(encode_index(&[Index::Ellipsis, Index::Slice(0, 5, 1)]))
        );
        let check = SizeCheck {
            lhs: t,
            cmp: SizeCmp::Le,
            rhs: SizeExpr::Const(4),
            outcome: false,
        };
        assert!(check.passes(&dims));
        assert!(!check.passes(&|_, r| match r {
            Read::Dim(d) => Some([2, 3, 4][d]),
            Read::Item => None,
        }));
        assert_eq!(check.to_string(), "not in0.size(1) <= 4");
        assert_eq!(sym[0].to_string(), "shape=[(in0.size(0) * in0.size(1)), 4]");
        assert_eq!(index[0].to_string(), "index=[..., :in0.size(1)]");
    }
}
