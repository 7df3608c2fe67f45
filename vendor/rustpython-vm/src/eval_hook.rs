//! symtrace fork: new file, the eval-frame hook
//! The eval-frame hook: RustPython's analogue of CPython's PEP 523 API.
//!
//! A plugin implements [`EvalFrameHook`] and installs it on an interpreter with
//! [`VirtualMachine::set_eval_frame_hook`]. Each thread has its own [`EvalHookMode`]; while it
//! is not `Disabled`, every ordinary frame is shown to the plugin before it runs (arguments
//! bound, nothing executed, not yet on the frame chain), and the plugin decides:
//!
//! * [`FrameAction::RunDefault`]: run the frame as is;
//! * [`FrameAction::SkipCode`]: run it as is and never consult the hook for this code again;
//! * [`FrameAction::Replace`]: run another code object in a new frame, whose arguments, locals,
//!   cells and free variables are taken **by name** from the original frame;
//! * [`FrameAction::Return`]: the plugin has computed what the frame returns, and the frame
//!   does not run (PEP 523's eval function returns the result it computed).
//!
//! Generator, coroutine and async-generator frames always run as is. A hook that asks for them
//! ([`EvalFrameHook::wants_generator_events`]) is told when such a frame starts for the first
//! time ([`FrameEntry::GeneratorStart`]); its decision is ignored. `throw()` into a generator is
//! never reported.
//!
//! Where the hook sits: `VirtualMachine::run_frame_fast` (data-stack frames) and
//! `VirtualMachine::run_frame` (heap frames) check the thread's mode, one byte load and a
//! predictable branch, and call into this module's cold paths when it is not `Disabled`. While
//! the mode is not `Disabled`, the specialized call instructions that would enter a callee
//! without going through those two functions (the trampoline's tail calls, the generator fast
//! paths) de-specialize, exactly as CPython's `DEOPT_IF(tstate->interp->eval_frame)` does.
//!
//! Invariants the hook keeps:
//! * while a plugin runs, its thread's mode is `Disabled`, so the plugin's own Python calls are
//!   never hooked (no re-entry);
//! * a panic in a plugin is caught and logged, and the frame runs as is;
//! * a Python exception returned by a plugin propagates to the frame's caller;
//! * a replacement is validated before it runs; an invalid one is logged and the original runs.

use alloc::sync::Arc;
use core::any::Any;
use core::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::{
    Py, PyObject, PyObjectRef, PyRef, PyResult, VirtualMachine,
    builtins::{PyCode, PyDict, PyStrInterned, function::PyCellRef},
    bytecode::{self, CO_FAST_CELL, CO_FAST_FREE, CodeFlags},
    common::lock::PyRwLock,
    frame::{FrameObject, InterpreterFrame},
    function::ArgMapping,
    scope::Scope,
};

/// Per-thread state of the hook: TorchDynamo's callback `None` / `False` / callable.
#[repr(u8)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum EvalHookMode {
    /// Frames run as usual; the hook is not consulted.
    #[default]
    Disabled = 0,
    /// Only [`EvalFrameHook::lookup`] is consulted: cached replacements run, nothing new is made.
    RunOnly = 1,
    /// [`EvalFrameHook::on_frame`] is consulted for every frame.
    Active = 2,
}

impl EvalHookMode {
    fn from_u8(v: u8) -> Self {
        match v {
            1 => Self::RunOnly,
            2 => Self::Active,
            _ => Self::Disabled,
        }
    }
}

/// Why the hook is being shown a frame.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FrameEntry {
    /// An ordinary frame about to start: arguments bound, no instruction run yet.
    Call,
    /// A generator, coroutine or async generator frame about to run for the first time
    /// (its first `send`/`next`). Notification only: the frame always runs as is.
    GeneratorStart,
}

/// What to run for a frame.
pub enum FrameAction {
    /// Run the original frame as is.
    RunDefault,
    /// Run the original frame as is and never consult the hook for its code object again.
    SkipCode,
    /// Run this code object in a new frame instead; arguments, locals, cells and free variables
    /// are copied from the original frame by name.
    Replace(PyRef<PyCode>),
    /// Return this value as the frame's result without running the frame. The call still
    /// counts toward the recursion limit: at the limit it raises `RecursionError` as entering
    /// the frame would have.
    Return(PyObjectRef),
}

