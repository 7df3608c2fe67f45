//! The tensor as a Python object: the payloads of `symtrace.Tensor` and `symtrace.dtype`.
//! Their Python methods live in `python/`; what is here is what every layer needs of a tensor
//! object (its data under a lock, and a guard's cheap check of its dtype and shape).

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use rustpython_vm::common::lock::{PyRwLock, PyRwLockReadGuard, PyRwLockWriteGuard};
use rustpython_vm::{PyPayload, PyRef, pyclass};

use super::view_link::ViewLink;
use super::{Attrs, DType, Meta, TensorData};

#[pyclass(module = "symtrace", name = "Tensor")]
#[derive(Debug, PyPayload)]
pub struct PyTensor {
    data: PyRwLock<TensorData>,
    /// The number (`meta_id::intern`) of the meta this tensor was last found to have, or 0.
    meta_id: AtomicU32,
    /// Marked as a parameter (`requires_grad`); symtrace has no autograd.
    requires_grad: AtomicBool,
    /// Dimensions marked dynamic (`mark_dynamic`) and static (`mark_static`), as bits: what a
    /// tracer is asked to do with their sizes.
    dynamic_dims: AtomicU64,
    static_dims: AtomicU64,
    /// Counts the program's in-place updates (`update`): a view made from an earlier one is
    /// made again when read (`view_link`).
    version: AtomicU64,
    /// How this tensor views another's elements, if it does (boxed: every tensor made pays
    /// for the room of one pointer, not of a link).
    view: Option<Box<ViewLink>>,
}

impl PyTensor {
    pub fn new(data: TensorData) -> Self {
        Self {
            data: PyRwLock::new(data),
            meta_id: AtomicU32::new(0),
            requires_grad: AtomicBool::new(false),
            dynamic_dims: AtomicU64::new(0),
            static_dims: AtomicU64::new(0),
            version: AtomicU64::new(0),
            view: None,
        }
    }

    /// A tensor of `data` that views `base`'s elements, made from them by `op` with `attrs`.
    pub fn new_view(
        data: TensorData,
        base: &PyRef<PyTensor>,
        op: &'static str,
        attrs: Attrs,
    ) -> Self {
        let link = ViewLink::new(base, op, attrs);
        Self {
            view: Some(Box::new(link)),
            ..Self::new(data)
        }
    }

    /// A tensor of `data` that views `base`'s elements as `link` says.
    pub fn with_link(data: TensorData, link: ViewLink) -> Self {
        Self {
            view: Some(Box::new(link)),
            ..Self::new(data)
        }
    }

    pub fn view_link(&self) -> Option<&ViewLink> {
        self.view.as_deref()
    }

    /// Count an update made without `update` (a tracer's stand-in replaced by the result of
    /// a recorded in-place op): views made before it are made again when read.
    pub fn touch(&self) {
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// The tensor whose elements this one's are: its base if it is a view, else itself.
    pub fn storage_root(&self) -> &PyTensor {
        match &self.view {
            Some(link) => link.base(),
            None => self,
        }
    }

    /// Mark dimension `dim` (under 64) dynamic (`true`) or static (`false`); the other mark
    /// of that dimension goes.
    pub fn mark_dim(&self, dim: usize, dynamic: bool) {
        let bit = 1u64 << dim.min(63);
        let (set, clear) = if dynamic {
            (&self.dynamic_dims, &self.static_dims)
        } else {
            (&self.static_dims, &self.dynamic_dims)
        };
        set.fetch_or(bit, Ordering::Relaxed);
        clear.fetch_and(!bit, Ordering::Relaxed);
    }

    /// How dimension `dim` is marked: `Some(true)` dynamic, `Some(false)` static.
    pub fn dim_mark(&self, dim: usize) -> Option<bool> {
        let bit = 1u64 << dim.min(63);
        if self.dynamic_dims.load(Ordering::Relaxed) & bit != 0 {
            Some(true)
        } else if self.static_dims.load(Ordering::Relaxed) & bit != 0 {
            Some(false)
        } else {
            None
        }
    }

    pub fn requires_grad_flag(&self) -> bool {
        self.requires_grad.load(Ordering::Relaxed)
    }

    pub fn set_requires_grad_flag(&self, value: bool) {
        self.requires_grad.store(value, Ordering::Relaxed);
    }

    /// The data; a view's made again first if its base changed since.
    pub fn read(&self) -> PyRwLockReadGuard<'_, TensorData> {
        if let Some(link) = &self.view
            && let Some(data) = link.refreshed()
        {
            *self.write() = data;
        }
        self.data.read()
    }

