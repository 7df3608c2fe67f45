//! `symtrace.dtype` and the module's dtype objects (`float32`, `float64`, `int64`, `bool`).

use rustpython_vm::common::hash::PyHash;
use rustpython_vm::function::PyComparisonValue;
use rustpython_vm::types::{Comparable, Hashable, PyComparisonOp, Representable};
use rustpython_vm::{Py, PyObject, PyResult, VirtualMachine, pyclass};

use crate::tensor::{DType, PyDType};

#[pyclass(with(Representable, Comparable, Hashable))]
impl PyDType {
    #[pygetset]
    fn name(zelf: &Py<Self>) -> &'static str {
        zelf.dtype.name()
    }
    #[pygetset]
    fn is_floating_point(zelf: &Py<Self>) -> bool {
        zelf.dtype.is_float()
    }
}

impl Representable for PyDType {
    fn repr_str(zelf: &Py<Self>, _vm: &VirtualMachine) -> PyResult<String> {
        Ok(format!("symtrace.{}", zelf.dtype.name()))
    }
}

impl Comparable for PyDType {
    fn cmp(
        zelf: &Py<Self>,
        other: &PyObject,
        op: PyComparisonOp,
        _vm: &VirtualMachine,
    ) -> PyResult<PyComparisonValue> {
        let Some(other) = other.downcast_ref::<PyDType>() else {
            return Ok(PyComparisonValue::NotImplemented);
        };
        Ok(match op {
            PyComparisonOp::Eq => (zelf.dtype == other.dtype).into(),
            PyComparisonOp::Ne => (zelf.dtype != other.dtype).into(),
            _ => PyComparisonValue::NotImplemented,
        })
    }
}

/// Hashed by value, as it compares: two dtype objects that are equal are one key of a dict
/// (and a dict keyed by dtypes can be read by the translator without running user code).
impl Hashable for PyDType {
    fn hash(zelf: &Py<Self>, _vm: &VirtualMachine) -> PyResult<PyHash> {
        Ok(0x5d7e_0000 + zelf.dtype as PyHash)
    }
}

/// The module's own dtype object, so that `t.dtype is symtrace.float32`.
pub(super) fn dtype_object(d: DType, vm: &VirtualMachine) -> PyResult {
    Ok(crate::tensor::dtype_object(d, vm))
}

#[rustpython_vm::pymodule(sub, name = "symtrace")]
pub(super) mod module {
    use rustpython_vm::builtins::PyTypeRef;
    use rustpython_vm::{PyPayload, PyRef, VirtualMachine};

    use crate::tensor::{DType, PyDType};

    #[pyattr(name = "dtype")]
    fn dtype_class(vm: &VirtualMachine) -> PyTypeRef {
        crate::python::published::<PyDType>(vm)
    }

    #[pyattr]
    fn float32(vm: &VirtualMachine) -> PyRef<PyDType> {
        PyDType {
            dtype: DType::Float32,
        }
        .into_ref(&vm.ctx)
    }
    #[pyattr]
    fn float64(vm: &VirtualMachine) -> PyRef<PyDType> {
        PyDType {
            dtype: DType::Float64,
        }
        .into_ref(&vm.ctx)
    }
    #[pyattr]
    fn int64(vm: &VirtualMachine) -> PyRef<PyDType> {
        PyDType {
            dtype: DType::Int64,
        }
        .into_ref(&vm.ctx)
    }
    #[pyattr(name = "bool")]
    fn bool_(vm: &VirtualMachine) -> PyRef<PyDType> {
        PyDType { dtype: DType::Bool }.into_ref(&vm.ctx)
    }
}