/// The mode for the frames that a frame calls, while it runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum CalleeMode {
    /// Callees run in the thread's current mode.
    #[default]
    Inherit,
    /// Callees run in this mode; the previous mode is restored when the frame returns.
    Set(EvalHookMode),
}

/// A plugin's answer for one frame.
pub struct FrameDecision {
    pub action: FrameAction,
    pub callees: CalleeMode,
}

impl FrameDecision {
    pub fn run_default() -> Self {
        Self { action: FrameAction::RunDefault, callees: CalleeMode::Inherit }
    }
    pub fn skip_code() -> Self {
        Self { action: FrameAction::SkipCode, callees: CalleeMode::Inherit }
    }
    pub fn replace(code: PyRef<PyCode>) -> Self {
        Self { action: FrameAction::Replace(code), callees: CalleeMode::Inherit }
    }
    pub fn returns(value: PyObjectRef) -> Self {
        Self { action: FrameAction::Return(value), callees: CalleeMode::Inherit }
    }
    pub fn with_callees(mut self, callees: CalleeMode) -> Self {
        self.callees = callees;
        self
    }
}

/// A plugin that sees frames before they run.
pub trait EvalFrameHook: Send + Sync + 'static {
    /// `Active` mode: decide what runs for this frame. Called with the hook suspended on this
    /// thread, so Python code run from here is not hooked.
    fn on_frame(&self, frame: &FrameView<'_>, vm: &VirtualMachine) -> PyResult<FrameDecision>;

    /// `RunOnly` mode: a replacement that already exists for this frame, if any. Must not make
    /// new ones. The default runs every frame as is.
    fn lookup(
        &self,
        _frame: &FrameView<'_>,
        _vm: &VirtualMachine,
    ) -> PyResult<Option<PyRef<PyCode>>> {
        Ok(None)
    }

    /// Whether [`FrameEntry::GeneratorStart`] notifications are wanted.
    fn wants_generator_events(&self) -> bool {
        false
    }

    /// Whether `result`, returned by a replacement, asks for the frame to run as written
    /// instead: the replacement did nothing the program could observe before returning it
    /// (a compiled graph that raised at run time, before any side effect was replayed). The
    /// original frame then runs with the arguments it was given.
    fn runs_as_written(&self, _result: &PyObject, _vm: &VirtualMachine) -> bool {
        false
    }
}

/// Whether the installed hook asks, by `result`, for the frame to run as written (a plugin
/// that panics here does not: the result stands).
fn asks_as_written(vm: &VirtualMachine, result: &PyResult) -> bool {
    match result {
        Ok(v) => current_hook(vm).is_some_and(|hook| {
            catch_unwind(AssertUnwindSafe(|| hook.runs_as_written(v, vm))).unwrap_or(false)
        }),
        Err(_) => false,
    }
}

/// A read-only view of a frame that has not started yet. It lives only for one call of the
/// hook; values are read, never moved out.
pub struct FrameView<'a> {
    iframe: &'a InterpreterFrame,
    entry: FrameEntry,
}

