//! Where a value the simulation used comes from, so that a guard can re-read it on the next
//! call and generated code can load it: a local, a global, a builtin, a closure variable, an
//! attribute of a source, an item of a source.

use std::fmt;

use rustpython_vm::builtins::{PyDict, PyDictRef, PyFunction, PyList, PyTuple};
use rustpython_vm::eval_hook::FrameView;
use rustpython_vm::{AsObject, Py, PyObject, PyObjectRef, VirtualMachine};

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
    /// A global of a function (read from its `__globals__`): an inlined function's globals.
    FnGlobal(Box<Source>, String),
    /// The content of a function's closure cell (`fn.__closure__[i].cell_contents`).
    Closure(Box<Source>, usize),
}

impl Source {
    pub fn attr(self, name: &str) -> Source {
        Source::Attr(Box::new(self), name.to_owned())
    }

    pub fn item(self, index: usize) -> Source {
        Source::Item(Box::new(self), index)
    }

    pub fn key(self, k: &str) -> Source {
        Source::Key(Box::new(self), k.to_owned())
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

    /// The source this one reads from, if it is not a root (a local, global, builtin or
    /// free variable).
    pub fn parent(&self) -> Option<&Source> {
        match self {
            Source::Local(_) | Source::Global(_) | Source::Builtin(_) | Source::Free(_) => None,
            Source::Attr(b, _)
            | Source::Item(b, _)
            | Source::Key(b, _)
            | Source::FnGlobal(b, _)
            | Source::Closure(b, _) => Some(b),
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
            Source::Attr(_, name) => parent?
                .dict()?
                .get_item_opt(name.as_str(), vm)
                .ok()
                .flatten(),
            Source::Item(_, index) => item(parent?, *index),
            Source::Key(_, key) => exact_dict(parent?, vm)?
                .get_item_opt(key.as_str(), vm)
                .ok()
                .flatten(),
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
            Source::Closure(_, index) => {
                let obj = parent?;
                obj.downcast_ref::<PyFunction>()?;
                let closure = obj.get_attr("__closure__", vm).ok()?;
                let cell = closure
                    .downcast_ref::<PyTuple>()?
                    .as_slice()
                    .get(*index)?
                    .clone();
                cell.get_attr("cell_contents", vm).ok()
            }
        }
    }
}

/// The frame's builtins as a dictionary (a module's, when builtins is the module).
pub fn builtins_dict(frame: &FrameView<'_>) -> Option<PyDictRef> {
    let b = frame.builtins();
    match b.downcast_ref::<PyDict>() {
        Some(_) => b.to_owned().downcast::<PyDict>().ok(),
        None => b.dict(),
    }
}

/// Element `index` of a tuple or list.
pub fn item(obj: &PyObject, index: usize) -> Option<PyObjectRef> {
    if let Some(t) = obj.downcast_ref::<PyTuple>() {
        return t.as_slice().get(index).cloned();
    }
    obj.downcast_ref::<PyList>()?
        .borrow_vec()
        .get(index)
        .cloned()
}

/// `obj` as a dictionary whose lookups run no Python code: exactly a dict (a subclass may
/// define `__missing__` or `__getitem__`).
pub fn exact_dict<'a>(obj: &'a PyObject, vm: &VirtualMachine) -> Option<&'a Py<PyDict>> {
    obj.class()
        .is(vm.ctx.types.dict_type)
        .then(|| obj.downcast_ref::<PyDict>())
        .flatten()
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
            Source::Attr(b, n) => write!(f, "{b}.{n}"),
            Source::Item(b, i) => write!(f, "{b}[{i}]"),
            Source::Key(b, k) => write!(f, "{b}[{k:?}]"),
            Source::FnGlobal(b, n) => write!(f, "{b}.__globals__['{n}']"),
            Source::Closure(b, i) => write!(f, "{b}.__closure__[{i}].cell_contents"),
        }
    }
}
