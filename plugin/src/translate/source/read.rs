//! A source's value in a frame, read without running Python code: the simulation's and a
//! guard's readable form.

use rustpython_vm::builtins::PyWeak;
use rustpython_vm::builtins::{PyDict, PyFunction, PyInt, PyList, PyTuple};
use rustpython_vm::eval_hook::FrameView;
use rustpython_vm::{AsObject, PyObjectRef, VirtualMachine};

use super::{
    Arith, MAX_SHIFT, Source, builtins_dict, closure_cell, dict_storage, identity_key, item,
    native_getter, small_exponent, small_int,
};
use crate::translate::native_reads::{member_entry, member_key, member_value};

impl Source {
    /// The value this source names in `frame`, read without running Python code: attributes
    /// come from the instance dictionary only (a guard must not call `__getattr__`).
    pub fn resolve(&self, frame: &FrameView<'_>, vm: &VirtualMachine) -> Option<PyObjectRef> {
        let parent = match self.parent() {
            Some(p) => Some(p.resolve(frame, vm)?),
            None => None,
        };
        self.read(parent.as_ref(), frame, vm)
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
            // An enum member (`member_key`), of a dict whose keys are guarded to be members:
            // found as the key that is it, since hashing it runs `Enum.__hash__`; so is a
            // member of an `IntEnum` or `StrEnum`, of a dict whose keys are guarded likewise.
            Source::IdKey(_, key) => {
                let key = key.resolve(frame, vm)?;
                let d = dict_storage(parent?, vm)?;
                if member_key(&key, vm) || member_value(&key, vm).is_some() {
                    return member_entry(d, &key);
                }
                identity_key(&key, &vm.ctx)?;
                d.inner_getitem_opt(&*key, vm).ok().flatten()
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
            Source::Len(_) => {
                let list = parent?;
                if !list.class().is(vm.ctx.types.list_type) {
                    return None;
                }
                let n = list.downcast_ref::<PyList>()?.borrow_vec().len();
                Some(vm.ctx.new_int(n).into())
            }
            Source::InstanceDict(_) => parent?.dict().map(Into::into),
            Source::WeakTarget(_) => {
                let r = parent?;
                if !r.class().is(vm.ctx.types.weakref_type) {
                    return None;
                }
                Some(
                    r.downcast_ref::<PyWeak>()?
                        .upgrade()
                        .unwrap_or_else(|| vm.ctx.none()),
                )
            }
            Source::Object(o) => o.0.get(),
            Source::DefaultDType => {
                let d = crate::tensor::dtype::default_float();
                let code = crate::tensor::DType::ALL.iter().position(|x| *x == d)?;
                Some(vm.ctx.new_int(code).into())
            }
            Source::Arith(op, a, b) => {
                let (a, b) = exact_numbers(a, b, frame, vm)?;
                let t = &vm.ctx.types;
                let ints = |a: &PyObjectRef, b: &PyObjectRef| {
                    a.class().is(t.int_type) && b.class().is(t.int_type)
                };
                let r = match op {
                    Arith::Add => vm._add(&a, &b),
                    Arith::Sub => vm._sub(&a, &b),
                    Arith::Mul => vm._mul(&a, &b),
                    Arith::Mod => vm._mod(&a, &b),
                    Arith::FloorDiv => vm._floordiv(&a, &b),
                    Arith::TrueDiv => vm._truediv(&a, &b),
                    // A float operand, or a small constant exponent (`deferred_binary`): no
                    // int power that grows without bound is computed by a guard.
                    Arith::Pow
                        if a.class().is(t.float_type)
                            || b.class().is(t.float_type)
                            || (a.class().is(t.int_type) && small_exponent(&b, vm)) =>
                    {
                        vm._pow(&a, &b, vm.ctx.none.as_object())
                    }
                    Arith::Pow => return None,
                    // Of two ints only: `&` of floats raises.
                    Arith::And if ints(&a, &b) => vm._and(&a, &b),
                    Arith::Or if ints(&a, &b) => vm._or(&a, &b),
                    Arith::Xor if ints(&a, &b) => vm._xor(&a, &b),
                    Arith::LShift | Arith::RShift
                        if a.class().is(t.int_type) && small_int(&b, MAX_SHIFT, vm) =>
                    {
                        match op {
                            Arith::LShift => vm._lshift(&a, &b),
                            _ => vm._rshift(&a, &b),
                        }
                    }
                    Arith::And | Arith::Or | Arith::Xor | Arith::LShift | Arith::RShift => {
                        return None;
                    }
                };
                r.ok()
            }
            Source::Compare(op, a, b) => {
                let (a, b) = exact_numbers(a, b, frame, vm)?;
                let r = crate::translate::guards::guard::compare_values(&a, &b, op.0, vm)?;
                Some(vm.ctx.new_bool(r).into())
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

/// The values of `a` and `b` when both are exactly ints or floats. A guard may read a
/// computed number before the type checks of its operands have passed: no other type's
/// operator (user code) runs on them.
fn exact_numbers(
    a: &Source,
    b: &Source,
    frame: &FrameView<'_>,
    vm: &VirtualMachine,
) -> Option<(PyObjectRef, PyObjectRef)> {
    let (a, b) = (a.resolve(frame, vm)?, b.resolve(frame, vm)?);
    let t = &vm.ctx.types;
    let number = |o: &PyObjectRef| o.class().is(t.int_type) || o.class().is(t.float_type);
    (number(&a) && number(&b)).then_some((a, b))
}