impl<'a> FrameView<'a> {
    pub fn entry(&self) -> FrameEntry {
        self.entry
    }
    pub fn code(&self) -> &'a Py<PyCode> {
        self.iframe.code()
    }
    pub fn globals(&self) -> &'a Py<PyDict> {
        self.iframe.globals()
    }
    pub fn builtins(&self) -> &'a PyObject {
        self.iframe.builtins()
    }
    /// The function object being called; `None` for frames that have none.
    pub fn function(&self) -> Option<&'a PyObject> {
        self.iframe.func_obj()
    }
    /// The locals mapping of a frame without NEWLOCALS (module, class body, `exec`).
    pub fn locals_mapping(&self) -> Option<&'a ArgMapping> {
        if self.code().flags.contains(CodeFlags::NEWLOCALS) {
            None
        } else {
            self.iframe.locals.get()
        }
    }
    /// The next instruction to run, in code units: 0 for a frame that has not started.
    pub fn lasti(&self) -> u32 {
        self.iframe.get_lasti()
    }
    /// Number of argument, local, cell and free-variable slots (`co_nlocalsplus`).
    pub fn nlocalsplus(&self) -> usize {
        self.code().localspluskinds.len()
    }
    /// Name of slot `i` (`co_localsplusnames[i]`).
    pub fn local_name(&self, i: usize) -> &'static PyStrInterned {
        self.code().localsplus_names()[i]
    }
    /// `CO_FAST_*` kind bits of slot `i`.
    pub fn local_kind(&self, i: usize) -> u8 {
        self.code().localspluskinds[i]
    }
    /// What slot `i` holds: a free variable's slot holds its cell.
    pub fn local_raw(&self, i: usize) -> Option<PyObjectRef> {
        self.iframe.localsplus.fastlocals().get(i).cloned().flatten()
    }
    /// What slot `i` holds, borrowed for the life of the view (no reference-count traffic,
    /// for guards checked on every call): a cell or free variable's slot holds its cell.
    pub fn local_ref(&self, i: usize) -> Option<&'a PyObject> {
        self.iframe.localsplus.fastlocals().get(i)?.as_deref()
    }
    /// The value of slot `i`, with a cell's content read out.
    pub fn local_value(&self, i: usize) -> Option<PyObjectRef> {
        let raw = self.local_raw(i)?;
        if self.local_kind(i) & (CO_FAST_FREE | CO_FAST_CELL) != 0 {
            match raw.downcast_ref::<crate::builtins::function::PyCell>() {
                Some(cell) => cell.get(),
                None => Some(raw),
            }
        } else {
            Some(raw)
        }
    }
    /// The value bound to `name` in this frame's slots, if any.
    pub fn get(&self, name: &str) -> Option<PyObjectRef> {
        let names = self.code().localsplus_names();
        let i = names.iter().position(|n| n.as_str() == name)?;
        self.local_value(i)
    }
    /// Qualified name, file and first line of the frame's code, for messages.
    pub fn describe(&self) -> String {
        let code = self.code();
        format!(
            "{} ({}:{})",
            code.qualname.as_str(),
            code.source_path().as_str(),
            code.first_line_number.map_or(0, |l| l.get())
        )
    }
}

/// Per-code-object state kept for plugins (`co_extra` and the skip flag), dropped with the
/// code object.
#[derive(Default)]
pub struct CodeHookData {
    skipped: AtomicBool,
    extra: PyRwLock<Vec<Option<Arc<dyn Any + Send + Sync>>>>,
    /// The replacements validated for frames of this code, with their slot maps, newest
    /// last: a replacement is validated once per original, not on every call.
    layouts: PyRwLock<Vec<Arc<SlotMap>>>,
}

/// How many validated replacements a code object remembers. Each entry holds its
/// replacement alive (so that its address cannot be reused by another code object while it
/// is remembered); the oldest is forgotten first.
const LAYOUTS_KEPT: usize = 4;

/// How a replacement's frame is filled from its original's, worked out when the pair is
/// validated: by name, once.
struct SlotMap {
    replacement: PyRef<PyCode>,
    /// (replacement slot, original slot) of every non-free slot the original also has.
    moves: Vec<(usize, usize)>,
    /// Per free variable of the replacement, the original's slot that holds its cell.
    cells: Vec<usize>,
    /// The free variables agree, so the replacement runs with the original's function.
    same_free_vars: bool,
}

impl SlotMap {
    fn new(original: &PyCode, replacement: PyRef<PyCode>) -> Self {
        let names = original.localsplus_names();
        let find = |name: &PyStrInterned| names.iter().position(|n| core::ptr::eq(*n, name));
        let moves = replacement
            .localsplus_names()
            .iter()
            .enumerate()
            .filter(|(i, _)| replacement.localspluskinds[*i] & CO_FAST_FREE == 0)
            .filter_map(|(i, name)| Some((i, find(name)?)))
            .collect();
        let cells = replacement.freevars.iter().filter_map(|name| find(name)).collect();
        let same_free_vars = same_free_vars(original, &replacement);
        Self { replacement, moves, cells, same_free_vars }
    }
}

