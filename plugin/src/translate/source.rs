//! Where a value the simulation used comes from, and every way it is read: by the simulation
//! and by a guard's readable form (`resolve`, `read`), by a compiled guard program
//! (`compiled_read`, one step planned once per code object), and by generated code
//! (`emit_load`). A source is a local, a global, a builtin, a closure variable, an attribute
//! of a source, an item of a source.

use std::fmt;

use rustpython_vm::builtins::{PyCode, PyStrInterned};
use rustpython_vm::builtins::{PyDict, PyFunction, PyInt, PyList, PyTuple};
use rustpython_vm::bytecode::{CO_FAST_CELL, CO_FAST_FREE, Opcode};
use rustpython_vm::eval_hook::FrameView;
use rustpython_vm::{AsObject, Py, PyObjectRef, VirtualMachine};

use crate::bytecode::builder::Builder;
use crate::translate::guards::ident::Ident;
pub use crate::translate::key_const::KeyConst;
pub use crate::translate::native_reads::{
    builtins_dict, closure_cell, dict_storage, identity_key, item, native_getter,
};
use crate::translate::state::{Kind, SimResult, Unsupported};

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

/// The operators of an [`Source::Arith`]: those of deferred numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arith {
    Add,
    Sub,
    Mul,
    /// Only an int by a nonzero constant int (`step % 2`).
    Mod,
    /// Only an int by a nonzero constant int.
    FloorDiv,
    /// True division (a learning rate's `step / warmup`).
    TrueDiv,
    /// A power with a float operand (Adam's `beta1 ** step`).
    Pow,
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

    /// The value this source names in `frame`, read without running Python code: attributes
    /// come from the instance dictionary only (a guard must not call `__getattr__`).
    pub fn resolve(&self, frame: &FrameView<'_>, vm: &VirtualMachine) -> Option<PyObjectRef> {
        let parent = match self.parent() {
            Some(p) => Some(p.resolve(frame, vm)?),
            None => None,
        };
        self.read(parent.as_ref(), frame, vm)
    }

    /// Every object this source names by identity (`Object`), in it and in its parents.
    pub fn idents_mut(&mut self, f: &mut impl FnMut(&mut Ident)) {
        match self {
            Source::Object(o) => f(&mut o.0),
            Source::Arith(_, a, b) | Source::IdKey(a, b) | Source::At(a, b) => {
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
            | Source::InstanceDict(b)
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
            | Source::Math(..) => None,
            Source::TypeOf(b)
            | Source::InstanceDict(b)
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

    /// This source's own step: a root read from the frame, or a read from the value of its
    /// parent (`parent` is that value; it is ignored for roots).
    pub fn read(
        &self,
        parent: Option<&PyObjectRef>,
        frame: &FrameView<'_>,
        vm: &VirtualMachine,
    ) -> Option<PyObjectRef> {
        match self {
            Source::Local(name) => frame.get(name),
            Source::Global(name) => frame
                .globals()
                .get_item_opt(name.as_str(), vm)
                .ok()
                .flatten(),
            Source::Builtin(name) => builtins_dict(frame)?
                .get_item_opt(name.as_str(), vm)
                .ok()
                .flatten(),
            Source::Free(name) => {
                let code = frame.code();
                let index = code.freevars.iter().position(|f| f.as_str() == name)?;
                let closure = frame.function()?.get_attr("__closure__", vm).ok()?;
                let cell = closure
                    .downcast_ref::<PyTuple>()?
                    .as_slice()
                    .get(index)?
                    .clone();
                cell.get_attr("cell_contents", vm).ok()
            }
            Source::NativeAttr(_, name) => {
                let o = parent?;
                native_getter(&o, name, vm)?;
                o.get_attr(&vm.ctx.new_str(name.as_str()), vm).ok()
            }
            Source::ClassAttr(_, name) => parent?
                .downcast_ref::<rustpython_vm::builtins::PyType>()?
                .attributes
                .get(vm.ctx.interned_str(name.as_str())?),
            Source::Attr(_, name) => parent?
                .dict()?
                .get_item_opt(name.as_str(), vm)
                .ok()
                .flatten(),
            Source::Item(_, index) => item(parent?, *index, vm),
            Source::Key(_, key) => dict_storage(parent?, vm)?
                .inner_getitem_opt(key.as_str(), vm)
                .ok()
                .flatten(),
            // An exact int, str or tuple of them: hashed and compared natively.
            Source::ConstKey(_, key) => dict_storage(parent?, vm)?
                .inner_getitem_opt(key.object(vm).as_object(), vm)
                .ok()
                .flatten(),
            // Hashed by identity, found by identity: no `__eq__` runs (`identity_key`).
            Source::IdKey(_, key) => {
                let key = key.resolve(frame, vm)?;
                identity_key(&key, &vm.ctx)?;
                dict_storage(parent?, vm)?
                    .inner_getitem_opt(&*key, vm)
                    .ok()
                    .flatten()
            }
            Source::At(_, index) => {
                let sequence = parent?;
                let index = index.resolve(frame, vm)?;
                if !index.class().is(vm.ctx.types.int_type) {
                    return None;
                }
                let index =
                    num_traits::ToPrimitive::to_i64(index.downcast_ref::<PyInt>()?.as_bigint())?;
                let len = match sequence.downcast_ref::<PyTuple>() {
                    Some(t) if sequence.class().is(vm.ctx.types.tuple_type) => t.len(),
                    _ if sequence.class().is(vm.ctx.types.list_type) => {
                        sequence.downcast_ref::<PyList>()?.borrow_vec().len()
                    }
                    _ => return None,
                } as i64;
                let position = if index < 0 { index + len } else { index };
                (0..len)
                    .contains(&position)
                    .then(|| item(&sequence, position as usize, vm))
                    .flatten()
            }
            Source::FnGlobal(_, name) => {
                let obj = parent?;
                obj.downcast_ref::<PyFunction>()?;
                let globals = obj.get_attr("__globals__", vm).ok()?;
                globals
                    .downcast_ref::<PyDict>()?
                    .get_item_opt(name.as_str(), vm)
                    .ok()
                    .flatten()
            }
            Source::TypeOf(_) => Some(parent?.class().to_owned().into()),
            Source::InstanceDict(_) => parent?.dict().map(Into::into),
            Source::Object(o) => o.0.get(),
            Source::DefaultDType => {
                let d = crate::tensor::dtype::default_float();
                let code = crate::tensor::DType::ALL.iter().position(|x| *x == d)?;
                Some(vm.ctx.new_int(code).into())
            }
            Source::Arith(op, a, b) => {
                let (a, b) = (a.resolve(frame, vm)?, b.resolve(frame, vm)?);
                // A guard may read it before the type checks of its operands have passed:
                // no other type's operator (user code) runs here.
                let t = &vm.ctx.types;
                let number =
                    |o: &PyObjectRef| o.class().is(t.int_type) || o.class().is(t.float_type);
                if !number(&a) || !number(&b) {
                    return None;
                }
                let r = match op {
                    Arith::Add => vm._add(&a, &b),
                    Arith::Sub => vm._sub(&a, &b),
                    Arith::Mul => vm._mul(&a, &b),
                    Arith::Mod => vm._mod(&a, &b),
                    Arith::FloorDiv => vm._floordiv(&a, &b),
                    Arith::TrueDiv => vm._truediv(&a, &b),
                    // A float operand (`deferred_binary`): no int power that grows without
                    // bound is computed by a guard.
                    Arith::Pow if a.class().is(t.float_type) || b.class().is(t.float_type) => {
                        vm._pow(&a, &b, vm.ctx.none.as_object())
                    }
                    Arith::Pow => return None,
                };
                r.ok()
            }
            Source::Math(function, x) => function.apply(&x.resolve(frame, vm)?, vm),
            Source::Draw(_) => None,
            Source::Closure(_, index) => {
                let cell = closure_cell(parent?, *index, vm)?;
                cell.get_attr("cell_contents", vm).ok()
            }
            Source::CellOf(of) => match &**of {
                Source::Free(name) => {
                    let index = frame
                        .code()
                        .freevars
                        .iter()
                        .position(|f| f.as_str() == name)?;
                    closure_cell(frame.function()?.as_object(), index, vm)
                }
                Source::Closure(f, index) => closure_cell(&*f.resolve(frame, vm)?, *index, vm),
                _ => None,
            },
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
            Source::InstanceDict(b) => write!(f, "{b}.__dict__"),
            Source::DefaultDType => write!(f, "symtrace.get_default_dtype()"),
            Source::Draw(k) => write!(f, "first call #{k}"),
            Source::Arith(op, a, b) => write!(f, "({a} {} {b})", op.symbol()),
            Source::Math(function, a) => write!(f, "{}({a})", function.shown()),
            Source::Object(o) => {
                let Some(o) = o.0.get() else {
                    return write!(f, "{:?}", o.0);
                };
                match o.downcast_ref::<rustpython_vm::builtins::PyType>() {
                    Some(t) => write!(f, "<class {}>", t.name()),
                    // A constant operand of a deferred number (`(step + 1) % 3`).
                    None if let Some(i) = o.downcast_ref::<rustpython_vm::builtins::PyInt>() => {
                        write!(f, "{}", i.as_bigint())
                    }
                    None if let Some(x) = o.downcast_ref::<rustpython_vm::builtins::PyFloat>() => {
                        write!(f, "{:?}", x.to_f64())
                    }
                    None => write!(f, "<{} object at {:#x}>", o.class().name(), o.get_id()),
                }
            }
        }
    }
}

/// How a compiled guard program reads one source, planned once for the code object it guards
/// (`Source::compiled_read`): the step from its parent's value, or from the frame.
#[derive(Debug)]
pub enum CompiledRead {
    /// A local's slot, borrowed.
    Slot(usize),
    /// A cell or free variable's slot: the cell's content.
    CellSlot(usize),
    /// A name the frame has no slot for: unbound.
    Unbound,
    Global(&'static PyStrInterned),
    Builtin(&'static PyStrInterned),
    Attr(&'static PyStrInterned),
    Item(usize),
    Key(&'static PyStrInterned),
    /// A name in the globals of the parent, a function (another module's, which an inlined
    /// call reads).
    FnGlobal(&'static PyStrInterned),
    /// The parent's class, borrowed (the parent keeps it alive).
    TypeOf,
    /// The parent's instance dictionary.
    InstanceDict,
    /// The source's own object, borrowed (the source keeps it alive).
    Object,
    /// Rare reads (closures, computed values) go through `Source::read`.
    General,
}

/// `BinaryOperator::Subscr`.
const SUBSCR: u32 = 26;

impl Source {
    /// This source's own step as a guard program of `code` reads it.
    pub fn compiled_read(&self, code: &Py<PyCode>, vm: &VirtualMachine) -> CompiledRead {
        let interned = |n: &str| vm.ctx.intern_str(n);
        match self {
            Source::Local(name) => match code
                .localsplus_names()
                .iter()
                .position(|n| n.as_str() == name)
            {
                Some(slot) if code.localspluskinds[slot] & (CO_FAST_CELL | CO_FAST_FREE) != 0 => {
                    CompiledRead::CellSlot(slot)
                }
                Some(slot) => CompiledRead::Slot(slot),
                None => CompiledRead::Unbound,
            },
            Source::Global(name) => CompiledRead::Global(interned(name)),
            Source::Builtin(name) => CompiledRead::Builtin(interned(name)),
            Source::Attr(_, name) => CompiledRead::Attr(interned(name)),
            Source::Item(_, i) => CompiledRead::Item(*i),
            Source::Key(_, key) => CompiledRead::Key(interned(key)),
            Source::FnGlobal(_, name) => CompiledRead::FnGlobal(interned(name)),
            Source::TypeOf(_) => CompiledRead::TypeOf,
            Source::InstanceDict(_) => CompiledRead::InstanceDict,
            Source::Object(_) => CompiledRead::Object,
            Source::Free(_)
            | Source::Closure(..)
            | Source::CellOf(_)
            | Source::ConstKey(..)
            | Source::IdKey(..)
            | Source::At(..)
            | Source::NativeAttr(..)
            | Source::ClassAttr(..)
            | Source::DefaultDType
            | Source::Arith(..)
            | Source::Math(..) => CompiledRead::General,
            Source::Draw(_) => CompiledRead::Unbound,
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
                Source::Arith(_, a, b) => out.extend([&**a, &**b]),
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
            Source::Arith(_, a, b) | Source::IdKey(a, b) | Source::At(a, b) => {
                a.has_draw() || b.has_draw()
            }
            Source::Math(_, a) => a.has_draw(),
            other => other.parent().is_some_and(Source::has_draw),
        }
    }

    /// The instructions that load this source in generated code, as the frame reads it.
    pub fn emit_load(&self, b: &mut Builder<'_>) -> SimResult<()> {
        let vm = b.vm();
        match self {
            Source::Draw(k) => {
                let name = crate::translate::values::python_draws::draw_slot(*k);
                let slot = b.slot(&name).ok_or_else(|| {
                    Unsupported::new(Kind::Internal, "code generation: no slot for a draw")
                })?;
                b.emit(Opcode::LoadFast, slot);
            }
            Source::Local(n) | Source::Free(n) => {
                let slot = b.slot(n).ok_or_else(|| {
                    Unsupported::new(Kind::Internal, format!("code generation: no slot {n}"))
                })?;
                let op = if b.is_cell(n) {
                    Opcode::LoadDeref
                } else {
                    Opcode::LoadFast
                };
                b.emit(op, slot);
            }
            Source::Global(n) | Source::Builtin(n) => {
                let i = b.name(n);
                b.emit(Opcode::LoadGlobal, i << 1);
            }
            // A class's scalar entry: no descriptor of the metaclass has its name (dunder
            // names are not read this way), so `LOAD_ATTR` finds the entry.
            Source::Attr(base, n) | Source::NativeAttr(base, n) | Source::ClassAttr(base, n) => {
                base.emit_load(b)?;
                let i = b.name(n);
                b.emit(Opcode::LoadAttr, i << 1);
            }
            Source::Item(base, i) => {
                base.emit_load(b)?;
                b.load_const(vm.ctx.new_int(*i).into());
                b.emit(Opcode::BinaryOp, SUBSCR);
            }
            Source::Key(base, k) => {
                base.emit_load(b)?;
                b.load_const(vm.ctx.new_str(k.as_str()).into());
                b.emit(Opcode::BinaryOp, SUBSCR);
            }
            Source::ConstKey(base, k) => {
                base.emit_load(b)?;
                b.load_const(k.object(vm));
                b.emit(Opcode::BinaryOp, SUBSCR);
            }
            Source::IdKey(base, k) | Source::At(base, k) => {
                base.emit_load(b)?;
                k.emit_load(b)?;
                b.emit(Opcode::BinaryOp, SUBSCR);
            }
            Source::FnGlobal(f, n) => {
                f.emit_load(b)?;
                let g = b.name("__globals__");
                b.emit(Opcode::LoadAttr, g << 1);
                b.load_const(vm.ctx.new_str(n.as_str()).into());
                b.emit(Opcode::BinaryOp, SUBSCR);
            }
            Source::Closure(f, i) => {
                f.emit_load(b)?;
                let c = b.name("__closure__");
                b.emit(Opcode::LoadAttr, c << 1);
                b.load_const(vm.ctx.new_int(*i).into());
                b.emit(Opcode::BinaryOp, SUBSCR);
                let cc = b.name("cell_contents");
                b.emit(Opcode::LoadAttr, cc << 1);
            }
            Source::CellOf(_) => {
                return Err(Unsupported::new(
                    Kind::Internal,
                    "a cell is compared by guards, never loaded",
                ));
            }
            Source::TypeOf(base) => {
                b.load_const(vm.ctx.types.type_type.to_owned().into());
                b.emit(Opcode::PushNull, 0);
                base.emit_load(b)?;
                b.emit(Opcode::Call, 1);
            }
            Source::InstanceDict(base) => {
                base.emit_load(b)?;
                let d = b.name("__dict__");
                b.emit(Opcode::LoadAttr, d << 1);
            }
            Source::Object(o) => match o.0.get() {
                Some(o) => b.load_const(o),
                None => {
                    return Err(Unsupported::new(
                        Kind::Internal,
                        "an object a source names was collected",
                    ));
                }
            },
            Source::Arith(op, x, y) => {
                x.emit_load(b)?;
                y.emit_load(b)?;
                b.emit(Opcode::BinaryOp, op.operator() as u32);
            }
            Source::Math(function, x) => {
                let f = function
                    .function(b.vm())
                    .ok_or_else(|| Unsupported::new(Kind::Internal, "math is not loaded"))?;
                b.load_const(f);
                b.emit(Opcode::PushNull, 0);
                x.emit_load(b)?;
                let constants = function.constants(b.vm());
                let argc = 1 + constants.len() as u32;
                for c in constants {
                    b.load_const(c);
                }
                b.emit(Opcode::Call, argc);
            }
            Source::DefaultDType => {
                return Err(Unsupported::new(
                    Kind::Internal,
                    "code generation: the default dtype is not a value to load",
                ));
            }
        }
        Ok(())
    }
}
