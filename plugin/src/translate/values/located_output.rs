//! A warning or a log record that names the frame of an inlined call: `warnings.warn(...)`
//! or `logger.info(...)` in a module's `forward` (inlined in `Module.__call__`), a helper's
//! warning naming its caller with `stacklevel=2`. That frame does not exist when the
//! replacement replays the call, so the replay names it as the call would have found it.
//! A warning: its file, the line it was running, and its globals, where the registry
//! `__warningregistry__` is read (made if missing) and `__name__` names the module, both when
//! replayed, as `warn` reads them; `warn_explicit` then decides as `warn` would (filters, once
//! per location, an error filter raising). A log record: the file, line and function name
//! the standard `Logger.findCaller` returns (the logger's `findCaller` read as Python reads
//! it, and guarded), then `makeRecord` and `handle`, as `Logger._log` calls them.
//!
//! A generator's frame simulated among them, or a frame of the import machinery (which `warn`
//! skips when it counts), keeps the break: the frames counted would not be those simulated.

use rustpython_vm::builtins::{PyCode, PyDict, PyDictRef, PyStrRef, PyTypeRef};
use rustpython_vm::{AsObject, PyObjectRef, PyRef, PyResult, TryFromObject, VirtualMachine};

use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, State, unsupported};
use crate::translate::values::Var;

/// A frame the simulation runs inline, as the program's stack would hold it.
pub struct InlinedFrame {
    pub code: PyRef<PyCode>,
    pub globals: PyRef<PyDict>,
    /// The caller's instruction that made the call: the caller's line while this one runs.
    pub caller_position: crate::bytecode::Position,
}

impl State<'_> {
    /// The function and arguments that replay a warning `level` frames out from the innermost
    /// inlined frame (1: the frame that warned), `level` at most the inlined frames' number.
    pub(super) fn warning_in_inlined_frame(
        &self,
        level: i64,
        message: Var,
        category: Option<Var>,
    ) -> SimResult<(PyObjectRef, Vec<Var>)> {
        let vm = self.vm;
        let frames = &self.inlined_frames;
        let refuse = |why: &str| {
            unsupported(
                Kind::Call,
                format!(
                    "warnings.warn() naming the frame of an inlined call (stacklevel {level}, \
                     {} inlined calls deep){why}",
                    self.depth
                ),
            )
        };
        if frames.len() != self.depth {
            return refuse(", a generator's frame among them");
        }
        let named = frames.len() - level as usize;
        if frames[named..].iter().any(|f| {
            let file = f.code.source_path().as_str();
            file.contains("importlib") && file.contains("_bootstrap")
        }) {
            return refuse(", the import machinery's among them");
        }
        let Some(line) = self.line_of(named) else {
            return refuse(", at an instruction of no line");
        };
        let frame = &frames[named];
        let file = frame.code.source_path().to_owned();
        let function = warn_at(vm, frame.globals.clone(), file);
        let args = vec![
            message,
            category.unwrap_or_else(|| Var::Obj(vm.ctx.none())),
            Var::Obj(vm.ctx.new_int(line).into()),
        ];
        Ok((function, args))
    }

    /// The line inlined frame `index` runs: the innermost's instruction, or its call into the
    /// next.
    fn line_of(&self, index: usize) -> Option<i32> {
        let position = match self.inlined_frames.get(index + 1) {
            Some(inner) => inner.caller_position,
            None => self.position,
        };
        position.line.filter(|l| *l >= 0)
    }

    /// The function that replays a log record of `logger` naming the frame `level` frames out
    /// from the logging call (frames of `srcfile`, logging's own, and of the import machinery
    /// not counted, as `findCaller` counts), where that frame is an inlined one: `None` where
    /// it is not (the translated frame or its callers, which exist when replayed).
    pub(super) fn log_in_inlined_frame(
        &mut self,
        logging: &PyObjectRef,
        logger: &Var,
        srcfile: &str,
        level: i64,
    ) -> SimResult<Option<PyObjectRef>> {
        let vm = self.vm;
        let counted = |f: &InlinedFrame| {
            let file = f.code.source_path().as_str();
            file != srcfile && !(file.contains("importlib") && file.contains("_bootstrap"))
        };
        let mut left = level;
        let mut named = None;
        for (i, f) in self.inlined_frames.iter().enumerate().rev() {
            if counted(f) {
                left -= 1;
                if left == 0 {
                    named = Some(i);
                    break;
                }
            }
        }
        let Some(named) = named.filter(|_| level >= 1) else {
            return Ok(None);
        };
        let refuse = |why: &str| {
            unsupported(
                Kind::Call,
                format!(
                    "a log record naming the frame of an inlined call (stacklevel {level}){why}"
                ),
            )
        };
        if self.inlined_frames.len() != self.depth {
            return refuse(", a generator's frame among them");
        }
        let standard = logging
            .get_attr("Logger", vm)
            .and_then(|c| c.get_attr("findCaller", vm))
            .ok();
        let find_caller = self.attr_of(logger, "findCaller")?;
        let is_standard = match (&find_caller, &standard) {
            (Var::Bound(b), Some(f)) => matches!(&b.0, Var::Obj(o) | Var::Lazy(o, _) if o.is(f)),
            _ => false,
        };
        if !is_standard {
            return refuse(", its logger's findCaller not the standard one");
        }
        let Some(line) = self.line_of(named) else {
            return refuse(", at an instruction of no line");
        };
        let code = &self.inlined_frames[named].code;
        let file: PyObjectRef = code.source_path().to_owned().into();
        let name: PyObjectRef = code.obj_name.to_owned().into();
        Ok(Some(log_at(vm, file, line, name)))
    }
}

