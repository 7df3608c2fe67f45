//! A logger's first check of a level (`log.debug(...)` in a model whose logger never logged
//! at that level): `Logger.isEnabledFor` misses its cache and computes the answer under the
//! `logging` module's lock, a `with` over a native lock the simulation does not enter. The
//! frame broke there for good, although every later call finds the answer cached.
//!
//! Before the check is inlined, the cache is filled as the check itself fills it: the standard
//! library's `Logger.isEnabledFor`, called for real, under its own lock. It reads the levels
//! of the logger and its ancestors and the manager's `disable`, and stores what it found: the
//! store the program makes at this very point, made once (the program's own call then finds
//! it). The simulation then reads the cache as on any later call, and guards what it read.
//!
//! Only where that reads nothing the program could have changed in a way the call would see
//! differently: loggers, manager and cache of the standard library's exact classes (a
//! subclass may compute a level otherwise), none of them changed by the simulation so far
//! (the real call would read them as they were before the change), nor the classes.

use rustpython_vm::{AsObject, PyObject, PyObjectRef};

use crate::translate::loaded_modules::loaded_attr;
use crate::translate::state::State;
use crate::translate::values::Var;

/// How many ancestors of a logger the check may read: beyond, the hierarchy is not one the
/// standard library builds (it stops at the root logger).
const MAX_ANCESTORS: usize = 64;

impl State<'_> {
    /// Before `f(*args)` is inlined, when `f` is `logging.Logger.isEnabledFor` and the level is
    /// not cached yet: cache it as the call would.
    pub(super) fn warm_log_level(&mut self, f: &PyObjectRef, args: &[Var]) {
        let vm = self.vm;
        let is_check = loaded_attr("logging", "Logger", vm)
            .and_then(|c| c.get_attr("isEnabledFor", vm).ok())
            .is_some_and(|c| c.is(f));
        if !is_check {
            return;
        }
        let [logger, level] = args else {
            return;
        };
        let (Some(logger), Some(level)) = (known(logger), known(level)) else {
            return;
        };
        if !level.class().is(vm.ctx.types.int_type) {
            return;
        }
        let Some(cache) = self.unchanged_level_cache(&logger) else {
            return;
        };
        let cached = cache
            .downcast_ref::<rustpython_vm::builtins::PyDict>()
            .is_some_and(|d| d.get_item_opt(&*level, vm).ok().flatten().is_some());
        if cached {
            return;
        }
        match f.call((logger, level.clone()), vm) {
            Ok(_) => log::debug!(
                target: crate::log_targets::GUARDS,
                "a logger's level {} cached before its check is simulated",
                level.str(vm).map(|s| s.to_string()).unwrap_or_default()
            ),
            Err(_) => log::debug!(
                target: crate::log_targets::GUARDS,
                "a logger's level check raised when cached ahead; simulated as it is"
            ),
        }
    }

    /// The level cache of `logger` when the check would read nothing but the standard
    /// library's own objects that the simulation has not changed.
    fn unchanged_level_cache(&self, logger: &PyObjectRef) -> Option<PyObjectRef> {
        let vm = self.vm;
        let classes = ["Logger", "RootLogger"].map(|c| loaded_attr("logging", c, vm));
        let standard = |o: &PyObject| classes.iter().flatten().any(|c| o.class().is(c));
        let unchanged = |o: &PyObject| {
            !self.effects.touched(o)
                && o.dict()
                    .is_none_or(|d| !self.effects.touched(d.as_object()))
        };
        let own = |o: &PyObject, name: &str| {
            o.dict()
                .and_then(|d| d.get_item_opt(name, vm).ok().flatten())
        };
        // The manager is a class attribute, which a store into the class would hide.
        let logging_class_changed = self
            .class_writes
            .iter()
            .any(|(c, _, _)| classes.iter().flatten().any(|l| l.is(c)));
        if !standard(logger) || !unchanged(logger) || logging_class_changed {
            return None;
        }
        let cache = own(logger, "_cache")?;
        if !cache.class().is(vm.ctx.types.dict_type) || !unchanged(&cache) {
            return None;
        }
        let manager = own(logger, "manager").or_else(|| {
            loaded_attr("logging", "Logger", vm)?
                .get_attr("manager", vm)
                .ok()
        })?;
        let manager_class = loaded_attr("logging", "Manager", vm)?;
        if !manager.class().is(&manager_class) || !unchanged(&manager) {
            return None;
        }
        let mut at = logger.clone();
        for _ in 0..MAX_ANCESTORS {
            match own(&at, "parent") {
                Some(p) if vm.is_none(&p) => return Some(cache),
                Some(p) if standard(&p) && unchanged(&p) => at = p,
                _ => return None,
            }
        }
        None
    }
}

/// The object a value of the frame's stands for, when it is one.
fn known(v: &Var) -> Option<PyObjectRef> {
    match v {
        Var::Lazy(o, _) | Var::Obj(o) => Some(o.clone()),
        _ => None,
    }
}
