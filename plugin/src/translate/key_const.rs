//! The keys by which a caller's dict is read and followed: exactly an int, a str, bytes,
//! `None`, a dtype, or a tuple of such keys (a cache keyed by a shape and a dtype), which the
//! interpreter hashes and compares natively, so that no user code runs where a guard or a
//! replayed store uses one. Bools and floats are left out: `True == 1` and `1.0 == 1` are
//! one key to a dict and would be two here.

use rustpython_vm::builtins::PyTuple;
use rustpython_vm::{AsObject, Context, PyObject, PyObjectRef, VirtualMachine};
use std::fmt;
use std::rc::Rc;

use crate::tensor::{DType, PyDType, dtype_object};
use crate::translate::source::{Source, identity_key};
use crate::translate::values::Var;
use crate::translate::values::numbers::Num;

/// A dictionary key a source reads by: exactly an int, a str, `None`, a dtype, or a tuple of
/// such keys (hashed and compared natively, no user code runs; no two variants are equal
/// in Python).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum KeyConst {
    Int(i64),
    Str(String),
    /// `os.environ` keys its entries by the encoded name.
    Bytes(Vec<u8>),
    None,
    /// Hashed and compared by value (`python/dtype.rs`), made as the module's object.
    Dtype(DType),
    Tuple(Vec<KeyConst>),
}

impl KeyConst {
    /// `o` as such a key, when it is one.
    pub fn of(o: &PyObject, ctx: &rustpython_vm::Context) -> Option<KeyConst> {
        use num_traits::ToPrimitive;
        let t = &ctx.types;
        if o.class().is(t.int_type) {
            let i = o.downcast_ref::<rustpython_vm::builtins::PyInt>()?;
            return i.as_bigint().to_i64().map(KeyConst::Int);
        }
        if o.class().is(t.str_type) {
            let s = o.downcast_ref::<rustpython_vm::builtins::PyStr>()?;
            return s.to_str().map(|s| KeyConst::Str(s.to_owned()));
        }
        if o.class().is(t.bytes_type) {
            let b = o.downcast_ref::<rustpython_vm::builtins::PyBytes>()?;
            return Some(KeyConst::Bytes(b.as_bytes().to_vec()));
        }
        if o.class().is(t.none_type) {
            return Some(KeyConst::None);
        }
        if let Some(d) = o.downcast_ref::<PyDType>() {
            return Some(KeyConst::Dtype(d.dtype));
        }
        if o.class().is(t.tuple_type) {
            let items = o.downcast_ref::<PyTuple>()?;
            return items
                .as_slice()
                .iter()
                .map(|i| KeyConst::of(i, ctx))
                .collect::<Option<Vec<_>>>()
                .map(KeyConst::Tuple);
        }
        None
    }

    /// Whether `o` is such a key (`of` without making it): what a guard scanning a set's
    /// elements asks of each, so that no `__eq__` of the program's runs in a lookup.
    pub fn is_key(o: &PyObject, ctx: &rustpython_vm::Context) -> bool {
        use num_traits::ToPrimitive;
        let t = &ctx.types;
        let c = o.class();
        if c.is(t.int_type) {
            return o
                .downcast_ref::<rustpython_vm::builtins::PyInt>()
                .is_some_and(|i| i.as_bigint().to_i64().is_some());
        }
        if c.is(t.tuple_type) {
            return o
                .downcast_ref::<PyTuple>()
                .is_some_and(|items| items.as_slice().iter().all(|i| KeyConst::is_key(i, ctx)));
        }
        c.is(t.str_type)
            || c.is(t.bytes_type)
            || c.is(t.none_type)
            || o.downcast_ref::<PyDType>().is_some()
    }

    /// The key as an object.
    pub fn object(&self, vm: &VirtualMachine) -> PyObjectRef {
        match self {
            KeyConst::Int(i) => vm.ctx.new_int(*i).into(),
            KeyConst::Str(s) => vm.ctx.new_str(s.as_str()).into(),
            KeyConst::Bytes(b) => vm.ctx.new_bytes(b.clone()).into(),
            KeyConst::None => vm.ctx.none(),
            KeyConst::Dtype(d) => dtype_object(*d, vm),
            KeyConst::Tuple(items) => vm
                .ctx
                .new_tuple(items.iter().map(|i| i.object(vm)).collect())
                .into(),
        }
    }
}

impl fmt::Display for KeyConst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyConst::Int(i) => write!(f, "{i}"),
            KeyConst::Str(s) => write!(f, "{s:?}"),
            KeyConst::Bytes(b) => write!(f, "b{:?}", String::from_utf8_lossy(b)),
            KeyConst::None => write!(f, "None"),
            KeyConst::Dtype(d) => write!(f, "symtrace.{}", d.name()),
            KeyConst::Tuple(items) if items.len() == 1 => write!(f, "({},)", items[0]),
            KeyConst::Tuple(items) => {
                let shown: Vec<String> = items.iter().map(|i| i.to_string()).collect();
                write!(f, "({})", shown.join(", "))
            }
        }
    }
}

/// The key of a store into a caller's dict that reads of the dict follow: a constant, or an
/// object of the caller's hashed by identity (a parameter tensor), with where it is read; or
/// an int that changes per call (`values::keyed_stores`), which no read follows: a read of
/// the dict fixes it by its value first (a constant then), or is refused.
#[derive(Clone, Debug)]
pub enum StoreKey {
    Const(KeyConst),
    Object(PyObjectRef, Source),
    Changing(Rc<Num>),
}

impl StoreKey {
    /// Whether a read by `self` finds what a store by `other` stored (as the simulation
    /// sees the two objects now; `Object` keys read from other sources are related by guards,
    /// see `SideEffects::read_key`).
    pub fn same(&self, other: &StoreKey) -> bool {
        match (self, other) {
            (StoreKey::Const(a), StoreKey::Const(b)) => a == b,
            (StoreKey::Object(a, _), StoreKey::Object(b, _)) => a.is(b),
            _ => false,
        }
    }
}

/// The key of an item store when it is exactly a str, an int or a tuple of them, a caller's
/// object hashed by identity, or an int that changes per call (what a dict's keyed read can
/// follow, or refuse).
pub fn store_key(key: &Var) -> Option<StoreKey> {
    let ctx = Context::genesis();
    match key {
        // A class the call computed (`type(p)`): hashed by identity, named as itself.
        Var::Obj(k) if crate::translate::values::is_plain_class(k, ctx) => {
            Some(StoreKey::Object(k.clone(), Source::object(k.clone())))
        }
        Var::Obj(k) => KeyConst::of(k, ctx).map(StoreKey::Const),
        Var::Lazy(k, source) if identity_key(k, ctx).is_some() => {
            Some(StoreKey::Object(k.clone(), source.clone()))
        }
        Var::Num(n) => Some(StoreKey::Changing(n.clone())),
        _ => None,
    }
}

/// The key of an item store when it is exactly a str.
pub fn str_key(key: &Var) -> Option<&str> {
    match key {
        Var::Obj(k) if k.class().is(Context::genesis().types.str_type) => k
            .downcast_ref::<rustpython_vm::builtins::PyStr>()
            .and_then(|s| s.to_str()),
        _ => None,
    }
}