/// The slot map of `replacement` for frames of `original`, validating the pair the first time.
fn slot_map(original: &PyCode, replacement: &PyRef<PyCode>) -> Result<Arc<SlotMap>, String> {
    let known = |layouts: &[Arc<SlotMap>]| layouts.iter().find(|m| core::ptr::eq::<Py<PyCode>>(&*m.replacement, &**replacement)).cloned();
    if let Some(map) = known(&original.hook_data.layouts.read()) {
        return Ok(map);
    }
    validate_replacement(original, replacement)?;
    let map = Arc::new(SlotMap::new(original, replacement.clone()));
    let mut layouts = original.hook_data.layouts.write();
    if let Some(map) = known(&layouts) {
        return Ok(map);
    }
    if layouts.len() >= LAYOUTS_KEPT {
        layouts.remove(0);
    }
    layouts.push(map.clone());
    Ok(map)
}

static NEXT_EXTRA_INDEX: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// Reserve an index for [`PyCode::hook_extra`]: each plugin that stores data on code objects
/// asks for its own (`_PyEval_RequestCodeExtraIndex`).
pub fn request_code_extra_index() -> usize {
    NEXT_EXTRA_INDEX.fetch_add(1, Ordering::Relaxed)
}

impl PyCode {
    /// Whether the hook skips this code object for good (lock-free).
    #[inline]
    pub fn eval_hook_skipped(&self) -> bool {
        self.hook_data.skipped.load(Ordering::Relaxed)
    }
    pub fn set_eval_hook_skipped(&self, skipped: bool) {
        self.hook_data.skipped.store(skipped, Ordering::Relaxed)
    }
    /// A plugin's data stored on this code object at `index`.
    pub fn hook_extra(&self, index: usize) -> Option<Arc<dyn Any + Send + Sync>> {
        self.hook_data.extra.read().get(index).cloned().flatten()
    }
    /// Store (or with `None`, drop) a plugin's data at `index`.
    pub fn set_hook_extra(&self, index: usize, value: Option<Arc<dyn Any + Send + Sync>>) {
        let mut extra = self.hook_data.extra.write();
        if extra.len() <= index {
            if value.is_none() {
                return;
            }
            extra.resize(index + 1, None);
        }
        extra[index] = value;
    }
}

/// The installed hook of an interpreter, shared by its threads.
#[derive(Default)]
pub struct HookSlot {
    hook: PyRwLock<Option<Arc<dyn EvalFrameHook>>>,
    /// Counts installs, so that a thread knows when its copy of the hook is stale.
    generation: AtomicU64,
    /// The mode a new thread starts in.
    thread_default_mode: AtomicU8,
}

/// A thread's copy of the installed hook, valid while the slot's generation is `generation`:
/// a consultation then takes the hook without the slot's lock or a reference count (four
/// atomic operations per hooked frame fewer). A thread that stops consulting keeps its copy,
/// and so the hook, until it consults again or its `VirtualMachine` is dropped.
#[derive(Default)]
pub(crate) struct HookCache {
    generation: Option<u64>,
    hook: Option<Arc<dyn EvalFrameHook>>,
}

/// The hook a consultation on this thread uses: its copy, or the slot's when the copy is
/// stale or busy (a plugin that re-enabled the hook on its own thread).
enum CurrentHook<'vm> {
    Copy(core::cell::Ref<'vm, Arc<dyn EvalFrameHook>>),
    Shared(Arc<dyn EvalFrameHook>),
}

impl core::ops::Deref for CurrentHook<'_> {
    type Target = dyn EvalFrameHook;
    fn deref(&self) -> &Self::Target {
        match self {
            Self::Copy(hook) => &***hook,
            Self::Shared(hook) => &**hook,
        }
    }
}

