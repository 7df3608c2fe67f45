//! A log record in a traced frame (`logger.info("loss %.4f", loss)`, `logging.warning(...)`
//! with the level enabled): not a break, but an output replayed with the prints and warnings
//! (see `deferred_print`, `deferred_warning`), as TorchDynamo reorders the logging functions
//! it is told about after its graph.
//!
//! The simulation follows `Logger.info` and the level checks inline (a disabled level costs
//! nothing); the call of the standard library's `Logger._log` that an enabled one makes is
//! what the replacement makes again, at the position of the translated frame's instruction
//! that logged, so that `findCaller` names the function and line the program's names. Its
//! arguments are fixed at the call (a tensor as it is then, as for a print). Handlers,
//! filters and formatters run when the replay logs, in program order with the other
//! effects; only the time of the record is later.
//!
//! `stacklevel` counts the frames out from the caller of the logging call, skipping the
//! `logging` module's own: a record naming an inlined function's frame, which does not
//! exist when replayed, breaks; one naming a frame above the translated one counts the
//! replacements between (in a function made for a break). `exc_info` (the exception being
//! handled), `stack_info` and `extra` run as written. A filter may raise out of the replay,
//! so it is not deferred under a handler, nor after a graph that draws or writes back.

use rustpython_vm::{AsObject, PyObjectRef};

use crate::translate::breaks::reason::Kind;
use crate::translate::effect::OutputCall;
use crate::translate::guards::guard::Check;
use crate::translate::side_effects::Effect;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State, unsupported};
use crate::translate::values::Var;

/// The parameters of `Logger._log(self, level, msg, args, exc_info=None, extra=None,
/// stack_info=False, stacklevel=1)`, in order.
const PARAMS: [&str; 8] = [
    "self",
    "level",
    "msg",
    "args",
    "exc_info",
    "extra",
    "stack_info",
    "stacklevel",
];

