//! Which functions of the `symtrace` module, and which `Tensor` methods, a translation may
//! run on its fakes and plain values: only those whose result depends on their arguments
//! alone. Any other would run once, when the frame is translated, instead of at each call.

use rustpython_vm::builtins::PyStr;
use rustpython_vm::{AsObject, PyObjectRef};

use crate::graph::Value;
use crate::tensor::PyTensor;
use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, State, unsupported};
use crate::translate::values::Var;

/// Functions of the `symtrace` module that set the random number generator's state. (`rand`
/// and `randn` are registry ops that a graph draws when it runs, in the program's order.)
const RANDOM_FUNCTIONS: &[&str] = &["manual_seed"];

/// Functions of the `symtrace` module, besides the registry's ops, whose result depends only
/// on their arguments (and on the default dtype, which a translation that reads it guards):
/// a translation may run them on its fakes and plain values. Any other function of the
/// module reads or changes state a translation cannot guard or replay (`stats`, `reset`,
/// `set_default_dtype`, `set_stance`, `compile`, `mark_dynamic`, ...): it runs as written.
const PURE_MODULE_FUNCTIONS: &[&str] = &[
    "call_op",
    "chunk",
    "eye",
    "flatten",
    "full",
    "get_default_dtype",
    "linspace",
    "ones",
    "ones_like",
    "split",
    "tensor",
    "zeros",
    "zeros_like",
];

/// Tensor methods and functions whose result depends only on their tensors' dtype and shape.
pub const TENSOR_META: &[&str] = &[
    "dim",
    "numel",
    "size",
    "is_floating_point",
    "__len__",
    "zeros_like",
    "ones_like",
];

/// What a translation may do with a function of the `symtrace` module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModuleFunction {
    /// Run it on fakes and plain values: an op of the registry, or one of
    /// [`PURE_MODULE_FUNCTIONS`].
    Pure,
    /// It sets the random number generator's state.
    Random,
    /// It reads or changes state the translation cannot guard or replay.
    Stateful,
}

impl ModuleFunction {
    pub fn of(name: &str) -> Self {
        if RANDOM_FUNCTIONS.contains(&name) {
            Self::Random
        } else if PURE_MODULE_FUNCTIONS.contains(&name)
            || crate::tensor::registry().get(name).is_some()
        {
            Self::Pure
        } else {
            Self::Stateful
        }
    }
}

/// Whether the `Tensor` method `name` changes its tensor (`requires_grad_`: one trailing
/// underscore, as torch names them): run on a fake, the real tensor would never change.
pub fn changes_its_tensor(name: &str) -> bool {
    name.ends_with('_') && !name.ends_with("__")
}

/// The name of `o`, if it is a function of the `symtrace` module.
pub fn module_function_name(o: &PyObjectRef, vm: &rustpython_vm::VirtualMachine) -> Option<String> {
    if !o.class().is(vm.ctx.types.builtin_function_or_method_type) {
        return None;
    }
    let module = o.get_attr("__module__", vm).ok()?;
    if module.downcast_ref::<PyStr>()?.to_string_lossy() != "symtrace" {
        return None;
    }
    let name = o.get_attr("__name__", vm).ok()?;
    Some(name.downcast_ref::<PyStr>()?.to_string_lossy().into_owned())
}

/// What a tensor function may be given while it runs on fakes: tensors, plain values, and
/// lists and tuples of them (`st.cat((a, b))`), nothing whose methods a native conversion
/// could call (an `__index__` of the user's).
pub fn native_operand(o: &PyObjectRef, vm: &rustpython_vm::VirtualMachine) -> bool {
    o.downcast_ref::<crate::tensor::PyTensor>().is_some()
        || crate::translate::values::is_plain(o, vm)
        || exact_sequence_items(o, vm)
            .is_some_and(|items| items.iter().all(|x| native_operand(x, vm)))
}

