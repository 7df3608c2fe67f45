//! The state of one translation, shared by the frames it simulates (the translated frame and
//! the calls inlined into it): the guards derived so far, the graph inputs and their sources,
//! the instruction budget. Also how a symbolic value is relied upon: reading what a value
//! is installs the guard that makes the reading true on later calls.

use hashbrown::{HashMap, HashSet};
use rustpython_vm::builtins::{PyDict, PyList, PyTuple, PyType, PyTypeRef};
use rustpython_vm::{AsObject, Py, PyObjectRef, PyPayload, PyRef, VirtualMachine};

use crate::graph::Value;
use crate::graph::recorder;
use crate::tensor::Meta;
use crate::tensor::PyTensor;
use crate::translate::guards::guard::{Check, Guard};
use crate::translate::source::Source;
use crate::translate::values::Var;

pub use crate::translate::breaks::reason::{Kind, Location, Unsupported, unsupported};

pub type SimResult<T> = Result<T, Unsupported>;

/// Limits that keep a translation bounded.
pub const INSTRUCTION_BUDGET: usize = 100_000;
pub const MAX_INLINE_DEPTH: usize = 24;
pub const MAX_UNROLL: usize = 10_000;
/// Instructions a frame may run before its translation gives up for want of tensor work
/// (no tensor read, no op recorded): a pure-Python frame costs that, not the whole budget,
/// on its way to being skipped. Enough for a walk of a model's `parameters()` (generators
/// over `named_modules`) to reach its first tensor (an EMA update, an optimizer's step).
pub const STEPS_WITHOUT_TENSORS: usize = 1024;

/// Where a translation can be rolled back to (an inlined call that fails).
pub struct Checkpoint {
    graph: crate::graph::recorder::Mark,
    guards: usize,
    inputs: usize,
    effects: crate::translate::side_effects::Mark,
    objects: usize,
    attr_writes: usize,
    class_writes: usize,
    class_reads: usize,
    identities: usize,
    updates: usize,
    written: usize,
    marks: usize,
    draws: usize,
}

/// An instance of a user class that existed before the call, as the simulation met it: the
/// object, and the source it was first read from (see `values::objects`).
#[derive(Clone, Debug)]
pub struct Touched {
    pub obj: PyObjectRef,
    pub source: Source,
}

