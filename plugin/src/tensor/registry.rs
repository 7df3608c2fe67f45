//! The op registry: every tensor operation is described once (name, arity, shape and dtype
//! inference, kernel). The Python API computes through it, the graph of the translator will
//! infer shapes and execute through it, and an embedding application can add ops of its own.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock, RwLock};

use super::data::TensorData;
use super::dtype::DType;
use super::error::{TResult, TensorError};

/// What inference knows of a tensor: its shape and element type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Meta {
    pub shape: Vec<usize>,
    pub dtype: DType,
}

impl Meta {
    pub fn of(t: &TensorData) -> Meta {
        Meta {
            shape: t.shape().to_vec(),
            dtype: t.dtype(),
        }
    }

    /// Whether `t` has this dtype and shape. Checked for every graph input on every call:
    /// shapes are a few dimensions long, so they are compared in line rather than through
    /// a call to `memcmp`.
    #[inline]
    pub fn describes(&self, t: &TensorData) -> bool {
        let shape = t.shape();
        t.dtype() == self.dtype
            && shape.len() == self.shape.len()
            && shape.iter().zip(&self.shape).all(|(a, b)| a == b)
    }
}

/// A non-tensor argument of an op (a dimension, a flag, a bound, a shape, a type).
#[derive(Clone, Debug, PartialEq)]
pub enum Attr {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Ints(Vec<i64>),
    DType(DType),
}

/// The named non-tensor arguments of one call.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Attrs(pub Vec<(String, Attr)>);

impl Attrs {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn with(mut self, name: &str, value: Attr) -> Self {
        self.0.push((name.to_owned(), value));
        self
    }
    pub fn get(&self, name: &str) -> &Attr {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map_or(&Attr::None, |(_, v)| v)
    }
    /// An optional integer (`None` when absent or None).
    pub fn opt_int(&self, name: &str) -> TResult<Option<i64>> {
        match self.get(name) {
            Attr::None => Ok(None),
            Attr::Int(i) => Ok(Some(*i)),
            other => Err(TensorError::type_error(format!(
                "{name} must be an int, not {other:?}"
            ))),
        }
    }
    pub fn int(&self, name: &str) -> TResult<i64> {
        self.opt_int(name)?
            .ok_or_else(|| TensorError::type_error(format!("missing argument {name}")))
    }
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.get(name), Attr::Bool(true))
    }
    pub fn ints(&self, name: &str) -> TResult<Vec<i64>> {
        match self.get(name) {
            Attr::Ints(v) => Ok(v.clone()),
            Attr::Int(i) => Ok(vec![*i]),
            other => Err(TensorError::type_error(format!(
                "{name} must be a sequence of ints, not {other:?}"
            ))),
        }
    }
    pub fn opt_float(&self, name: &str) -> TResult<Option<f64>> {
        match self.get(name) {
            Attr::None => Ok(None),
            Attr::Int(i) => Ok(Some(*i as f64)),
            Attr::Float(f) => Ok(Some(*f)),
            other => Err(TensorError::type_error(format!(
                "{name} must be a number, not {other:?}"
            ))),
        }
    }
}

/// How many tensors an op takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    Exactly(usize),
    AtLeast(usize),
}

pub type InferFn = Arc<dyn Fn(&[Meta], &Attrs) -> TResult<Meta> + Send + Sync>;
pub type KernelFn = Arc<dyn Fn(&[&TensorData], &Attrs) -> TResult<TensorData> + Send + Sync>;

/// One operation.
pub struct OpDef {
    pub name: String,
    pub arity: Arity,
    /// Shape and dtype of the result, from those of the inputs; every error about shapes is
    /// raised here, before any kernel runs.
    pub infer: InferFn,
    pub kernel: KernelFn,
    /// Its attributes hold no size (only dims, dtypes, constants): recorded on a tensor of
    /// one size, it does the same on another (elementwise ops, reductions over dims,
    /// matmul...). Not so for a reshape's target shape or a slice's bounds.
    pub size_free: bool,
    /// It draws from the random number generator: each run changes the generator's state, so
    /// a graph runs it once per call, in program order, whether or not its result is read,
    /// and never folds it into a constant.
    pub draws: bool,
    /// It raises on its data where the program raises (an asserted truth): run once per
    /// call whether or not its result is read, never pruned.
    pub checks: bool,
}