    /// The data, to replace: the remembered meta is forgotten first. Not an update of the
    /// program's (a tracer's stand-in swapped in or out): no view sees it.
    pub fn write(&self) -> PyRwLockWriteGuard<'_, TensorData> {
        let guard = self.data.write();
        self.meta_id.store(0, Ordering::Release);
        guard
    }

    /// The data, to update in place as the program does (`t += 1`, `t[i] = v`): once the
    /// update is over, the views made before it read the new elements, and a view writes
    /// its elements through into its base.
    pub fn update(&self) -> TensorUpdate<'_> {
        drop(self.read());
        TensorUpdate {
            tensor: self,
            guard: Some(self.write()),
        }
    }

    /// Whether the tensor is remembered to have the meta whose number is `id` (`has_meta` found
    /// it and the data has not been replaced since). Asked under the read lock, the answer
    /// holds for as long as the lock is held: a writer forgets the number only once it has
    /// the lock.
    #[inline]
    pub fn remembers_meta(&self, id: u32) -> bool {
        id != 0 && self.meta_id.load(Ordering::Acquire) == id
    }

    /// Whether the tensor has `meta`, whose number is `id`. Once found under the lock, the
    /// answer is remembered until the data is replaced; it is stored while the read lock is
    /// held, so a writer's reset always comes after it.
    #[inline(always)]
    pub fn has_meta(&self, id: u32, meta: &Meta) -> bool {
        // The remembered answer inline, one load in a cache hit's guard loop; the lock apart.
        self.meta_id.load(Ordering::Acquire) == id || self.has_meta_locked(id, meta)
    }

    #[inline(never)]
    fn has_meta_locked(&self, id: u32, meta: &Meta) -> bool {
        let d = self.data.read();
        let has = meta.describes(&d);
        if has && id != u32::MAX {
            self.meta_id.store(id, Ordering::Release);
        }
        has
    }
}

/// Whether `a` and `b` are one object, or tensors that view one tensor's elements.
pub fn shares_elements(a: &rustpython_vm::PyObject, b: &rustpython_vm::PyObject) -> bool {
    use rustpython_vm::AsObject;
    if a.is(b) {
        return true;
    }
    match (a.downcast_ref::<PyTensor>(), b.downcast_ref::<PyTensor>()) {
        (Some(x), Some(y)) => std::ptr::eq(x.storage_root(), y.storage_root()),
        _ => false,
    }
}

/// An update under way (`PyTensor::update`); its end is what views see.
pub struct TensorUpdate<'a> {
    tensor: &'a PyTensor,
    guard: Option<PyRwLockWriteGuard<'a, TensorData>>,
}

impl std::ops::Deref for TensorUpdate<'_> {
    type Target = TensorData;
    fn deref(&self) -> &TensorData {
        self.guard.as_ref().expect("held until dropped")
    }
}

impl std::ops::DerefMut for TensorUpdate<'_> {
    fn deref_mut(&mut self) -> &mut TensorData {
        self.guard.as_mut().expect("held until dropped")
    }
}

impl Drop for TensorUpdate<'_> {
    fn drop(&mut self) {
        drop(self.guard.take());
        let t = self.tensor;
        t.version.fetch_add(1, Ordering::AcqRel);
        if let Some(link) = &t.view {
            link.write_through(&t.data.read());
        }
    }
}

#[pyclass(module = "symtrace", name = "dtype")]
#[derive(Debug, PyPayload)]
pub struct PyDType {
    pub dtype: DType,
}

/// The module's own object for `d` (`symtrace.float32`), so that `t.dtype is symtrace.float32`
/// wherever the dtype object is made; a fresh one where the module cannot be imported.
pub fn dtype_object(d: DType, vm: &rustpython_vm::VirtualMachine) -> rustpython_vm::PyObjectRef {
    vm.import("symtrace", 0)
        .and_then(|m| m.get_attr(d.name(), vm))
        .unwrap_or_else(|_| PyDType { dtype: d }.into_pyobject(vm))
}

/// torch's `device`, of the one device symtrace computes on (the CPU): immutable, one object
/// (`symtrace.device("cpu")` gives it), what `Tensor.device` is.
#[pyclass(module = "symtrace", name = "device")]
#[derive(Debug, PyPayload)]
pub struct PyDevice;