pub struct State<'vm> {
    pub vm: &'vm VirtualMachine,
    pub guards: Vec<Guard>,
    guarded: HashSet<(Source, u8)>,
    /// The relations guarded (`SameAs`, `NotSameAs`): source, other, whether the same. A
    /// parser's frame relates as many entries as it reads; searching the guards for each
    /// made its translation cubic in its input.
    relations: HashSet<(Source, Source, bool)>,
    /// The source of each graph input, by input index.
    pub inputs: Vec<Source>,
    /// The fake of each tensor read from the frame, and the tensor.
    pub(crate) tensors: HashMap<Source, (PyRef<PyTensor>, PyObjectRef)>,
    /// Numbers read from the frame that are graph inputs (`number_input`): source, the
    /// dtype the graph takes them as, the input's index, its fake.
    numbers: Vec<(Source, crate::tensor::DType, usize, PyRef<PyTensor>)>,
    /// What this translation may leave unspecialized.
    pub spec: crate::translate::policy::Specialization,
    /// Inputs read with dynamic sizes, and the meta they had (see `finish_guards`).
    dynamic_inputs: Vec<(Source, Meta)>,
    /// Ints of the frame's given to the graph as numbers that sizes are computed from (see
    /// `values::sizes`): the value as read, and the input's index. A graph that comes out
    /// static guards their values.
    pub(crate) size_ints: Vec<(Var, usize)>,
    /// What building the replacement's templates keeps between them.
    pub templating: crate::translate::templates::Templating,
    pub steps: usize,
    /// Give up at `STEPS_WITHOUT_TENSORS` if no tensor work was seen (not under `trace_all`,
    /// which translates frames without tensor work too).
    pub needs_tensors: bool,
    /// Instructions of the translated frame itself started so far (see `run_top`).
    pub top_steps: usize,
    /// Where the translated frame's instruction being simulated comes from (an inlined
    /// call's instructions run within its caller's CALL).
    pub top_position: crate::bytecode::Position,
    pub depth: usize,
    /// The frames inlined now, outermost first (a generator's frame, counted in `depth`, is
    /// not among them).
    pub inlined_frames: Vec<crate::translate::values::located_output::InlinedFrame>,
    /// Where the instruction being simulated comes from, in whichever frame it runs.
    pub position: crate::bytecode::Position,
    /// The instruction being simulated is covered by an exception handler: of its own frame,
    /// or of a frame that called it inline. A side effect replayed after the graph must not
    /// raise then (the handler would not see it), so what could make it raise is checked.
    pub under_handler: bool,
    pub inlined: Vec<String>, // by qualified name, what `explain` lists
    pub rollbacks: usize,
    /// A guard was asked of a number drawn by the replacement (see `guard`).
    pub guarded_draw: bool,
    /// Mutations of what existed before the call, for the replacement to replay.
    pub effects: crate::translate::side_effects::SideEffects,
    /// Every fake the simulation has seen, kept alive: fakes are known by the address of
    /// their data, which must not be reused during the translation.
    alive: Vec<PyRef<PyTensor>>,
    /// Exceptions made during the simulation (see `values::exceptions`).
    pub exceptions: Vec<crate::translate::values::exceptions::MadeException>,
    /// What the instruction being simulated raises, as Python would (see
    /// `State::raise_native`): taken by the executor with the failure it comes with.
    pub pending_raise: Option<crate::translate::values::exceptions::NativeRaise>,
    /// Objects of the caller held by sets by identity, with the source each was first read
    /// from (see `values::identity_sets`).
    pub identities: Vec<(PyObjectRef, Source)>,
    /// Instances of user classes of the caller's that the simulation read or changed.
    pub objects: Vec<Touched>,
    /// Attributes the simulation stored into (`Some`) or deleted from (`None`) those, by
    /// their index in `objects`, newest last: what a later read of them sees.
    pub attr_writes: Vec<(usize, String, Option<Var>)>,
    /// Attributes the simulation stored into user classes of the caller's, newest last (see
    /// `values::class_stores`): what a later lookup of them sees.
    pub class_writes: Vec<(PyTypeRef, String, Var)>,
    /// Data read from user classes' namespaces: the value, where it was found. Guarded
    /// (a scalar by value) where a class is guarded entry by entry.
    pub class_reads: Vec<(PyObjectRef, Source)>,
    /// The class each class-version guard's source gave (see `values::class_stores`).
    pub versioned: Vec<(Source, PyTypeRef)>,
    /// The translated frame's globals (an inlined function that shares them reads `G[...]`).
    pub frame_globals: Option<PyRef<PyDict>>,
    /// The translated frame's free variables: name, cell object, the simulation's cell.
    pub free_cells: Vec<(String, PyObjectRef, crate::translate::values::CellRef)>,
    /// Dicts made during the simulation as instances of a subclass of dict (`OrderedDict`,
    /// `defaultdict` and its default factory), by their entries.
    pub dict_kinds: Vec<(crate::translate::values::DictRef, PyTypeRef, Option<Var>)>,
    /// Fakes updated in place, with what each stood for before (see `values::input_writes`).
    pub(crate) updates: Vec<(
        PyRef<PyTensor>,
        crate::translate::values::input_writes::Prior,
    )>,
    /// The caller's tensors the call updated in place: source, fake, tensor.
    pub(crate) written: Vec<(Source, PyRef<PyTensor>, PyObjectRef)>,
    /// Fakes of tensors the graph makes whose parameter mark the call set, with the mark
    /// each had before (undone by a rollback; see `values::tensor_functions`).
    pub(crate) marks: Vec<(PyRef<PyTensor>, bool)>,
}