/// `log_at(logger, level, msg, args, exc_info)`: what `Logger._log` does once `findCaller`
/// has returned `(filename, lineno, funcname, None)`: `makeRecord` then `handle`.
fn log_at(
    vm: &VirtualMachine,
    filename: PyObjectRef,
    lineno: i32,
    funcname: PyObjectRef,
) -> PyObjectRef {
    vm.new_function(
        "__symtrace_log_at",
        move |logger: PyObjectRef,
              level: PyObjectRef,
              msg: PyObjectRef,
              args: PyObjectRef,
              exc_info: PyObjectRef,
              vm: &VirtualMachine|
              -> PyResult<()> {
            let name = logger.get_attr("name", vm)?;
            let none = vm.ctx.none();
            let args: Vec<PyObjectRef> = vec![
                name,
                level,
                filename.clone(),
                vm.ctx.new_int(lineno).into(),
                msg,
                args,
                exc_info,
                funcname.clone(),
                none.clone(),
                none,
            ];
            let record = vm.call_method(&logger, "makeRecord", args)?;
            vm.call_method(&logger, "handle", (record,))?;
            Ok(())
        },
    )
    .into()
}

/// `warn_at(message, category, lineno)`, for a frame of `filename` whose globals are
/// `globals`: what `warnings.warn` does once it has found the frame it names
/// (`setup_context`'s registry and module, then `warn_explicit`). The globals are held by the
/// function, not passed: the replacement loads as constants only what it can make again.
pub fn warn_at(vm: &VirtualMachine, globals: PyDictRef, filename: PyStrRef) -> PyObjectRef {
    vm.new_function(
        "__symtrace_warn_at",
        move |message: PyObjectRef,
              category: PyObjectRef,
              lineno: usize,
              vm: &VirtualMachine|
              -> PyResult<()> {
            let category = match vm.is_none(&category) {
                true => None,
                false => Some(PyTypeRef::try_from_object(vm, category)?),
            };
            let registry = match globals.get_item("__warningregistry__", vm) {
                Ok(r) => r,
                Err(_) => {
                    let r: PyObjectRef = vm.ctx.new_dict().into();
                    globals.set_item("__warningregistry__", r.clone(), vm)?;
                    r
                }
            };
            let module = globals
                .get_item("__name__", vm)
                .unwrap_or_else(|_| vm.new_pyobj("<string>"));
            rustpython_vm::warn::warn_explicit(
                category,
                message,
                filename.clone(),
                lineno,
                Some(module),
                registry,
                None,
                None,
                vm,
            )
        },
    )
    .into()
}
