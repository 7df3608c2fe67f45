//! Where a value the simulation used comes from: a local, a global, a builtin, a closure
//! variable, an attribute or item of a source, a number computed from sources. How a source
//! is read lives beside it: by the simulation and a guard's readable form (`read`), by a
//! compiled guard program (`compiled_read`, one step planned once per code object), and by
//! generated code (`load`).

mod compiled_read;
mod load;
mod read;

use std::fmt;

use rustpython_vm::PyObjectRef;

use crate::translate::guards::ident::Ident;
pub use crate::translate::key_const::KeyConst;
pub use crate::translate::native_reads::{
    builtins_dict, closure_cell, dict_storage, identity_key, item, native_getter,
};
pub use compiled_read::CompiledRead;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// An argument or local of the frame (cells read out).
    Local(String),
    Global(String),
    Builtin(String),
    /// A free variable of the frame's function (the content of its closure cell).
    Free(String),
    Attr(Box<Source>, String),
    /// An element of a tuple or list.
    Item(Box<Source>, usize),
    /// The value of a dictionary under a string key.
    Key(Box<Source>, String),
    /// The value of a dictionary under an int key (a logger's level cache) or a tuple of ints
    /// and strs (a cache keyed by a shape): read only from a dict the call does not change.
    ConstKey(Box<Source>, KeyConst),
    /// The value of a dictionary under an object hashed by its identity (an optimizer's state
    /// keyed by a parameter tensor), the key read from its own source per call.
    IdKey(Box<Source>, Box<Source>),
    /// An element of a list or tuple at an index computed per call (a schedule's
    /// `self.sigmas[self.step]`, the step a counter): read only from a sequence the call does
    /// not change, the index an exact int, negative from the end as Python's.
    At(Box<Source>, Box<Source>),
    /// A global of a function (read from its `__globals__`): an inlined function's globals.
    FnGlobal(Box<Source>, String),
    /// The content of a function's closure cell (`fn.__closure__[i].cell_contents`).
    Closure(Box<Source>, usize),
    /// The cell itself that a `Free` or `Closure` source reads: what a guard compares where an
    /// inlined closure and the frame may share a cell (`values::calls`).
    CellOf(Box<Source>),
    /// An attribute read by a native getter, where `Attr` reads an instance's dictionary: a
    /// function's `__name__`, `__qualname__` or `__module__`, a slot of an instance of a class
    /// with `__slots__` (its member descriptor). No user code runs (see `native_getter`).
    NativeAttr(Box<Source>, String),
    /// An entry of a class's own namespace (`source.__dict__[name]` of a class), where
    /// `Attr` reads an instance's dictionary: a scalar class attribute that a guard compares
    /// by value (see `values::class_stores`). No descriptor runs.
    ClassAttr(Box<Source>, String),
    /// `type(source)`: what a guard on a class's attributes reads.
    TypeOf(Box<Source>),
    /// `len(source)` of a list (exactly): a length that changes per call, read as a number
    /// (`values::list_lengths`).
    Len(Box<Source>),
    /// `source()` of a `weakref.ref` (exactly that class): its referent, or None once it is
    /// collected. No user code runs.
    WeakTarget(Box<Source>),
    /// `source.__dict__`: an instance's attribute dictionary.
    InstanceDict(Box<Source>),
    /// An object that is not read from the frame (the `Tensor` class): a guard on it checks a
    /// fact of the object itself, its version.
    Object(ObjectKey),
    /// The default float type (`symtrace.get_default_dtype()`), as its number in
    /// `DType::ALL`: graphs infer their float results under it.
    DefaultDType,
    /// A number computed from two sources (a deferred counter, `self.t + 1`), as the frame
    /// would compute it on entry: a graph input that the replacement computes per call.
    /// Its operands are ints or floats (their types guarded; evaluated only on exact ones),
    /// and `%` and `//` take an int by a nonzero constant int, so the operator cannot raise;
    /// `/` and `**` may (a zero divisor, an overflow): a guard evaluates them first, failing
    /// where they would raise (`State::deferred_binary`).
    Arith(Arith, Box<Source>, Box<Source>),
    /// Whether `a op b`, for two numbers computed from the frame as `Arith` computes them:
    /// a comparison between two numbers that change per call, which a guard expects to come
    /// out as it did (`State::deferred_relation`). Evaluated on exact ints and floats only,
    /// so no user `__lt__` runs; never loaded by generated code.
    Compare(CompareOp, Box<Source>, Box<Source>),
    /// `math.<f>(source)` of a deferred number (a schedule's `math.cos(pi * step / total)`),
    /// computed per call as `Arith` is; it raises on a domain error or an overflow, so a
    /// guard evaluates it first (`State::deferred_math`).
    Math(crate::translate::math_functions::MathFn, Box<Source>),
    /// The result of the `k`th call the replacement makes before anything else, into a local
    /// of its own: a number drawn from Python's `random` module (`values::python_draws`), or
    /// a tensor an `lru_cache` holds (`values::cached_calls`). No guard reads it: guards run
    /// before the call.
    Draw(usize),
}