impl<'vm> State<'vm> {
    pub fn new(vm: &'vm VirtualMachine, spec: crate::translate::policy::Specialization) -> Self {
        crate::tensor::dtype::take_default_float_read();
        Self {
            vm,
            guards: Vec::new(),
            guarded: HashSet::new(),
            relations: HashSet::new(),
            inputs: Vec::new(),
            tensors: HashMap::new(),
            numbers: Vec::new(),
            spec,
            dynamic_inputs: Vec::new(),
            size_ints: Vec::new(),
            needs_tensors: false,
            templating: Default::default(),
            steps: 0,
            top_steps: 0,
            top_position: Default::default(),
            under_handler: false,
            depth: 0,
            inlined_frames: Vec::new(),
            position: Default::default(),
            inlined: Vec::new(),
            rollbacks: 0,
            guarded_draw: false,
            effects: Default::default(),
            alive: Vec::new(),
            exceptions: Vec::new(),
            pending_raise: None,
            identities: Vec::new(),
            objects: Vec::new(),
            attr_writes: Vec::new(),
            class_writes: Vec::new(),
            class_reads: Vec::new(),
            versioned: Vec::new(),
            frame_globals: None,
            free_cells: Vec::new(),
            dict_kinds: Vec::new(),
            updates: Vec::new(),
            written: Vec::new(),
            marks: Vec::new(),
        }
    }

    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            graph: recorder::with(|r| r.mark()),
            guards: self.guards.len(),
            inputs: self.inputs.len(),
            effects: self.effects.mark(),
            objects: self.objects.len(),
            attr_writes: self.attr_writes.len(),
            class_writes: self.class_writes.len(),
            class_reads: self.class_reads.len(),
            identities: self.identities.len(),
            updates: self.updates.len(),
            written: self.written.len(),
            marks: self.marks.len(),
            draws: self.templating.draws.len(),
        }
    }

    /// Undo everything since `cp`: graph nodes, inputs, constants, guards and side effects.
    pub fn rollback(&mut self, cp: Checkpoint) {
        recorder::with(|r| r.rollback(cp.graph));
        self.effects.rollback(cp.effects);
        for g in self.guards.drain(cp.guards..) {
            match g.check {
                Check::SameAs(other) => self.relations.remove(&(g.source, other, true)),
                Check::NotSameAs(other) => self.relations.remove(&(g.source, other, false)),
                check => self.guarded.remove(&(g.source, check_kind(&check))),
            };
        }
        for s in self.inputs.drain(cp.inputs..) {
            self.tensors.remove(&s);
            self.dynamic_inputs.retain(|(d, _)| d != &s);
        }
        self.numbers.retain(|n| n.2 < cp.inputs);
        self.size_ints.retain(|n| n.1 < cp.inputs);
        self.objects.truncate(cp.objects);
        self.attr_writes.truncate(cp.attr_writes);
        self.class_writes.truncate(cp.class_writes);
        self.class_reads.truncate(cp.class_reads);
        self.identities.truncate(cp.identities);
        self.written.truncate(cp.written);
        for (fake, prior) in self.marks.drain(cp.marks..).rev() {
            fake.set_requires_grad_flag(prior);
        }
        self.undo_updates(cp.updates);
        self.templating.draws.truncate(cp.draws);
        self.rollbacks += 1;
    }

    /// The guards that concern the translation as a whole, added once it is done: each object
    /// of the caller that the simulation changed is not one it read as another (their
    /// identities were told apart at trace time; the guards do not pin identities), and the
    /// default float type, when the simulation read it (`State::new` clears the mark).
    ///
    /// Dynamic inputs keep a guard on their static sizes only if the graph came out dynamic;
    /// otherwise (their sizes went into it) they are guarded by their exact meta, and the ints
    /// sizes were computed from by their values.
    pub fn finish_guards(&mut self, graph: &crate::graph::Graph) -> SimResult<()> {
        if self.guarded_draw {
            return Err(Unsupported::new(
                Kind::Internal,
                "a guard on what the replacement reads by a call it makes first (a number \
                 drawn from the random module, a tensor an lru_cache holds)",
            ));
        }
        if !graph.dynamic && !self.dynamic_inputs.is_empty() {
            for (source, meta) in std::mem::take(&mut self.dynamic_inputs) {
                for g in self.guards.iter_mut() {
                    if g.source == source && matches!(g.check, Check::TensorDims(..)) {
                        g.check = Check::tensor(meta.clone());
                    }
                }
            }
        }
        if !graph.dynamic {
            if let Some(why) = &graph.static_because {
                log::info!(target: crate::log_targets::RECOMPILES, "sizes kept static: {why}");
            }
            // Its sizes are those of this call: so are the ints they were computed from.
            for (v, _) in std::mem::take(&mut self.size_ints) {
                self.obj(&v)?;
            }
        }
        let written: Vec<usize> = {
            let mut w: Vec<usize> = self.attr_writes.iter().map(|(i, _, _)| *i).collect();
            w.sort_unstable();
            w.dedup();
            w
        };
        for &i in &written {
            for j in 0..self.objects.len() {
                let (a, b) = (&self.objects[i], &self.objects[j]);
                if i != j && a.obj.class().is(b.obj.class()) {
                    let (source, other) = (b.source.clone(), a.source.clone());
                    self.guard(&source, Check::NotSameAs(other));
                }
            }
        }
        self.distinct_identities_guard();
        self.written_inputs_guard();
        self.class_entries_guards()?;
        if crate::tensor::dtype::take_default_float_read() {
            let d = crate::tensor::dtype::default_float();
            crate::tensor::dtype::take_default_float_read();
            let code = crate::tensor::DType::ALL
                .iter()
                .position(|x| *x == d)
                .unwrap_or(0);
            self.guard(&Source::DefaultDType, Check::EqInt(code as i64));
        }
        Ok(())
    }

    pub fn keep_alive(&mut self, t: &PyRef<PyTensor>) {
        self.alive.push(t.clone());
    }

    pub fn guard(&mut self, source: &Source, check: Check) {
        // No guard can read a number the replacement draws after the guards ran: a use that
        // relies on one is refused where it is made; one missed fails the translation.
        if source.has_draw() {
            log::debug!(target: crate::log_targets::GUARDS, "refused: {}", Guard::new(source.clone(), check));
            self.guarded_draw = true;
            return;
        }
        // A relation names its other source: two relations of one source are two guards.
        if let Check::SameAs(other) | Check::NotSameAs(other) = &check {
            let same = matches!(check, Check::SameAs(_));
            if self.relations.insert((source.clone(), other.clone(), same)) {
                self.guards.push(Guard::new(source.clone(), check));
            }
            return;
        }
        // Several conditions on one number are several guards.
        if matches!(check, Check::Compare(..)) {
            let known = self.guards.iter().any(|g| {
                &g.source == source
                    && matches!((&g.check, &check), (Check::Compare(o1, r1, e1), Check::Compare(o2, r2, e2))
                        if o1 == o2 && r1.is(r2) && e1 == e2)
            });
            if !known {
                self.guards.push(Guard::new(source.clone(), check));
            }
            return;
        }
        if self.guarded.insert((source.clone(), check_kind(&check))) {
            log::trace!(target: crate::log_targets::GUARDS, "{}", Guard::new(source.clone(), check.clone()));
            self.guard_dict_subclass(source, &check);
            self.guards.push(Guard::new(source.clone(), check));
        }
    }

    /// Rely on the attributes of `class` (read from `source`): its version is guarded, so
    /// that setting or deleting an attribute of it, or of a base, is seen on the next call.
    pub fn guard_class(&mut self, source: Source, class: &Py<PyType>) -> SimResult<()> {
        match class.version_for_specialization(self.vm) {
            0 => unsupported(Kind::Limit, "the VM's class version tags are exhausted"),
            tag => {
                if !self.versioned.iter().any(|(s, _)| *s == source) {
                    self.versioned.push((source.clone(), class.to_owned()));
                }
                self.guard(&source, Check::Version(tag));
                Ok(())
            }
        }
    }

    /// The fake of a tensor read from `source`: a graph input, guarded on type, dtype, shape.
    fn input_tensor(
        &mut self,
        t: &PyTensor,
        o: &PyObjectRef,
        source: &Source,
    ) -> SimResult<PyRef<PyTensor>> {
        if let Some((f, _)) = self.tensors.get(source) {
            return Ok(f.clone());
        }
        if self
            .written
            .iter()
            .any(|(_, _, w)| !w.is(o) && crate::tensor::object::shares_elements(w, o))
        {
            return unsupported(
                Kind::SideEffect,
                format!("{source} shares its elements with a tensor the call updated"),
            );
        }
        if let Some(f) = self.written_alias(o, source) {
            return Ok(f);
        }
        if let Some(f) = self.read_alias(o, source) {
            return Ok(f);
        }
        let meta = Meta::of(&t.read());
        let dims = self.spec.dims_of(source, &meta.shape, |d| t.dim_mark(d));
        let fake = if dims.iter().any(Option::is_none) {
            self.dynamic_inputs.push((source.clone(), meta.clone()));
            let varying = dims.iter().map(Option::is_none).collect();
            recorder::with(|r| r.dynamic_input(meta.clone(), varying))
        } else {
            recorder::with(|r| r.input(meta.clone()))
        }
        .map_err(|e| Unsupported::new(Kind::Value, e.message))?;
        let fake = PyTensor::new(fake).into_ref(&self.vm.ctx);
        // What the fake says of its mark is guarded where it is read (`requires_grad_of`).
        fake.set_requires_grad_flag(t.requires_grad_flag());
        if dims.iter().any(Option::is_none) {
            self.guard(source, Check::TensorDims(meta.dtype, dims));
        } else {
            self.guard(source, Check::tensor(meta));
        }
        self.inputs.push(source.clone());
        self.tensors
            .insert(source.clone(), (fake.clone(), o.clone()));
        Ok(fake)
    }

    /// A tensor the replacement reads by a call it makes first (`Source::Draw`), as a graph
    /// input: no guard can read it, so none is made; the graph checks its meta when it runs.
    pub fn first_call_input(&mut self, meta: Meta, source: Source) -> SimResult<PyRef<PyTensor>> {
        let fake = recorder::with(|r| r.input(meta))
            .map_err(|e| Unsupported::new(Kind::Value, e.message))?;
        let fake = PyTensor::new(fake).into_ref(&self.vm.ctx);
        self.inputs.push(source.clone());
        // The tensor itself is known only when the replacement runs: its fake stands for it.
        self.tensors
            .insert(source, (fake.clone(), fake.clone().into()));
        Ok(fake)
    }

    /// `t.requires_grad`: a graph input's mark, as the real tensor has it (guarded); a
    /// tensor the graph computes has none (symtrace has no autograd: an op's result is
    /// never marked).
    pub fn requires_grad_of(&mut self, t: &Var) -> SimResult<bool> {
        let fake = self.obj(t)?;
        let fake = fake
            .downcast_ref::<PyTensor>()
            .ok_or_else(|| Unsupported::new(Kind::Value, "requires_grad of a non-tensor"))?;
        let flag = fake.requires_grad_flag();
        let source = self
            .tensors
            .iter()
            .find(|(_, (f, _))| f.is(fake))
            .map(|(s, _)| s.clone());
        if let Some(source) = source {
            self.guard(&source, Check::RequiresGrad(flag));
        }
        Ok(flag)
    }

    /// A number read from `source` as a graph input: a 0-d tensor of `dtype` that the
    /// compiled graph makes from the number on each call (as eager arithmetic converts it),
    /// guarded on the number's type only.
    pub fn number_input(
        &mut self,
        obj: &PyObjectRef,
        source: &Source,
        dtype: crate::tensor::DType,
    ) -> SimResult<PyRef<PyTensor>> {
        if let Some(n) = self.numbers.iter().find(|n| &n.0 == source && n.1 == dtype) {
            return Ok(n.3.clone());
        }
        let meta = Meta {
            shape: Vec::new(),
            dtype,
        };
        let fake = recorder::with(|r| r.input(meta))
            .map_err(|e| Unsupported::new(Kind::Value, e.message))?;
        let fake = PyTensor::new(fake).into_ref(&self.vm.ctx);
        self.keep_alive(&fake);
        // A computed number's type follows from its operands', which are guarded; a drawn
        // one's from the draw.
        if !matches!(
            source,
            Source::Arith(..) | Source::Math(..) | Source::Draw(_)
        ) {
            self.guard(source, Check::type_is(obj.class().to_owned()));
        }
        // An int becomes a tensor's number as eager arithmetic converts it, through int64:
        // one out of range raises there (OverflowError). The replacement would raise it in
        // the graph's call, before it replays the frame's earlier effects (a print, an
        // append); these guards fail first, and the frame runs as written. (A drawn number
        // is made by the replacement first, where no guard reads it.)
        if obj.class().is(self.vm.ctx.types.int_type) && !source.has_draw() {
            use rustpython_vm::types::PyComparisonOp;
            for (op, bound) in [
                (PyComparisonOp::Ge, i64::MIN),
                (PyComparisonOp::Le, i64::MAX),
            ] {
                let bound = self.vm.ctx.new_int(bound).into();
                self.guard(source, Check::Compare(op, bound, true));
            }
        }
        self.numbers
            .push((source.clone(), dtype, self.inputs.len(), fake.clone()));
        self.inputs.push(source.clone());
        log::debug!(target: crate::log_targets::GUARDS, "{source} is a graph input ({}), not a constant", dtype.name());
        Ok(fake)
    }

    /// The int `v` (read from, or computed from ints read from, `source`) as a graph input
    /// that sizes are computed from (`SizeExpr::Item`): guarded by type here, and by value if
    /// the graph comes out static (`finish_guards`).
    pub(crate) fn size_int_input(
        &mut self,
        v: &Var,
        obj: &PyObjectRef,
        source: &Source,
    ) -> SimResult<PyRef<PyTensor>> {
        let fake = self.number_input(obj, source, crate::tensor::DType::Int64)?;
        let index = self
            .numbers
            .iter()
            .find(|n| &n.0 == source && n.1 == crate::tensor::DType::Int64)
            .map_or(self.inputs.len(), |n| n.2);
        if !self.size_ints.iter().any(|(_, i)| *i == index) {
            self.size_ints.push((v.clone(), index));
        }
        Ok(fake)
    }

    /// The items of a tuple or list read from `source`, guarded on its type and length.
    pub fn lazy_items(
        &mut self,
        obj: &PyObjectRef,
        source: &Source,
    ) -> SimResult<Option<Vec<Var>>> {
        let vm = self.vm;
        let exact_tuple = obj.class().is(vm.ctx.types.tuple_type);
        let items: Vec<PyObjectRef> = if exact_tuple
            || (obj.downcast_ref::<PyTuple>().is_some()
                && crate::translate::values::named_tuples::tuple_protocols_kept(obj.class(), vm))
        {
            // A named tuple's items are its tuple's: its class adds names, nothing else; so
            // do the items of a class on tuple that computes with them as tuple does (attrs'
            // fields), as long as it does (its version guarded).
            if !exact_tuple {
                self.guard_class(source.clone().type_of(), obj.class())?;
            }
            obj.downcast_ref::<PyTuple>()
                .expect("tuple")
                .as_slice()
                .to_vec()
        } else if obj.class().is(vm.ctx.types.list_type) {
            if let Some(items) = self.list_shadow(obj, source)? {
                return Ok(Some(items.borrow().clone()));
            }
            obj.downcast_ref::<PyList>()
                .expect("list")
                .borrow_vec()
                .to_vec()
        } else if crate::translate::values::deques::is_native_deque(obj) {
            // A caller's deque, with the changes the call made to it so far (replayed after).
            return self.caller_deque_items(obj, source).map(Some);
        } else {
            return Ok(None);
        };
        self.check_readable(obj, source)?;
        self.guard(source, Check::type_is(obj.class().to_owned()));
        self.guard(source, Check::Len(items.len()));
        Ok(Some(
            items
                .into_iter()
                .enumerate()
                .map(|(i, o)| Var::Lazy(o, source.clone().item(i)))
                .collect(),
        ))
    }

    /// A Python object to compute with, standing for `v` (tensors are their fakes); guards
    /// what the computation will rely on.
    pub fn obj(&mut self, v: &Var) -> SimResult<PyObjectRef> {
        let (vm, _level) = (self.vm, crate::translate::nesting::Level::enter()?);
        Ok(match v {
            Var::Obj(o) => o.clone(),
            Var::Num(n) => self.force_number(n)?,
            Var::SymSlice(parts) => self.forced_slice(parts)?,
            Var::Text(parts) => self.forced_text(parts)?,
            Var::Tensor(t) => t.clone().into(),
            Var::Lazy(o, source) => {
                if let Some(t) = o.downcast_ref::<PyTensor>() {
                    if !o.class().is(PyTensor::class(&vm.ctx)) {
                        return unsupported(
                            Kind::Value,
                            format!("a subclass of Tensor ({source})"),
                        );
                    }
                    return Ok(self.input_tensor(t, o, source)?.into());
                }
                if let Some(items) = self.lazy_items(o, source)? {
                    let objs = items
                        .iter()
                        .map(|i| self.obj(i))
                        .collect::<SimResult<Vec<_>>>()?;
                    return Ok(if o.class().is(vm.ctx.types.tuple_type) {
                        vm.ctx.new_tuple(objs).into()
                    } else {
                        vm.ctx.new_list(objs).into()
                    });
                }
                if let Some(copy) = self.caller_set_value(o, source)? {
                    return Ok(copy);
                }
                self.rely_leaf(o, source)?;
                o.clone()
            }
            Var::Tuple(items) => {
                let objs = items
                    .iter()
                    .map(|i| self.obj(i))
                    .collect::<SimResult<Vec<_>>>()?;
                vm.ctx.new_tuple(objs).into()
            }
            Var::List(items) => {
                let items = items.borrow().clone();
                let objs = items
                    .iter()
                    .map(|i| self.obj(i))
                    .collect::<SimResult<Vec<_>>>()?;
                vm.ctx.new_list(objs).into()
            }
            Var::Dict(items) => {
                let items = items.borrow().clone();
                let d = vm.ctx.new_dict();
                for (k, v) in &items {
                    let v = self.obj(v)?;
                    d.set_item(&**k, v, vm)
                        .map_err(|_| Unsupported::new(Kind::Value, "unhashable key"))?;
                }
                d.into()
            }
            Var::Deque(d) => self.deque_obj(d)?,
            other => {
                return unsupported(
                    Kind::Value,
                    format!("a {} cannot be passed to native code", other.kind()),
                );
            }
        })
    }

    /// The graph value a fake stands for.
    pub fn value_of(&self, t: &PyTensor) -> Option<Value> {
        let data = t.read();
        recorder::with(|r| r.value_of(&data))
    }

    /// The class (and default factory) of a dict made during the simulation as an instance of
    /// a subclass of dict.
    pub fn dict_kind(
        &self,
        d: &crate::translate::values::DictRef,
    ) -> Option<(PyTypeRef, Option<Var>)> {
        self.dict_kinds
            .iter()
            .find(|(e, _, _)| std::rc::Rc::ptr_eq(e, d))
            .map(|(_, c, f)| (c.clone(), f.clone()))
    }

    /// Whether `v` stands for a tensor of the graph (a fake, or a tensor of the caller's,
    /// which becomes a graph input): not a tensor the simulation made from constants.
    pub fn is_fake(&self, v: &Var) -> bool {
        match v {
            Var::Tensor(_) => true,
            Var::Lazy(o, _) => o.downcast_ref::<PyTensor>().is_some(),
            _ => false,
        }
    }

    /// The dtype of a tensor value.
    pub fn tensor_dtype(&self, v: &Var) -> Option<crate::tensor::DType> {
        match v {
            Var::Tensor(t) => Some(t.read().dtype()),
            Var::Lazy(o, _) | Var::Obj(o) => o.downcast_ref::<PyTensor>().map(|t| t.read().dtype()),
            _ => None,
        }
    }

    /// Whether `v` is (or reads as) a tensor.
    pub fn is_tensor(&self, v: &Var) -> bool {
        match v {
            Var::Tensor(_) => true,
            Var::Lazy(o, _) | Var::Obj(o) => o.downcast_ref::<PyTensor>().is_some(),
            _ => false,
        }
    }
}

fn check_kind(c: &Check) -> u8 {
    match c {
        Check::TypeIs(_) => 0,
        Check::Len(_) => 1,
        Check::Absent => 2,
        Check::Version(_) | Check::Entries(_) => 4,
        Check::Keys(_) | Check::KeyObjects(_) | Check::OrderedKeys(_) | Check::ConstKeys(_) => 5,
        // Besides a tensor's dtype and shape (kind 3).
        Check::RequiresGrad(_) => 6,
        _ => 3,
    }
}

pub use crate::translate::values::dict_subclasses::is_dict;