fn current_hook(vm: &VirtualMachine) -> Option<CurrentHook<'_>> {
    let generation = vm.state.eval_hook.generation.load(Ordering::Acquire);
    if let Ok(copy) = vm.eval_hook_cache.try_borrow()
        && copy.generation == Some(generation)
    {
        return core::cell::Ref::filter_map(copy, |c| c.hook.as_ref())
            .ok()
            .map(CurrentHook::Copy);
    }
    // Read after the generation: a hook installed in between is copied under the older
    // generation, and so read again at the next consultation.
    let hook = vm.eval_frame_hook();
    if let Ok(mut copy) = vm.eval_hook_cache.try_borrow_mut() {
        *copy = HookCache { generation: Some(generation), hook: hook.clone() };
    }
    hook.map(CurrentHook::Shared)
}

impl VirtualMachine {
    /// Install (or with `None`, remove) the interpreter's hook. Returns the previous one. The
    /// calling thread's mode is not changed: see [`VirtualMachine::set_eval_hook_mode`].
    pub fn set_eval_frame_hook(
        &self,
        hook: Option<Arc<dyn EvalFrameHook>>,
    ) -> Option<Arc<dyn EvalFrameHook>> {
        let previous = {
            let mut slot = self.state.eval_hook.hook.write();
            self.state.eval_hook.generation.fetch_add(1, Ordering::Release);
            core::mem::replace(&mut *slot, hook)
        };
        // This thread lets go of the previous hook now (unless a consultation of it is
        // under way); other threads do at their next consultation.
        if let Ok(mut copy) = self.eval_hook_cache.try_borrow_mut() {
            *copy = HookCache::default();
        }
        previous
    }
    pub fn eval_frame_hook(&self) -> Option<Arc<dyn EvalFrameHook>> {
        self.state.eval_hook.hook.read().clone()
    }
    /// Set this thread's mode; returns the previous one.
    pub fn set_eval_hook_mode(&self, mode: EvalHookMode) -> EvalHookMode {
        self.eval_hook_mode.replace(mode)
    }
    pub fn eval_hook_mode(&self) -> EvalHookMode {
        self.eval_hook_mode.get()
    }
    /// The mode that threads started from now on begin in.
    pub fn set_eval_hook_thread_default(&self, mode: EvalHookMode) {
        self.state.eval_hook.thread_default_mode.store(mode as u8, Ordering::Relaxed)
    }
    pub(crate) fn eval_hook_thread_default(&self) -> EvalHookMode {
        EvalHookMode::from_u8(self.state.eval_hook.thread_default_mode.load(Ordering::Relaxed))
    }
}

/// Sets the thread's mode and restores the previous one when dropped, also on unwinding.
struct ModeGuard<'vm> {
    vm: &'vm VirtualMachine,
    previous: EvalHookMode,
}

impl<'vm> ModeGuard<'vm> {
    fn set(vm: &'vm VirtualMachine, mode: EvalHookMode) -> Self {
        Self { vm, previous: vm.eval_hook_mode.replace(mode) }
    }
    fn for_callees(vm: &'vm VirtualMachine, callees: CalleeMode) -> Option<Self> {
        match callees {
            CalleeMode::Inherit => None,
            CalleeMode::Set(mode) => Some(Self::set(vm, mode)),
        }
    }
}

impl Drop for ModeGuard<'_> {
    fn drop(&mut self) {
        self.vm.eval_hook_mode.set(self.previous);
    }
}

/// What the consultation decided, after validation.
enum Verdict {
    Default(CalleeMode),
    Replace(Arc<SlotMap>, CalleeMode),
    Return(PyObjectRef),
}

fn panic_message(payload: &(dyn Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.as_str()
    } else {
        "(non-string panic payload)"
    }
}