/// The items of `o` when it is exactly a list or a tuple (no subclass whose methods could
/// run).
fn exact_sequence_items(
    o: &PyObjectRef,
    vm: &rustpython_vm::VirtualMachine,
) -> Option<Vec<PyObjectRef>> {
    let t = &vm.ctx.types;
    if o.class().is(t.list_type) {
        return Some(
            o.downcast_ref::<rustpython_vm::builtins::PyList>()?
                .borrow_vec()
                .to_vec(),
        );
    }
    if o.class().is(t.tuple_type) {
        return Some(
            o.downcast_ref::<rustpython_vm::builtins::PyTuple>()?
                .as_slice()
                .to_vec(),
        );
    }
    None
}

impl State<'_> {
    /// Whether `o`, an operand given to native code, is or holds (in lists and tuples) a
    /// fake: a tensor of the graph, whose values the native code would read as zeros. (A
    /// constant tensor is no fake: computing from it once, at translation, is right.)
    pub(super) fn holds_fake(&self, o: &PyObjectRef) -> bool {
        match o.downcast_ref::<crate::tensor::PyTensor>() {
            Some(tensor) => self.value_of(tensor).is_some(),
            None => exact_sequence_items(o, self.vm)
                .is_some_and(|items| items.iter().any(|x| self.holds_fake(x))),
        }
    }

    /// A `Tensor` method that changes its tensor (`requires_grad_`, as torch names them with
    /// one trailing underscore): run on a fake, the real tensor would never see it, so it
    /// breaks, unless it only sets the mark (`set_mark`): `requires_grad_(flag)` returns the
    /// tensor (`self.pe[:, :T].requires_grad_(False)`).
    pub(super) fn tensor_changed_in_place(
        &mut self,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Var> {
        if name == "requires_grad_" {
            let flag = match (&args[1..], kwargs) {
                ([], []) => Some(true),
                ([v], []) => self.bool_of(v)?,
                ([], [(k, v)]) if k == "requires_grad" => self.bool_of(v)?,
                _ => None,
            };
            if let Some(flag) = flag
                && self.set_mark(&args[0], flag)?
            {
                return Ok(args[0].clone());
            }
        }
        unsupported(
            Kind::SideEffect,
            format!("Tensor.{name} changes the tensor in place"),
        )
    }

    /// `t.requires_grad = flag`, where any other store on a tensor breaks: see `set_mark`.
    pub(super) fn mark_stored(&mut self, t: &Var, name: &str, value: &Var) -> SimResult<bool> {
        if name != "requires_grad" || !self.is_tensor(t) {
            return Ok(false);
        }
        match self.bool_of(value)? {
            Some(flag) => self.set_mark(t, flag),
            None => Ok(false),
        }
    }

    /// Set the parameter mark of `t` to `flag`, if the simulation can: nothing to do where it
    /// is already so (a graph input's mark is guarded: `copy.deepcopy` of a result sets
    /// `t.requires_grad = self.requires_grad`); on a tensor the graph makes (`Parameter(data)`
    /// marks a copy), the fake's mark, which the real output is given when the graph has run
    /// (`templates::graph_value`). A caller's tensor (an input, or one updated in place) is
    /// another matter: `false`.
    fn set_mark(&mut self, t: &Var, flag: bool) -> SimResult<bool> {
        if self.requires_grad_of(t)? == flag {
            return Ok(true);
        }
        let fake = self.obj(t)?;
        let Some(fake) = fake.downcast_ref::<PyTensor>() else {
            return Ok(false);
        };
        let made = matches!(self.value_of(fake), Some(Value::Node(_)))
            && self.written_source(fake).is_none();
        if made {
            self.marks.push((fake.to_owned(), !flag));
            fake.set_requires_grad_flag(flag);
        }
        Ok(made)
    }

    /// `v` when it is exactly a bool.
    fn bool_of(&mut self, v: &Var) -> SimResult<Option<bool>> {
        let o = self.plain_obj(v, "a flag")?;
        Ok(o.class()
            .is(self.vm.ctx.types.bool_type)
            .then(|| o.is(&self.vm.ctx.true_value)))
    }
}