/// The operator of a [`Source::Compare`] (the VM's type has no `Hash`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompareOp(pub rustpython_vm::types::PyComparisonOp);

impl std::hash::Hash for CompareOp {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.operator_token().hash(state)
    }
}

/// The operators of an [`Source::Arith`]: those of deferred numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arith {
    Add,
    Sub,
    Mul,
    /// Only an int by a nonzero constant int (`step % 2`), or a float by a nonzero constant
    /// (`values::numbers::deferrable_division`).
    Mod,
    /// As `Mod`.
    FloorDiv,
    /// True division (a learning rate's `step / warmup`).
    TrueDiv,
    /// A power with a float operand (Adam's `beta1 ** step`), or of an int by a constant
    /// int in `-MAX_INT_EXPONENT..=MAX_INT_EXPONENT` (`n ** 2`, `n ** -1`).
    Pow,
    /// `&`, `|`, `^` of two ints (`step & 1`), which never raise.
    And,
    Or,
    Xor,
    /// Shifts of an int by a constant int in `0..=MAX_SHIFT` (`n >> 1`, `1 << k` is not one).
    LShift,
    RShift,
}

/// The largest constant exponent of an int power a deferred number may have: Python computes
/// the same power in the original, but a guard must not compute one without bound.
pub const MAX_INT_EXPONENT: u32 = 64;
/// The largest constant shift of a deferred number, for the same reason.
pub const MAX_SHIFT: u32 = 64;

/// Whether `o` is an int in `0..=max` (a constant exponent or shift of a deferred number).
pub(crate) fn small_int(
    o: &rustpython_vm::PyObjectRef,
    max: u32,
    vm: &rustpython_vm::VirtualMachine,
) -> bool {
    rustpython_vm::AsObject::is(o.class(), vm.ctx.types.int_type)
        && o.downcast_ref::<rustpython_vm::builtins::PyInt>()
            .and_then(|i| u32::try_from(i.as_bigint()).ok())
            .is_some_and(|i| i <= max)
}

/// Whether `o` is an int exponent of a deferred int power: in `-MAX_INT_EXPONENT..=
/// MAX_INT_EXPONENT` (a negative one gives a float, `n ** -1`; of 0 it raises, which the
/// guard that computes it sees).
pub(crate) fn small_exponent(
    o: &rustpython_vm::PyObjectRef,
    vm: &rustpython_vm::VirtualMachine,
) -> bool {
    rustpython_vm::AsObject::is(o.class(), vm.ctx.types.int_type)
        && o.downcast_ref::<rustpython_vm::builtins::PyInt>()
            .and_then(|i| i64::try_from(i.as_bigint()).ok())
            .is_some_and(|i| i.unsigned_abs() <= u64::from(MAX_INT_EXPONENT))
}

impl Arith {
    pub fn of(op: rustpython_vm::bytecode::BinaryOperator) -> Option<Arith> {
        use rustpython_vm::bytecode::BinaryOperator as B;
        match op {
            B::Add | B::InplaceAdd => Some(Arith::Add),
            B::Subtract | B::InplaceSubtract => Some(Arith::Sub),
            B::Multiply | B::InplaceMultiply => Some(Arith::Mul),
            B::Remainder | B::InplaceRemainder => Some(Arith::Mod),
            B::FloorDivide | B::InplaceFloorDivide => Some(Arith::FloorDiv),
            B::TrueDivide | B::InplaceTrueDivide => Some(Arith::TrueDiv),
            B::Power | B::InplacePower => Some(Arith::Pow),
            B::And | B::InplaceAnd => Some(Arith::And),
            B::Or | B::InplaceOr => Some(Arith::Or),
            B::Xor | B::InplaceXor => Some(Arith::Xor),
            B::Lshift | B::InplaceLshift => Some(Arith::LShift),
            B::Rshift | B::InplaceRshift => Some(Arith::RShift),
            _ => None,
        }
    }

