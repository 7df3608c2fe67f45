//! The translator's policy for a frame about to run: the cache of translations on the code
//! object (entries checked in order, guards first), recompiles up to a limit, fallbacks,
//! skips and statistics; what it does is logged and told to `explain`.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rustpython_vm::builtins::{PyCode, PyWeak};
use rustpython_vm::eval_hook::{FrameDecision, FrameView};
use rustpython_vm::{AsObject, Py, PyRef, PyResult, VirtualMachine};

use crate::translate::breaks::BreakPolicy;
use crate::translate::breaks::ResumeCache;
use crate::translate::cache_entry::{Entry, MAX_ENTRIES, Miss, in_bucket_of, sets_in_bucket_of};
use crate::translate::convert_frame::translate;
use crate::translate::direct_call::Instead;
use crate::translate::explain::{self, BreakRecord, wants_fullgraph};
use crate::translate::guards::guard::GuardSet;
use crate::translate::guards::program::GuardReads;
use crate::translate::policy::{Dynamic, Specialization, Stance, StanceCell};
use crate::translate::state::Kind;

#[derive(Clone, Debug)]
pub struct Options {
    /// Every fallback raises.
    pub strict: bool,
    /// Translate frames even when their graph is empty.
    pub trace_all: bool,
    pub recompile_limit: usize,
    /// Calls without a graph after which a code object is skipped for good.
    pub skip_after: usize,
    /// Ops a loop's body must capture before a break for the loop to be split (see
    /// `breaks::loop_split`): fewer, and the frame runs as written rather than paying a call per
    /// iteration for a tiny graph.
    pub min_graph_size: usize,
    /// Which tensor sizes translations treat as dynamic.
    pub dynamic: Dynamic,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            strict: false,
            trace_all: false,
            recompile_limit: 8,
            skip_after: 2,
            min_graph_size: 3,
            dynamic: Dynamic::Auto,
        }
    }
}

/// What the translator counts across code objects. Cache hits are counted by each code
/// object's cache, under the lock a hit holds anyway (two atomic operations fewer per call),
/// and summed when read ([`Translator::stats`]).
#[derive(Default)]
pub struct Stats {
    pub translations: AtomicU64,
    /// Direct calls whose graph failed: the frame ran after all.
    direct_refused: AtomicU64,
    pub cache_misses: AtomicU64,
    pub recompiles: AtomicU64,
    pub fallbacks: AtomicU64,
}

impl Stats {
    fn reset(&self) {
        for c in [
            &self.translations,
            &self.direct_refused,
            &self.cache_misses,
            &self.recompiles,
            &self.fallbacks,
        ] {
            c.store(0, Ordering::Relaxed);
        }
    }
}

impl CodeState {
    /// Drop the entries (and the failed translations' guards) that lost an object they
    /// compare by identity: they can never fit again, and would count toward the recompile
    /// limit (one per class made by a factory, through `Module.__call__`) and keep their
    /// graphs. `missed` holds each entry's miss, in order.
    fn drop_lost_entries(&mut self, missed: &mut Vec<Miss>, code: &Py<PyCode>) {
        let lost: Vec<bool> = self
            .entries
            .iter()
            .map(|e| e.guards.lost_an_object())
            .collect();
        let dropped = lost.iter().filter(|l| **l).count();
        if dropped > 0 {
            let mut keep = lost.iter().map(|l| !l);
            self.entries.retain(|_| keep.next().unwrap_or(true));
            let mut keep = lost.iter().map(|l| !l);
            missed.retain(|_| keep.next().unwrap_or(true));
            self.limit_said = false;
            log::info!(target: crate::log_targets::RECOMPILES, "{}: {dropped} entries dropped: an object their guards compare by identity was collected", describe(code));
        }
        self.as_written.retain(|g| !g.lost_an_object());
    }
}

/// What a code object's hook slot holds.
#[derive(Default)]
pub struct CodeCache {
    state: Mutex<CodeState>,
}