/// Ask the plugin about `iframe`. `Err` is a Python exception the plugin raised.
fn consult(vm: &VirtualMachine, iframe: &InterpreterFrame, entry: FrameEntry) -> PyResult<Verdict> {
    let code = iframe.code();
    let mode = vm.eval_hook_mode.get();
    if mode == EvalHookMode::Disabled || code.eval_hook_skipped() {
        return Ok(Verdict::Default(CalleeMode::Inherit));
    }
    let Some(hook) = current_hook(vm) else {
        return Ok(Verdict::Default(CalleeMode::Inherit));
    };
    if entry == FrameEntry::GeneratorStart && !hook.wants_generator_events() {
        return Ok(Verdict::Default(CalleeMode::Inherit));
    }
    // A plugin needs native stack of its own; when it is short, the frame runs as is and
    // raises the RecursionError it would have raised anyway.
    if vm.check_c_stack_overflow() {
        return Ok(Verdict::Default(CalleeMode::Inherit));
    }

    let view = FrameView { iframe, entry };
    let answer = {
        let _suspended = ModeGuard::set(vm, EvalHookMode::Disabled);
        catch_unwind(AssertUnwindSafe(|| match mode {
            EvalHookMode::Active => hook.on_frame(&view, vm),
            _ => hook.lookup(&view, vm).map(|found| match found {
                Some(code) => FrameDecision::replace(code),
                None => FrameDecision::run_default(),
            }),
        }))
    };
    let decision = match answer {
        Ok(Ok(decision)) => decision,
        Ok(Err(exc)) => return Err(exc),
        Err(payload) => {
            log::error!(
                target: "eval_hook",
                "plugin panicked on {}: {}; the frame runs as is",
                view.describe(),
                panic_message(&*payload)
            );
            return Ok(Verdict::Default(CalleeMode::Inherit));
        }
    };
    Ok(match decision.action {
        FrameAction::RunDefault => Verdict::Default(decision.callees),
        FrameAction::SkipCode => {
            code.set_eval_hook_skipped(true);
            Verdict::Default(decision.callees)
        }
        FrameAction::Return(value) => {
            if entry != FrameEntry::Call {
                log::warn!(
                    target: "eval_hook",
                    "result refused for {}: generator frames always run as is",
                    view.describe()
                );
                Verdict::Default(decision.callees)
            } else {
                Verdict::Return(value)
            }
        }
        FrameAction::Replace(new_code) => {
            if entry != FrameEntry::Call {
                log::warn!(
                    target: "eval_hook",
                    "replacement refused for {}: generator frames always run as is",
                    view.describe()
                );
                Verdict::Default(decision.callees)
            } else {
                match slot_map(code, &new_code) {
                    Ok(map) => Verdict::Replace(map, decision.callees),
                    Err(why) => {
                        log::warn!(
                            target: "eval_hook",
                            "replacement refused for {}: {}; the frame runs as is",
                            view.describe(),
                            why
                        );
                        Verdict::Default(decision.callees)
                    }
                }
            }
        }
    })
}

/// Why `replacement` cannot stand in for a frame of `original`, if it cannot.
pub fn validate_replacement(original: &PyCode, replacement: &PyCode) -> Result<(), String> {
    const GENERATOR_LIKE: CodeFlags = CodeFlags::GENERATOR
        .union(CodeFlags::COROUTINE)
        .union(CodeFlags::ITERABLE_COROUTINE)
        .union(CodeFlags::ASYNC_GENERATOR);
    if replacement.flags.intersects(GENERATOR_LIKE) {
        return Err("the replacement is a generator or coroutine".to_owned());
    }
    const SCOPE_FLAGS: CodeFlags = CodeFlags::NEWLOCALS.union(CodeFlags::OPTIMIZED);
    if (original.flags & SCOPE_FLAGS) != (replacement.flags & SCOPE_FLAGS) {
        return Err(format!(
            "the replacement's scope flags {:?} differ from the original's {:?}",
            replacement.flags & SCOPE_FLAGS,
            original.flags & SCOPE_FLAGS
        ));
    }
    if replacement.localsplus_names().len() != replacement.localspluskinds.len() {
        return Err("the replacement's slot names and kinds disagree".to_owned());
    }
    let orig_names = original.localsplus_names();
    let find = |name: &PyStrInterned| orig_names.iter().position(|n| core::ptr::eq(*n, name));
    // Every argument the replacement declares must be bound in the original, or the
    // replacement would start with an unbound argument.
    let nargs = replacement.arg_count as usize
        + replacement.kwonlyarg_count as usize
        + usize::from(replacement.flags.contains(CodeFlags::VARARGS))
        + usize::from(replacement.flags.contains(CodeFlags::VARKEYWORDS));
    for name in replacement.varnames.iter().take(nargs) {
        match find(name) {
            Some(j) if original.localspluskinds[j] & bytecode::CO_FAST_ARG != 0 => {}
            _ => {
                return Err(format!(
                    "the replacement's argument {:?} is not an argument of the original",
                    name.as_str()
                ));
            }
        }
    }
    for name in replacement.freevars.iter() {
        match find(name) {
            Some(j) if original.localspluskinds[j] & CO_FAST_FREE != 0 => {}
            _ => {
                return Err(format!(
                    "the replacement's free variable {:?} is not a free variable of the original",
                    name.as_str()
                ));
            }
        }
    }
    for (i, name) in replacement.localsplus_names().iter().enumerate() {
        if replacement.localspluskinds[i] & CO_FAST_FREE == 0
            && let Some(j) = find(name)
            && original.localspluskinds[j] & CO_FAST_FREE != 0
        {
            return Err(format!(
                "{:?} is a free variable of the original but a local of the replacement",
                name.as_str()
            ));
        }
    }
    Ok(())
}