    pub fn operator(self) -> rustpython_vm::bytecode::BinaryOperator {
        use rustpython_vm::bytecode::BinaryOperator as B;
        match self {
            Arith::Add => B::Add,
            Arith::Sub => B::Subtract,
            Arith::Mul => B::Multiply,
            Arith::Mod => B::Remainder,
            Arith::FloorDiv => B::FloorDivide,
            Arith::TrueDiv => B::TrueDivide,
            Arith::Pow => B::Power,
            Arith::And => B::And,
            Arith::Or => B::Or,
            Arith::Xor => B::Xor,
            Arith::LShift => B::Lshift,
            Arith::RShift => B::Rshift,
        }
    }

    fn symbol(self) -> &'static str {
        match self {
            Arith::Add => "+",
            Arith::Sub => "-",
            Arith::Mul => "*",
            Arith::Mod => "%",
            Arith::FloorDiv => "//",
            Arith::TrueDiv => "/",
            Arith::Pow => "**",
            Arith::And => "&",
            Arith::Or => "|",
            Arith::Xor => "^",
            Arith::LShift => "<<",
            Arith::RShift => ">>",
        }
    }
}

/// An object as part of a source: equal by identity (held weakly by a cache entry's copy).
#[derive(Clone, Debug)]
pub struct ObjectKey(pub Ident);

impl PartialEq for ObjectKey {
    fn eq(&self, other: &Self) -> bool {
        self.0.addr() == other.0.addr()
    }
}

impl Eq for ObjectKey {}

impl std::hash::Hash for ObjectKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.addr().hash(state);
    }
}

impl Source {
    pub fn attr(self, name: &str) -> Source {
        Source::Attr(Box::new(self), name.to_owned())
    }

    pub fn type_of(self) -> Source {
        Source::TypeOf(Box::new(self))
    }

    pub fn instance_dict(self) -> Source {
        Source::InstanceDict(Box::new(self))
    }

    pub fn object(o: PyObjectRef) -> Source {
        Source::Object(ObjectKey(Ident::new(o)))
    }

    pub fn item(self, index: usize) -> Source {
        Source::Item(Box::new(self), index)
    }

    pub fn key(self, k: &str) -> Source {
        Source::Key(Box::new(self), k.to_owned())
    }

    pub fn const_key(self, k: KeyConst) -> Source {
        Source::ConstKey(Box::new(self), k)
    }

    pub fn id_key(self, key: Source) -> Source {
        Source::IdKey(Box::new(self), Box::new(key))
    }

    pub fn at(self, index: Source) -> Source {
        Source::At(Box::new(self), Box::new(index))
    }

    /// Every object this source names by identity (`Object`), in it and in its parents.
    pub fn idents_mut(&mut self, f: &mut impl FnMut(&mut Ident)) {
        match self {
            Source::Object(o) => f(&mut o.0),
            Source::Arith(_, a, b)
            | Source::Compare(_, a, b)
            | Source::IdKey(a, b)
            | Source::At(a, b) => {
                a.idents_mut(f);
                b.idents_mut(f);
            }
            Source::CellOf(c) | Source::Math(_, c) => c.idents_mut(f),
            Source::Local(_)
            | Source::Global(_)
            | Source::Builtin(_)
            | Source::Free(_)
            | Source::Draw(_)
            | Source::DefaultDType => {}
            Source::TypeOf(b)
            | Source::Len(b)
            | Source::InstanceDict(b)
            | Source::WeakTarget(b)
            | Source::Attr(b, _)
            | Source::Item(b, _)
            | Source::Key(b, _)
            | Source::ConstKey(b, _)
            | Source::FnGlobal(b, _)
            | Source::Closure(b, _)
            | Source::NativeAttr(b, _)
            | Source::ClassAttr(b, _) => b.idents_mut(f),
        }
    }

    /// Where the global `name` is read: the frame's own globals (`owner` None), or those of
    /// the function `owner`, an inlined function of another module.
    pub fn global_in(owner: Option<&Source>, name: &str) -> Source {
        match owner {
            None => Source::Global(name.to_owned()),
            Some(f) => Source::FnGlobal(Box::new(f.clone()), name.to_owned()),
        }
    }

    /// The source this one reads from, if it is not a root (a local, global, builtin or
    /// free variable).
    pub fn parent(&self) -> Option<&Source> {
        match self {
            Source::Local(_)
            | Source::Global(_)
            | Source::Builtin(_)
            | Source::Free(_)
            | Source::Object(_)
            | Source::DefaultDType
            | Source::CellOf(_)
            | Source::Draw(_)
            | Source::Arith(..)
            | Source::Compare(..)
            | Source::Math(..) => None,
            Source::TypeOf(b)
            | Source::Len(b)
            | Source::InstanceDict(b)
            | Source::WeakTarget(b)
            | Source::IdKey(b, _)
            | Source::At(b, _) => Some(b),
            Source::Attr(b, _)
            | Source::Item(b, _)
            | Source::Key(b, _)
            | Source::ConstKey(b, _)
            | Source::FnGlobal(b, _)
            | Source::Closure(b, _)
            | Source::NativeAttr(b, _)
            | Source::ClassAttr(b, _) => Some(b),
        }
    }

