//! Where a value the simulation used comes from, so that a guard can re-read it on the next
//! call and generated code can load it: a local, a global, a builtin, a closure variable, an
//! attribute of a source, an item of a source.

use std::fmt;

use rustpython_vm::builtins::{PyDict, PyFunction, PyList, PyTuple};
use rustpython_vm::eval_hook::FrameView;
use rustpython_vm::{AsObject, PyObjectRef, VirtualMachine};

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

    /// The value this source names in `frame`, read without running Python code: attributes
    /// come from the instance dictionary only (a guard must not call `__getattr__`).
    pub fn resolve(&self, frame: &FrameView<'_>, vm: &VirtualMachine) -> Option<PyObjectRef> {
        match self {
            Source::Local(name) => frame.get(name),
            Source::Global(name) => frame.globals().get_item_opt(name.as_str(), vm).ok().flatten(),
            Source::Builtin(name) => match frame.builtins().downcast_ref::<PyDict>() {
                Some(d) => d.get_item_opt(name.as_str(), vm).ok().flatten(),
                None => frame.builtins().dict().and_then(|d| d.get_item_opt(name.as_str(), vm).ok().flatten()),
            },
            Source::Free(name) => {
                let code = frame.code();
                let index = code.freevars.iter().position(|f| f.as_str() == name)?;
                let closure = frame.function()?.get_attr("__closure__", vm).ok()?;
                let cell = closure.downcast_ref::<PyTuple>()?.as_slice().get(index)?.clone();
                cell.get_attr("cell_contents", vm).ok()
            }
            Source::Attr(base, name) => {
                let obj = base.resolve(frame, vm)?;
                obj.dict()?.get_item_opt(name.as_str(), vm).ok().flatten()
            }
            Source::Item(base, index) => {
                let obj = base.resolve(frame, vm)?;
                if let Some(t) = obj.downcast_ref::<PyTuple>() {
                    return t.as_slice().get(*index).cloned();
                }
                obj.downcast_ref::<PyList>()?.borrow_vec().get(*index).cloned()
            }
            Source::Key(base, key) => {
                let obj = base.resolve(frame, vm)?;
                let d = obj.downcast_ref::<PyDict>()?;
                if !obj.class().is(vm.ctx.types.dict_type) {
                    return None; // a subclass may define __missing__ or __getitem__
                }
                d.get_item_opt(key.as_str(), vm).ok().flatten()
            }
            Source::FnGlobal(f, name) => {
                let obj = f.resolve(frame, vm)?;
                obj.downcast_ref::<PyFunction>()?;
                let globals = obj.get_attr("__globals__", vm).ok()?;
                globals.downcast_ref::<PyDict>()?.get_item_opt(name.as_str(), vm).ok().flatten()
            }
            Source::Closure(f, index) => {
                let obj = f.resolve(frame, vm)?;
                obj.downcast_ref::<PyFunction>()?;
                let closure = obj.get_attr("__closure__", vm).ok()?;
                let cell = closure.downcast_ref::<PyTuple>()?.as_slice().get(*index)?.clone();
                cell.get_attr("cell_contents", vm).ok()
            }
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
            Source::Attr(b, n) => write!(f, "{b}.{n}"),
            Source::Item(b, i) => write!(f, "{b}[{i}]"),
            Source::Key(b, k) => write!(f, "{b}[{k:?}]"),
            Source::FnGlobal(b, n) => write!(f, "{b}.__globals__['{n}']"),
            Source::Closure(b, i) => write!(f, "{b}.__closure__[{i}].cell_contents"),
        }
    }
}