#[derive(Default)]
struct CodeState {
    generation: usize,
    entries: Vec<Entry>,
    /// Beside entries, the guards of translations that failed: a call they fit runs as
    /// written at once. Without them, a function whose calls of one kind translate and of
    /// another fail (`Module.__call__` of a small `Sequential`, then of a block too long to
    /// simulate) translated again, and failed again, on every call of the second kind:
    /// four times slower than without the plugin. Running as written is always right, so
    /// these guards decide only what is tried again.
    as_written: Vec<GuardSet>,
    calls_without_graph: usize,
    /// A break before any tensor work proved to capture nothing after it either: translations
    /// no longer break so (see `BreakPolicy::after_nothing`).
    nothing_to_resume: bool,
    /// The recompile limit was reached and said so: it is said once per code object.
    limit_said: bool,
    /// What its next translation may leave unspecialized (automatic dynamic).
    spec: Specialization,
    /// Calls an entry fitted.
    hits: u64,
    /// Of those, the calls whose result the hook computed itself or tried to
    /// (`Stats::direct_refused` counts the tries that failed).
    direct_calls: u64,
}

static GRAPH_NAMES: AtomicUsize = AtomicUsize::new(0);

pub struct Translator {
    pub options: Options,
    pub stats: Stats,
    /// What a recompile does (`symtrace.set_stance`).
    pub stance: StanceCell,
    slot: usize,
    generation: AtomicUsize,
    /// Code objects skipped or cached, so that `reset` can find them: held weakly (a code
    /// object made by `exec`, or in a test, goes when its function goes).
    touched: Mutex<Vec<PyRef<PyWeak>>>,
    /// The standard library's directory: its frames are never traced.
    stdlib: Option<String>,
    resumes: ResumeCache,
}

impl Translator {
    pub fn new(options: Options, slot: usize, stdlib: Option<String>) -> Self {
        Self {
            options,
            stats: Stats::default(),
            stance: StanceCell::default(),
            slot,
            generation: AtomicUsize::new(0),
            touched: Mutex::new(Vec::new()),
            stdlib,
            resumes: ResumeCache::default(),
        }
    }

    /// Drop every translation and every skip.
    pub fn reset(&self) {
        self.generation.fetch_add(1, Ordering::Relaxed);
        let codes = std::mem::take(&mut *self.touched.lock().unwrap_or_else(|e| e.into_inner()));
        for c in codes.iter().filter_map(upgrade_code) {
            if !crate::translate::frame_disabled::frames_of_code_disabled(&c) {
                c.set_eval_hook_skipped(false);
            }
            c.set_hook_extra(self.slot, None);
        }
        self.stats.reset();
    }