/// The closure a replacement frame starts with: for each of its free variables, the original
/// frame's cell of the same name (validated to exist).
fn closure_of(orig: &InterpreterFrame, map: &SlotMap) -> Vec<PyCellRef> {
    let slots = orig.localsplus.fastlocals();
    map.cells
        .iter()
        .filter_map(|&j| slots[j].clone()?.downcast::<crate::builtins::function::PyCell>().ok())
        .collect()
}

/// Copy every non-free slot of `orig` into the slot of the same name in `new`. The
/// original keeps its arguments, so that it can still run as written if the replacement
/// asks it to (`EvalFrameHook::runs_as_written`).
fn copy_locals(orig: &InterpreterFrame, new: &mut InterpreterFrame, map: &SlotMap) {
    let src = orig.localsplus.fastlocals();
    let dst = new.localsplus.fastlocals_mut();
    for &(i, j) in &map.moves {
        dst[i] = src[j].clone();
    }
}

/// The function object a replacement frame runs with: the original's when the free
/// variables agree (COPY_FREE_VARS copies the closure from it), none otherwise (the cells
/// taken by name then stay in the free slots).
fn same_free_vars(orig: &PyCode, new_code: &PyCode) -> bool {
    orig.freevars.len() == new_code.freevars.len()
        && orig.freevars.iter().zip(new_code.freevars.iter()).all(|(a, b)| core::ptr::eq(*a, *b))
}

/// Whether a plain Python-to-Python call that did not take a specialized call path should
/// still get a data-stack frame. While a hook is active the specialized calls are off, so every
/// such call reaches `vectorcall_function`, whose exact-argument paths would otherwise allocate
/// a heap frame object per call; the data-stack frame enters through `run_frame_fast`, where the
/// hook sees it. Tracing keeps upstream's heap frames (trace functions hold on to them).
#[inline]
pub(crate) fn prefers_datastack_calls(vm: &VirtualMachine) -> bool {
    vm.eval_hook_mode.get() != EvalHookMode::Disabled && !vm.use_tracing.get()
}

/// Hooked entry of a data-stack frame (`run_frame_fast`).
#[cold]
#[inline(never)]
pub(crate) fn run_frame_fast_hooked(vm: &VirtualMachine, iframe: &mut InterpreterFrame) -> PyResult {
    match consult(vm, iframe, FrameEntry::Call)? {
        Verdict::Default(callees) => {
            let _callees = ModeGuard::for_callees(vm, callees);
            vm.run_frame_fast_default(iframe)
        }
        Verdict::Replace(map, callees) => {
            let _callees = ModeGuard::for_callees(vm, callees);
            run_replacement_fast(vm, iframe, &map)
        }
        Verdict::Return(value) => returned(vm, value),
    }
}

/// The result a plugin computed for a frame, or the `RecursionError` that entering the frame
/// would have raised.
fn returned(vm: &VirtualMachine, value: PyObjectRef) -> PyResult {
    // `enter_iframe`'s check (`check_recursive_call`, private to `vm`).
    if vm.current_recursion_depth() >= vm.recursion_limit.get() {
        return Err(vm.new_recursion_error("maximum recursion depth exceeded ".to_owned()));
    }
    Ok(value)
}