impl std::fmt::Debug for OpDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OpDef({}, {:?})", self.name, self.arity)
    }
}

impl OpDef {
    /// Mark it as holding no size in its attributes (see `size_free`).
    pub fn size_free(mut self) -> Self {
        self.size_free = true;
        self
    }

    /// Mark it as drawing random numbers (see `draws`).
    pub fn draws(mut self) -> Self {
        self.draws = true;
        self
    }

    /// Mark it as a check of the data (see `checks`).
    pub fn checks(mut self) -> Self {
        self.checks = true;
        self
    }

    pub fn new(
        name: &str,
        arity: Arity,
        infer: impl Fn(&[Meta], &Attrs) -> TResult<Meta> + Send + Sync + 'static,
        kernel: impl Fn(&[&TensorData], &Attrs) -> TResult<TensorData> + Send + Sync + 'static,
    ) -> Self {
        Self {
            name: name.to_owned(),
            arity,
            infer: Arc::new(infer),
            kernel: Arc::new(kernel),
            size_free: false,
            draws: false,
            checks: false,
        }
    }
}

/// The ops by name.
#[derive(Default)]
pub struct OpRegistry {
    ops: RwLock<BTreeMap<String, Arc<OpDef>>>,
}

impl OpRegistry {
    /// Add an op; a name is registered once.
    pub fn register(&self, op: OpDef) -> Result<(), String> {
        let mut ops = self.ops.write().unwrap_or_else(|e| e.into_inner());
        if ops.contains_key(&op.name) {
            return Err(format!("an op named {:?} is registered already", op.name));
        }
        ops.insert(op.name.clone(), Arc::new(op));
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<Arc<OpDef>> {
        self.ops
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .cloned()
    }

    /// Whether the op `name` draws random numbers (see `OpDef::draws`): never folded, never
    /// pruned.
    pub fn draws(&self, name: &str) -> bool {
        self.get(name).is_some_and(|d| d.draws)
    }

    /// Whether the op `name` runs once per call whether or not its result is read: it
    /// draws, or checks the data (see `OpDef::checks`).
    pub fn kept(&self, name: &str) -> bool {
        self.get(name).is_some_and(|d| d.draws || d.checks)
    }

    pub fn names(&self) -> Vec<String> {
        self.ops
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .cloned()
            .collect()
    }

    fn op(&self, name: &str, n_inputs: usize) -> TResult<Arc<OpDef>> {
        let op = self
            .get(name)
            .ok_or_else(|| TensorError::value(format!("no op named {name:?}")))?;
        let ok = match op.arity {
            Arity::Exactly(n) => n_inputs == n,
            Arity::AtLeast(n) => n_inputs >= n,
        };
        if !ok {
            return Err(TensorError::type_error(format!(
                "{name} takes {:?} tensors, got {n_inputs}",
                op.arity
            )));
        }
        Ok(op)
    }

    /// Shape and dtype of `name` applied to tensors described by `inputs`.
    pub fn infer(&self, name: &str, inputs: &[Meta], attrs: &Attrs) -> TResult<Meta> {
        (self.op(name, inputs.len())?.infer)(inputs, attrs)
    }

    /// Run `name` on `inputs`: inference first (it owns the error messages), then the kernel.
    pub fn call(&self, name: &str, inputs: &[&TensorData], attrs: &Attrs) -> TResult<TensorData> {
        // While a tracer records (a frame being simulated), ops on its stand-ins are its.
        if let Some((intercept, _)) = INTERCEPTOR.get()
            && let Some(recorded) = intercept(name, inputs, attrs)
        {
            return recorded;
        }
        self.compute(name, inputs, attrs)
    }

    /// Run `name` on `inputs`, which are real data, never a tracer's stand-ins: what a graph
    /// folding its constants computes, also while the tracer that records it is busy.
    pub fn compute(
        &self,
        name: &str,
        inputs: &[&TensorData],
        attrs: &Attrs,
    ) -> TResult<TensorData> {
        let op = self.op(name, inputs.len())?;
        let metas: Vec<Meta> = inputs.iter().map(|t| Meta::of(t)).collect();
        let expected = (op.infer)(&metas, attrs)?;
        super::shape::check_size(&expected.shape)?;
        let out = guarded(name, || (op.kernel)(inputs, attrs))?;
        if Meta::of(&out) != expected {
            return Err(TensorError::runtime(format!(
                "op {name}: the kernel returned {:?} where inference said {:?}",
                Meta::of(&out),
                expected
            )));
        }
        Ok(out)
    }

    /// `target = name(target, *rest)`, where eager code changes `target` in place
    /// (`t[i] = v`): `in_place` does it, except on a tracer's stand-in, where the op is
    /// recorded and its result takes the stand-in's place. The data it replaces goes to the
    /// tracer, which keeps it (it knows stand-ins by the address of their data: that address
    /// must not come back as another tensor's).
    pub fn update(
        &self,
        name: &str,
        target: &mut TensorData,
        rest: &[&TensorData],
        attrs: &Attrs,
        in_place: impl FnOnce(&mut TensorData) -> TResult<()>,
    ) -> TResult<()> {
        if let Some((intercept, retire)) = INTERCEPTOR.get() {
            let mut inputs: Vec<&TensorData> = vec![target];
            inputs.extend_from_slice(rest);
            if let Some(recorded) = intercept(name, &inputs, attrs) {
                let old = std::mem::replace(target, recorded?);
                retire(old);
                return Ok(());
            }
        }
        guarded(name, || in_place(target))
    }
}

/// What the registry asks before it runs an op: a tracer that records ops on its stand-in
/// tensors answers for them (`Some`), and the op runs for everything else (`None`). The
/// tensor knows no tracer: this is the one point where one plugs in, as torch's ops see
/// Dynamo's fake tensors only through a dispatch mode the tracer installs.
pub type Interceptor = fn(&str, &[&TensorData], &Attrs) -> Option<TResult<TensorData>>;

/// Where the data a recorded in-place update replaced goes (`Registry::update`).
pub type Retire = fn(TensorData);

static INTERCEPTOR: OnceLock<(Interceptor, Retire)> = OnceLock::new();

/// Install the interception point (once per process; the first one installed stays).
pub fn install_interceptor(f: Interceptor, retire: Retire) {
    let _ = INTERCEPTOR.set((f, retire));
}

/// What the registry asks after a view's op was made again (`view_link`): a tracer that
/// recorded it gives its node the per-call attributes `note` holds (those of the node that
/// first made the view), and says whether they fit; `true` where nothing was recorded.
pub type Annotator = fn(&TensorData, &(dyn std::any::Any + Send + Sync)) -> bool;

static ANNOTATOR: OnceLock<Annotator> = OnceLock::new();

/// Install the annotation point (once per process, as `install_interceptor`).
pub fn install_annotator(f: Annotator) {
    let _ = ANNOTATOR.set(f);
}

/// Give the node a tracer recorded for `t` the per-call attributes `note` holds (see
/// `Annotator`).
pub fn annotate(t: &TensorData, note: &(dyn std::any::Any + Send + Sync)) -> bool {
    ANNOTATOR.get().is_none_or(|f| f(t, note))
}

/// Run `f`, turning a panic (a bug in a kernel, or in an application's op) into an error: a
/// tensor operation never takes the interpreter down.
pub fn guarded<T>(what: &str, f: impl FnOnce() -> TResult<T>) -> TResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let why = panic
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| panic.downcast_ref::<&str>().copied())
            .unwrap_or("a panic");
        Err(TensorError::runtime(format!(
            "internal error in {what}: {why}"
        )))
    })
}

/// The process-wide registry, with symtrace's own ops.
pub fn registry() -> &'static OpRegistry {
    static REGISTRY: OnceLock<OpRegistry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let r = OpRegistry::default();
        for op in super::ops::builtin_ops() {
            r.register(op).expect("builtin op names are distinct");
        }
        r
    })
}