    /// The sources that it and its parents read besides their parents: an item's index
    /// (`At`), a key read from its own source (`IdKey`), a computed number's operands.
    pub fn operands(&self) -> Vec<&Source> {
        let mut out = Vec::new();
        let mut s = Some(self);
        while let Some(at) = s {
            match at {
                Source::At(_, i) | Source::IdKey(_, i) | Source::Math(_, i) => out.push(&**i),
                Source::Arith(_, a, b) | Source::Compare(_, a, b) => out.extend([&**a, &**b]),
                _ => {}
            }
            s = at.parent();
        }
        out
    }

    /// Whether a number drawn by the replacement is part of it (see `Source::Draw`).
    pub fn has_draw(&self) -> bool {
        match self {
            Source::Draw(_) => true,
            Source::Arith(_, a, b)
            | Source::Compare(_, a, b)
            | Source::IdKey(a, b)
            | Source::At(a, b) => a.has_draw() || b.has_draw(),
            Source::Math(_, a) => a.has_draw(),
            other => other.parent().is_some_and(Source::has_draw),
        }
    }
}

/// TorchDynamo's notation: `L['x']`, `G['scale']`, `B['len']`, `F['k']`, `L['self'].w`,
/// `L['xs'][1]`.
impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Local(n) => write!(f, "L['{n}']"),
            Source::Global(n) => write!(f, "G['{n}']"),
            Source::Builtin(n) => write!(f, "B['{n}']"),
            Source::Free(n) => write!(f, "F['{n}']"),
            Source::Attr(b, n) | Source::NativeAttr(b, n) | Source::ClassAttr(b, n) => {
                write!(f, "{b}.{n}")
            }
            Source::Item(b, i) => write!(f, "{b}[{i}]"),
            Source::Key(b, k) => write!(f, "{b}[{k:?}]"),
            Source::ConstKey(b, k) => write!(f, "{b}[{k}]"),
            Source::IdKey(b, k) | Source::At(b, k) => write!(f, "{b}[{k}]"),
            Source::FnGlobal(b, n) => write!(f, "{b}.__globals__['{n}']"),
            Source::Closure(b, i) => write!(f, "{b}.__closure__[{i}].cell_contents"),
            Source::CellOf(c) => match &**c {
                Source::Closure(b, i) => write!(f, "{b}.__closure__[{i}]"),
                other => write!(f, "the cell of {other}"),
            },
            Source::TypeOf(b) => write!(f, "type({b})"),
            Source::Len(b) => write!(f, "len({b})"),
            Source::InstanceDict(b) => write!(f, "{b}.__dict__"),
            Source::WeakTarget(b) => write!(f, "{b}()"),
            Source::DefaultDType => write!(f, "symtrace.get_default_dtype()"),
            Source::Draw(k) => write!(f, "first call #{k}"),
            Source::Arith(op, a, b) => write!(f, "({a} {} {b})", op.symbol()),
            Source::Compare(op, a, b) => write!(f, "({a} {} {b})", op.0.operator_token()),
            Source::Math(function, a) => write!(f, "{}({a})", function.shown()),
            Source::Object(o) => {
                let Some(o) = o.0.get() else {
                    return write!(f, "{:?}", o.0);
                };
                match o.downcast_ref::<rustpython_vm::builtins::PyType>() {
                    Some(t) => write!(f, "<class {}>", t.name()),
                    None if crate::translate::values::identity::is_enum_member(&o) => {
                        write!(f, "{}", crate::translate::guards::ident::shown_object(&o))
                    }
                    // A constant operand of a deferred number (`(step + 1) % 3`).
                    None if let Some(i) = o.downcast_ref::<rustpython_vm::builtins::PyInt>() => {
                        write!(f, "{}", i.as_bigint())
                    }
                    None if let Some(x) = o.downcast_ref::<rustpython_vm::builtins::PyFloat>() => {
                        write!(f, "{:?}", x.to_f64())
                    }
                    None => write!(f, "{}", crate::translate::guards::ident::shown_object(&o)),
                }
            }
        }
    }
}