fn run_replacement_fast(vm: &VirtualMachine, orig: &mut InterpreterFrame, map: &SlotMap) -> PyResult {
    let new_code: &Py<PyCode> = &map.replacement;
    let closure = closure_of(orig, map);
    // SAFETY: the original frame's globals, builtins and function are owned by its caller for
    // the whole call, which outlives the replacement frame (released below, before we return).
    let (globals, builtins, func_obj) = unsafe {
        (
            &*(orig.globals() as *const Py<PyDict>),
            &*(orig.builtins() as *const PyObject),
            orig.func_obj().map(|f| &*(f as *const PyObject)),
        )
    };
    let func_obj = func_obj.filter(|_| map.same_free_vars);
    // SAFETY: `new_code` is borrowed from the caller for the whole call; the other pointers as
    // above. The new frame is pushed above the original on the data stack and popped before the
    // original is, so the stack stays LIFO.
    let new = unsafe {
        InterpreterFrame::new_on_datastack(
            new_code,
            globals,
            builtins,
            func_obj,
            orig.locals.clone(),
            &closure,
            vm,
        )
    };
    copy_locals(orig, new, map);
    let result = vm.run_frame_fast_default(new);
    unsafe {
        if let Some((base, size)) = new.release_datastack_frame() {
            vm.datastack_pop_frame(base, size);
        }
    }
    if asks_as_written(vm, &result) {
        return vm.run_frame_fast_default(orig);
    }
    result
}

/// Hooked entry of a heap frame (`run_frame`).
#[cold]
#[inline(never)]
pub(crate) fn run_frame_hooked(vm: &VirtualMachine, frame: crate::frame::FrameObjectRef) -> PyResult {
    match consult(vm, frame.iframe(), FrameEntry::Call)? {
        Verdict::Default(callees) => {
            let _callees = ModeGuard::for_callees(vm, callees);
            vm.run_frame_default(frame)
        }
        Verdict::Replace(map, callees) => {
            let _callees = ModeGuard::for_callees(vm, callees);
            run_replacement_heap(vm, &frame, &map)
        }
        Verdict::Return(value) => returned(vm, value),
    }
}

fn run_replacement_heap(vm: &VirtualMachine, orig: &Py<FrameObject>, map: &SlotMap) -> PyResult {
    let new_code = map.replacement.clone();
    // SAFETY: the original frame has not started and is owned by this call; nothing else
    // reads or writes its slots until it is released by our caller.
    let orig_iframe = unsafe { orig.iframe_mut() };
    let closure = closure_of(orig_iframe, map);
    let locals = if new_code.flags.contains(CodeFlags::NEWLOCALS) {
        None
    } else {
        orig_iframe.locals.get().cloned()
    };
    let func_obj = orig_iframe.func_obj().filter(|_| map.same_free_vars).map(|f| f.to_owned());
    let new = FrameObject::new_ref(
        new_code,
        Scope::new(locals, orig_iframe.globals().to_owned()),
        orig_iframe.builtins().to_owned(),
        &closure,
        func_obj,
        true,
        vm,
    );
    // SAFETY: `new` was just made and has not started.
    copy_locals(orig_iframe, unsafe { new.iframe_mut() }, map);
    let result = vm.run_frame_default(new.clone());
    crate::frame::release_datastack_frame(&new, vm);
    if asks_as_written(vm, &result) {
        return vm.run_frame_default(orig.to_owned());
    }
    result
}

/// Tell the hook that a generator-like frame starts running (notification only).
#[cold]
#[inline(never)]
pub(crate) fn notify_generator_start(vm: &VirtualMachine, iframe: &InterpreterFrame) -> PyResult<()> {
    consult(vm, iframe, FrameEntry::GeneratorStart).map(|_| ())
}

impl core::fmt::Debug for HookSlot {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("HookSlot")
            .field("installed", &self.hook.read().is_some())
            .finish()
    }
}