    /// The counters, by name: `translations`, `cache_hits`, `direct_hits` (hits whose result
    /// the hook returned itself, with no replacement frame: `direct_call`), `cache_misses`,
    /// `recompiles`, `fallbacks`.
    pub fn stats(&self) -> [(&'static str, u64); 6] {
        let generation = self.generation.load(Ordering::Relaxed);
        let (mut hits, mut direct_calls) = (0, 0);
        let codes: Vec<PyRef<PyCode>> = self
            .touched
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter_map(upgrade_code)
            .collect();
        for cache in codes.iter().filter_map(|code| self.cached(code)) {
            let state = cache.state.lock().unwrap_or_else(|e| e.into_inner());
            if state.generation == generation {
                hits += state.hits;
                direct_calls += state.direct_calls;
            }
        }
        let count = |c: &AtomicU64| c.load(Ordering::Relaxed);
        [
            ("translations", count(&self.stats.translations)),
            ("cache_hits", hits),
            (
                "direct_hits",
                direct_calls.saturating_sub(count(&self.stats.direct_refused)),
            ),
            ("cache_misses", count(&self.stats.cache_misses)),
            ("recompiles", count(&self.stats.recompiles)),
            ("fallbacks", count(&self.stats.fallbacks)),
        ]
    }

    /// Code of the program's own, not of the standard library (frozen or on disk).
    fn is_user_code(&self, code: &Py<PyCode>) -> bool {
        let path = code.source_path().as_str();
        // Frozen standard-library modules are named by module, without a directory or `.py`.
        let frozen = path.starts_with("<frozen")
            || (!path.starts_with('<') && !path.contains('/') && !path.ends_with(".py"));
        !frozen && !self.stdlib.as_deref().is_some_and(|s| path.starts_with(s))
    }

    fn traceable(&self, code: &Py<PyCode>) -> bool {
        use rustpython_vm::bytecode::CodeFlags;
        if !self.is_user_code(code) {
            return false;
        }
        // Module and class bodies run once; generators are not translated (yet).
        code.flags.contains(CodeFlags::OPTIMIZED)
            && !code.flags.intersects(
                CodeFlags::GENERATOR
                    | CodeFlags::COROUTINE
                    | CodeFlags::ASYNC_GENERATOR
                    | CodeFlags::ITERABLE_COROUTINE,
            )
    }

    /// A generator function's frame starts running as written (its frames are never
    /// replaced; one consumed inside a traced function is simulated with it instead). Said
    /// once per code object on `symtrace::graph_breaks`, and in `explain()` each time.
    pub fn generator_started(&self, frame: &FrameView<'_>, vm: &VirtualMachine) {
        let code = frame.code();
        if !self.is_user_code(code)
            || !code
                .flags
                .contains(rustpython_vm::bytecode::CodeFlags::GENERATOR)
        {
            code.set_eval_hook_skipped(true);
            return;
        }
        const REASON: &str = "a generator function runs as written: its frames are not replaced";
        const HINT: &str = "consume it inside a traced function (a for loop, list(), sum(), yield from): it is simulated there";
        let location = describe(code);
        if self.cached(code).is_none() {
            self.new_cache(code, vm);
            log::info!(target: crate::log_targets::GRAPH_BREAKS, "{}: [GB-GENERATOR] {REASON} (hint: {HINT})", location);
        }
        explain::record_break(|| BreakRecord {
            function: code.qualname.as_str().to_owned(),
            reason: REASON.to_owned(),
            kind: Kind::Call.name(),
            location: location.clone(),
            ops_left: Vec::new(),
            guards_left: Vec::new(),
            id: "GB-GENERATOR".to_owned(),
            hint: HINT.to_owned(),
            resumed: false,
        });
    }

    fn cached(&self, code: &Py<PyCode>) -> Option<Arc<CodeCache>> {
        code.hook_extra(self.slot)
            .and_then(|any| any.downcast::<CodeCache>().ok())
    }

    fn new_cache(&self, code: &Py<PyCode>, vm: &VirtualMachine) -> Arc<CodeCache> {
        let c = Arc::new(CodeCache::default());
        code.set_hook_extra(self.slot, Some(c.clone()));
        self.remember(code, vm);
        c
    }

    fn skip(&self, code: &Py<PyCode>, vm: &VirtualMachine) -> FrameDecision {
        self.remember(code, vm);
        FrameDecision::skip_code()
    }

    /// Note `code` in `touched`, letting go of the code objects gone since (each time the
    /// list reaches a power of two, from 64 on: a program that makes code objects in a loop
    /// keeps as many as are alive, not all it ever made).
    fn remember(&self, code: &Py<PyCode>, vm: &VirtualMachine) {
        let mut touched = self.touched.lock().unwrap_or_else(|e| e.into_inner());
        if touched.len() >= 64 && touched.len().is_power_of_two() {
            touched.retain(|w| !w.is_dead());
        }
        // A code object can always be referred to weakly; if not, `reset` misses it.
        if let Ok(w) = code.as_object().downgrade(None, vm) {
            touched.push(w);
        }
    }

    #[allow(clippy::result_large_err)]
    pub fn on_frame(&self, frame: &FrameView<'_>, vm: &VirtualMachine) -> PyResult<FrameDecision> {
        let code = frame.code();
        if self.stance.get() == Stance::ForceEager {
            return Ok(FrameDecision::run_default());
        }
        // Under sys.settrace or sys.setprofile the program observes every line and call of its
        // frames: they run as written.
        if vm.use_tracing.get() {
            return Ok(FrameDecision::run_default());
        }
        // A code object with a cache passed the traceability test when the cache was made.
        let cache = match self.cached(code) {
            Some(c) => c,
            None if self.traceable(code) => self.new_cache(code, vm),
            None => return Ok(self.skip(code, vm)),
        };
        let mut state = cache.state.lock().unwrap_or_else(|e| e.into_inner());
        let generation = self.generation.load(Ordering::Relaxed);
        if state.generation != generation {
            *state = CodeState {
                generation,
                ..CodeState::default()
            };
        }
        // The guard each entry failed on (None: the guards changed while they were checked).
        let mut missed: Vec<Miss> = Vec::new();
        let mut hit = None;
        let mut reads = GuardReads::default();
        for (k, entry) in state.entries.iter().enumerate() {
            match entry.fits(frame, vm, &mut reads) {
                Ok(()) => {
                    hit = Some(k);
                    break;
                }
                Err(g) => missed.push(g),
            }
        }
        if let Some(k) = hit.filter(|k| state.entries[*k].breaks_for_nothing()) {
            // Translated again, it fails whole: the frame runs as written, then is skipped.
            state.entries.remove(k);
            state.nothing_to_resume = true;
            log::info!(target: crate::log_targets::GRAPH_BREAKS, "{}: its break before any tensor work is dropped: nothing is captured after it either", describe(code));
            // The call fitted an entry: no recompile, and under a stance that refuses one
            // the frame simply runs as written.
            if self.stance.get() != Stance::Default {
                return Ok(FrameDecision::run_default());
            }
            hit = None;
            missed.clear();
        }
        if let Some(mut k) = hit {
            state.hits += 1;
            if k > 0 {
                // Most recently used first (as Dynamo orders its cache entries): a counter's
                // first entry, specialized to its first value, is not checked and failed on
                // every later call before the entry that fits.
                state.entries[..=k].rotate_right(1);
                k = 0;
            }
            let entry = &state.entries[k];
            let Some(direct) = entry.direct.clone() else {
                return Ok(FrameDecision::replace(entry.code.clone()));
            };
            let inputs = direct.inputs(entry.guards.program(frame, vm), &reads);
            state.direct_calls += 1;
            // Another thread calling this function does not wait for this one's graph.
            drop(state);
            let refused = |instead| {
                self.stats.direct_refused.fetch_add(1, Ordering::Relaxed);
                instead
            };
            return Ok(match direct.run(frame, inputs.as_deref(), vm) {
                Ok(result) => FrameDecision::returns(result),
                Err(Instead::Original) => refused(FrameDecision::run_default()),
                Err(Instead::Replacement) => {
                    refused(FrameDecision::replace(direct.replacement.clone()))
                }
            });
        }
        if hit.is_none() {
            state.drop_lost_entries(&mut missed, code);
        }
        if state
            .as_written
            .iter()
            .any(|failed| failed.check_reading(frame, vm, &mut reads).is_ok())
        {
            self.stats.fallbacks.fetch_add(1, Ordering::Relaxed);
            return Ok(FrameDecision::run_default());
        }
        let what = describe(code);
        if !missed.is_empty() {
            // Why each entry did not fit, with the value its failing guard saw: made only
            // when someone reads it (a call past the limit pays for none of it).
            let failed = || {
                missed
                    .iter()
                    .enumerate()
                    .map(|(k, g)| {
                        format!(
                            "entry {}: {}",
                            k + 1,
                            match g {
                                Miss::Guard(g) => g.failure(frame, vm),
                                Miss::GuardsChanged =>
                                    "the guards changed while they were checked".to_owned(),
                                Miss::Shapes(why) => format!("its graph is dynamic, and {why}"),
                            }
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            self.stats.cache_misses.fetch_add(1, Ordering::Relaxed);
            explain::record_recompile(|| format!("{what}: {}", failed()));
            match self.stance.get() {
                Stance::FailOnRecompile => {
                    return Err(vm.new_runtime_error(format!(
                        "symtrace: {what} would translate again (stance fail_on_recompile): {}",
                        failed()
                    )));
                }
                Stance::EagerOnRecompile => {
                    self.stats.fallbacks.fetch_add(1, Ordering::Relaxed);
                    return Ok(FrameDecision::run_default());
                }
                _ => {}
            }
            // Failed translations count too: remembered up to the limit, each new miss past
            // it would translate, and fail, again on every call (a helper given a new string
            // each time).
            let failures = sets_in_bucket_of(state.as_written.iter(), frame);
            if in_bucket_of(&state.entries, frame) >= self.options.recompile_limit
                || failures >= self.options.recompile_limit
                || state.entries.len() >= MAX_ENTRIES
            {
                self.stats.fallbacks.fetch_add(1, Ordering::Relaxed);
                if !std::mem::replace(&mut state.limit_said, true) {
                    log::warn!(target: crate::log_targets::RECOMPILES, "{what}: recompile limit ({}) reached; calls that no entry fits run as written from now on ({})", self.options.recompile_limit, failed());
                }
                return Ok(FrameDecision::run_default());
            }
            self.stats.recompiles.fetch_add(1, Ordering::Relaxed);
            log::info!(target: crate::log_targets::RECOMPILES, "{what}: recompiling (entry {} of {}): {}", in_bucket_of(&state.entries, frame) + 1, self.options.recompile_limit, failed());
            let state = &mut *state;
            let sets: Vec<&GuardSet> = state.entries.iter().map(|e| &e.guards).collect();
            crate::translate::misses::learn(&mut state.spec, &sets, frame, vm);
        }
        let name = format!(
            "__symtrace_graph_{}",
            GRAPH_NAMES.fetch_add(1, Ordering::Relaxed)
        );
        // Under strict or fullgraph, what cannot be simulated fails the frame: no break.
        let policy = BreakPolicy {
            resumes: &self.resumes,
            min_graph_size: self.options.min_graph_size,
            after_nothing: !state.nothing_to_resume,
        };
        let breaks = (!self.options.strict && !wants_fullgraph(code)).then_some(&policy);
        if state.spec.dynamic != self.options.dynamic {
            state.spec.dynamic = self.options.dynamic;
        }
        state.spec.frames_between = self.resumes.frames_between(code);
        match translate(
            frame,
            vm,
            &name,
            self.options.trace_all,
            breaks,
            &state.spec,
        )
        .and_then(|t| Entry::install(t, frame, &name, vm))
        {
            Ok(entry) => {
                self.stats.translations.fetch_add(1, Ordering::Relaxed);
                let code_ref = entry.code.clone();
                if log::log_enabled!(target: crate::log_targets::GRAPH, log::Level::Debug) {
                    log::debug!(target: crate::log_targets::GRAPH, "{what}: captured\n{}", entry.graph);
                }
                if log::log_enabled!(target: crate::log_targets::GUARDS, log::Level::Debug) {
                    let checks: String = entry
                        .graph
                        .checks
                        .iter()
                        .map(|c| format!("    size check: {c}\n"))
                        .collect();
                    log::debug!(target: crate::log_targets::GUARDS, "{what}: guards\n{}{checks}", entry.guards);
                }
                state.calls_without_graph = 0;
                state.entries.push(entry);
                Ok(FrameDecision::replace(code_ref))
            }
            Err(f) => {
                self.stats.fallbacks.fetch_add(1, Ordering::Relaxed);
                let location = f
                    .why
                    .location
                    .as_ref()
                    .map_or_else(|| what.clone(), |l| format!("{}:{}", l.file, l.line));
                // A frame without tensor work broke nothing, nor did one given no tensor
                // that stopped before meeting any (a class's generated `__init__`, a
                // decorator): said at debug level, so that the breaks a user looks for are
                // not lost among every helper that ran (`explain` still lists the latter).
                let holds_tensor = crate::translate::convert_frame::holds_tensor(frame);
                let level = match f.empty || (f.tensorless && !holds_tensor) {
                    true => log::Level::Debug,
                    false => log::Level::Info,
                };
                log::log!(target: crate::log_targets::GRAPH_BREAKS, level, "{what}: runs as written: {} at {location}", f.why.message);
                if !f.empty {
                    explain::record_break(|| BreakRecord {
                        function: code.qualname.as_str().to_owned(),
                        reason: f.why.message.clone(),
                        kind: f.why.kind.name(),
                        location: location.clone(),
                        ops_left: f.ops_left.clone(),
                        guards_left: f.guards.iter().map(ToString::to_string).collect(),
                        id: "GB-FRAME".to_owned(),
                        hint: format!("the whole frame runs as written; {}", f.why.hint),
                        resumed: false,
                    });
                }
                // A frame given no tensor that met none has nothing to capture, strict or
                // not (a decorator, a helper that returns a function it made).
                let nothing = f.tensorless && !holds_tensor;
                if (self.options.strict || wants_fullgraph(code)) && !nothing {
                    return Err(vm.new_runtime_error(format!(
                        "symtrace: {} cannot be captured whole: {} ({location})",
                        code.qualname.as_str(),
                        f.why.message
                    )));
                }
                // A frame given a tensor that it did no work on under these guards (`return
                // x if m is None else x * m`, first called with None) may capture something
                // under others: calls that fit them run as written, the code is not skipped.
                if f.empty
                    && holds_tensor
                    && !f.guards.is_empty()
                    && sets_in_bucket_of(state.as_written.iter(), frame)
                        < self.options.recompile_limit
                {
                    log::info!(target: crate::log_targets::RECOMPILES, "{what}: calls that fit the guards of this translation (nothing to capture) run as written from now on");
                    let mut failed = GuardSet::new(f.guards);
                    failed.weaken(vm);
                    state.as_written.push(failed);
                    return Ok(FrameDecision::run_default());
                }
                // A call that met no tensor at all (no input, no op) is not worth a second
                // look: its code is skipped at once, as Dynamo skips a frame without tensors.
                state.calls_without_graph += match f.tensorless && !holds_tensor {
                    true => self.options.skip_after,
                    false => 1,
                };
                if state.entries.is_empty() && state.calls_without_graph >= self.options.skip_after
                {
                    drop(state);
                    return Ok(self.skip(code, vm));
                }
                // With entries, the code is never skipped: remember the failure instead (a
                // translation problem of our own, or no guard at all, is not remembered).
                if !state.entries.is_empty()
                    && !f.guards.is_empty()
                    && f.why.kind != Kind::Internal
                    && sets_in_bucket_of(state.as_written.iter(), frame)
                        < self.options.recompile_limit
                {
                    log::info!(target: crate::log_targets::RECOMPILES, "{what}: calls that fit the guards of this failed translation run as written from now on");
                    let mut failed = GuardSet::new(f.guards);
                    failed.weaken(vm);
                    state.as_written.push(failed);
                }
                Ok(FrameDecision::run_default())
            }
        }
    }
}

fn upgrade_code(weak: &PyRef<PyWeak>) -> Option<PyRef<PyCode>> {
    weak.upgrade()?.downcast::<PyCode>().ok()
}

pub(super) fn describe(code: &Py<PyCode>) -> String {
    format!(
        "{} ({}:{})",
        code.qualname.as_str(),
        code.source_path().as_str(),
        code.first_line_number.map_or(0, |l| l.get())
    )
}
