//! `symtrace.device`: torch's device, of the one device symtrace computes on. Model code
//! ported from torch names it (`torch.arange(T, device=x.device)`, `x.to(device)`): the CPU
//! is taken, any other device refused with a clear error.

use rustpython_vm::builtins::PyStr;
use rustpython_vm::function::{OptionalArg, PyComparisonValue};
use rustpython_vm::types::{Comparable, Constructor, Hashable, PyComparisonOp, Representable};
use rustpython_vm::{AsObject, Py, PyObject, PyObjectRef, PyResult, VirtualMachine, pyclass};

use crate::tensor::PyDevice;

#[pyclass(with(Constructor, Representable, Comparable, Hashable))]
impl PyDevice {
    #[pygetset(name = "type")]
    fn type_(_zelf: &Py<Self>) -> &'static str {
        "cpu"
    }
    #[pygetset]
    fn index(_zelf: &Py<Self>, vm: &VirtualMachine) -> PyObjectRef {
        vm.ctx.none()
    }
    #[pymethod]
    fn __str__(_zelf: &Py<Self>) -> &'static str {
        "cpu"
    }
}

/// Whether `o` names the CPU: a device, `"cpu"` or `"cpu:0"`.
pub(super) fn names_cpu(o: &PyObject) -> bool {
    o.downcast_ref::<PyDevice>().is_some()
        || o.downcast_ref::<PyStr>()
            .and_then(|s| s.to_str())
            .is_some_and(|s| matches!(s, "cpu" | "cpu:0"))
}

impl Constructor for PyDevice {
    type Args = (PyObjectRef, OptionalArg<PyObjectRef>);

    fn py_new(
        _cls: &Py<rustpython_vm::builtins::PyType>,
        (kind, index): Self::Args,
        vm: &VirtualMachine,
    ) -> PyResult<Self> {
        let index_ok = match &index {
            OptionalArg::Missing => true,
            OptionalArg::Present(i) => {
                vm.is_none(i) || i.try_index(vm).is_ok_and(|i| i.as_bigint() == &0.into())
            }
        };
        if names_cpu(&kind) && index_ok {
            Ok(PyDevice)
        } else {
            Err(vm.new_runtime_error(format!(
                "symtrace computes on the CPU only, not on {}",
                kind.repr(vm)?.to_string_lossy()
            )))
        }
    }
}

impl Representable for PyDevice {
    fn repr_str(_zelf: &Py<Self>, _vm: &VirtualMachine) -> PyResult<String> {
        Ok("device(type='cpu')".to_owned())
    }
}

impl Comparable for PyDevice {
    fn cmp(
        _zelf: &Py<Self>,
        other: &PyObject,
        op: PyComparisonOp,
        _vm: &VirtualMachine,
    ) -> PyResult<PyComparisonValue> {
        let same = names_cpu(other);
        Ok(match op {
            PyComparisonOp::Eq => same.into(),
            PyComparisonOp::Ne => (!same).into(),
            _ => PyComparisonValue::NotImplemented,
        })
    }
}

impl Hashable for PyDevice {
    fn hash(
        _zelf: &Py<Self>,
        vm: &VirtualMachine,
    ) -> PyResult<rustpython_vm::common::hash::PyHash> {
        vm.ctx.new_str("cpu").as_object().hash(vm)
    }
}

#[rustpython_vm::pymodule(sub, name = "symtrace")]
pub(super) mod module {
    use rustpython_vm::VirtualMachine;
    use rustpython_vm::builtins::PyTypeRef;

    use crate::tensor::PyDevice;

    #[pyattr(name = "device")]
    fn device_class(vm: &VirtualMachine) -> PyTypeRef {
        crate::python::published::<PyDevice>(vm)
    }
}