impl State<'_> {
    /// `f(*args, **kwargs)` when `f` is the standard library's `Logger._log`: recorded to be
    /// replayed (`None`: another function).
    pub(super) fn deferred_log(
        &mut self,
        f: &PyObjectRef,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let Some(logging) = crate::translate::loaded_modules::loaded_module("logging", vm) else {
            return Ok(None);
        };
        let standard = logging
            .get_attr("Logger", vm)
            .and_then(|c| c.get_attr("_log", vm))
            .is_ok_and(|l| l.is(f));
        if !standard {
            return Ok(None);
        }
        if self.under_handler {
            return unsupported(
                Kind::Call,
                "a log record under an exception handler or `with`",
            );
        }
        if self.spec.prints_break {
            return unsupported(
                Kind::Call,
                "a log record in a graph that draws random numbers or writes the caller's \
                 tensors (a filter raising after them would leave what the program never does)",
            );
        }
        let mut bound: [Option<Var>; 8] = Default::default();
        if args.len() > PARAMS.len() {
            return Ok(None);
        }
        for (slot, a) in bound.iter_mut().zip(args) {
            *slot = Some(a.clone());
        }
        for (name, v) in kwargs {
            match PARAMS.iter().position(|p| p == name) {
                Some(i) if bound[i].is_none() => bound[i] = Some(v.clone()),
                _ => return Ok(None),
            }
        }
        let [
            logger,
            level,
            msg,
            items,
            exc_info,
            extra,
            stack_info,
            stacklevel,
        ] = bound;
        let (Some(logger), Some(level), Some(msg), Some(items)) = (logger, level, msg, items)
        else {
            return Ok(None);
        };
        // Unset, or set to what reads nothing of the moment: `exc_info` the exception being
        // handled, `stack_info` the stack, `extra` whatever a formatter makes of it.
        for (what, v) in [
            ("exc_info", &exc_info),
            ("extra", &extra),
            ("stack_info", &stack_info),
        ] {
            if let Some(v) = v {
                let o = self.obj(v)?;
                let unset = vm.is_none(&o) || (what != "extra" && o.is(&vm.ctx.false_value));
                if !unset {
                    return unsupported(Kind::Call, format!("a log record with {what}"));
                }
            }
        }
        let level_obj = self.obj(&level)?;
        if !level_obj.class().is(vm.ctx.types.int_type) {
            return unsupported(Kind::Call, "a log record of a level that is not an int");
        }
        let stacklevel = match stacklevel {
            None => 1,
            Some(v) => {
                let o = self.obj(&v)?;
                match o.class().is(vm.ctx.types.int_type) {
                    true => o.try_to_value::<i64>(vm).unwrap_or(0),
                    false => {
                        return unsupported(Kind::Call, "a log record with a computed stacklevel");
                    }
                }
            }
        };
        let srcfile = self.logging_srcfile(&logging)?;
        // A record naming an inlined frame is replayed naming it (see `located_output`).
        let located = self.log_in_inlined_frame(&logging, &logger, &srcfile, stacklevel)?;
        let replayed_level = match located {
            Some(_) => 1,
            None => self.log_stacklevel(&srcfile, stacklevel)?,
        };
        let msg = self.printed(&msg)?;
        let items = match items {
            Var::Tuple(items) => Var::tuple(
                items
                    .iter()
                    .map(|i| self.printed(i))
                    .collect::<SimResult<Vec<_>>>()?,
            ),
            other => self.printed(&other)?,
        };
        // The logger as the replay loads it: from where the frame read it, or a constant.
        if !matches!(logger, Var::Lazy(..) | Var::Obj(_)) {
            return unsupported(
                Kind::Call,
                format!("a log record of a {} made here", logger.kind()),
            );
        }
        let mut kwargs = Vec::new();
        if replayed_level != 1 {
            kwargs.push((
                "stacklevel".to_owned(),
                Var::Obj(vm.ctx.new_int(replayed_level).into()),
            ));
        }
        let mut args = vec![logger, Var::Obj(level_obj), msg, items];
        let function = match located {
            Some(log_at) => {
                args.push(exc_info.unwrap_or_else(|| Var::Obj(vm.ctx.none())));
                log_at
            }
            None => f.clone(),
        };
        self.effects.output(Effect::Output {
            call: OutputCall::Located {
                function,
                position: self.top_position,
            },
            args,
            kwargs,
        });
        log::debug!(target: crate::log_targets::SIDE_EFFECTS, "a log record deferred to the replacement");
        Ok(Some(Var::Obj(vm.ctx.none())))
    }

    /// `logging._srcfile`, the file whose frames `findCaller` skips (guarded: what the replay
    /// counts depends on it).
    fn logging_srcfile(&mut self, logging: &PyObjectRef) -> SimResult<String> {
        let vm = self.vm;
        let srcfile = logging.get_attr("_srcfile", vm).ok().and_then(|s| {
            s.downcast_ref::<rustpython_vm::builtins::PyStr>()
                .map(|s| s.to_string_lossy().into_owned())
        });
        let Some(srcfile) = srcfile else {
            return unsupported(Kind::Call, "a log record with logging._srcfile unset");
        };
        let source = Source::object(logging.clone()).attr("_srcfile");
        self.guard(&source, Check::EqStr(srcfile.clone()));
        Ok(srcfile)
    }

    /// The `stacklevel` the replay passes for the program's `level`: `findCaller` counts
    /// the frames out from the call, skipping those of the `logging` module's file
    /// (`srcfile`); the inlined frames of other files do not exist when replayed.
    fn log_stacklevel(&self, srcfile: &str, level: i64) -> SimResult<i64> {
        let inlined = self
            .inlined_frames
            .iter()
            .map(|f| f.code.source_path().as_str())
            .filter(|f| *f != srcfile && !is_import_machinery(f))
            .count() as i64;
        self.replayed_stacklevel(level, inlined, "a log record")
    }
}

/// A frame `logging` skips as its own (`_is_internal_frame`): the import machinery's.
fn is_import_machinery(file: &str) -> bool {
    file.contains("importlib") && file.contains("_bootstrap")
}
