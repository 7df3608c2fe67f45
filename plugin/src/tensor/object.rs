//! The tensor as a Python object: the payloads of `symtrace.Tensor` and `symtrace.dtype`.
//! Their Python methods live in `python/`; what is here is what every layer needs of a tensor
//! object (its data under a lock, and a guard's cheap check of its dtype and shape).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use rustpython_vm::common::lock::{PyRwLock, PyRwLockReadGuard, PyRwLockWriteGuard};
use rustpython_vm::{PyPayload, pyclass};

use super::{DType, Meta, TensorData};

#[pyclass(module = "symtrace", name = "Tensor")]
#[derive(Debug, PyPayload)]
pub struct PyTensor {
    data: PyRwLock<TensorData>,
    /// The number (`meta_id::intern`) of the meta this tensor was last found to have, or 0.
    meta_id: AtomicU32,
    /// Marked as a parameter (`requires_grad`); symtrace has no autograd.
    requires_grad: AtomicBool,
}

impl PyTensor {
    pub fn new(data: TensorData) -> Self {
        Self {
            data: PyRwLock::new(data),
            meta_id: AtomicU32::new(0),
            requires_grad: AtomicBool::new(false),
        }
    }

    pub fn requires_grad_flag(&self) -> bool {
        self.requires_grad.load(Ordering::Relaxed)
    }

    pub fn set_requires_grad_flag(&self, value: bool) {
        self.requires_grad.store(value, Ordering::Relaxed);
    }

    pub fn read(&self) -> PyRwLockReadGuard<'_, TensorData> {
        self.data.read()
    }

    /// The data, to replace: the remembered meta is forgotten first.
    pub fn write(&self) -> PyRwLockWriteGuard<'_, TensorData> {
        let guard = self.data.write();
        self.meta_id.store(0, Ordering::Release);
        guard
    }

    /// Whether the tensor has `meta`, whose number is `id`. Once found under the lock, the
    /// answer is remembered until the data is replaced; it is stored while the read lock is
    /// held, so a writer's reset always comes after it.
    #[inline]
    pub fn has_meta(&self, id: u32, meta: &Meta) -> bool {
        if self.meta_id.load(Ordering::Acquire) == id {
            return true;
        }
        let d = self.data.read();
        let has = meta.describes(&d);
        if has && id != u32::MAX {
            self.meta_id.store(id, Ordering::Release);
        }
        has
    }
}

#[pyclass(module = "symtrace", name = "dtype")]
#[derive(Debug, PyPayload)]
pub struct PyDType {
    pub dtype: DType,
}
