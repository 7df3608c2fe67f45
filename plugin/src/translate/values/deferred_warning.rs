//! `warnings.warn(message, category, stacklevel)` in a traced frame: not a break, but an
//! output replayed with the prints (see `deferred_print`), as TorchDynamo replays a constant
//! warning after its graph.
//!
//! What a warning does (shown, once per location, ignored, raised by an `error` filter)
//! depends on the filters, the registry of the module it names and the line it names, all
//! read when the replay warns; deferring it changes only when that happens. That is sound
//! where nothing between the two could tell:
//! - the message is text fixed at the call (a str, or text formatted from numbers), the
//!   category a warning class of the interpreter's own (making one runs no Python code);
//! - the functions that show it are the standard library's (guarded, as the user may
//!   replace `showwarning` and `formatwarning`), writing to a `sys.stderr` of a native
//!   class: no code of the user's runs later than the program runs it;
//! - the frame it names is known. `stacklevel` counts frames out from the warning's. The replay
//!   is made at the position of the translated frame's instruction that warned (itself, or
//!   by calling the inlined function that did), its `stacklevel` lowered by the inlined
//!   frames between; a warning naming an inlined frame is replayed naming it explicitly
//!   (see `located_output`).
//!
//! An `error` filter makes the replay raise, as a failed print's write does: not deferred
//! under a handler, and not after a graph that draws or writes back a caller's tensor.

use rustpython_vm::builtins::{PyStr, PyType};
use rustpython_vm::types::PyTypeFlags;
use rustpython_vm::{AsObject, PyObjectRef};

use crate::translate::breaks::reason::Kind;
use crate::translate::effect::OutputCall;
use crate::translate::guards::guard::Check;
use crate::translate::side_effects::Effect;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::values::Var;

/// The hooks of the `warnings` module a warning goes through, which a program may replace.
const HOOKS: &[&str] = &[
    "showwarning",
    "formatwarning",
    "_showwarnmsg",
    "_showwarnmsg_impl",
    "_formatwarnmsg",
    "_formatwarnmsg_impl",
];

impl State<'_> {
    /// `warn(message, category=None, stacklevel=1)` of `_warnings`, recorded to be replayed.
    pub(super) fn deferred_warning(
        &mut self,
        warn: &PyObjectRef,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Var> {
        let vm = self.vm;
        if self.under_handler {
            return unsupported(
                Kind::Call,
                "warnings.warn() under an exception handler or `with`",
            );
        }
        if self.spec.prints_break {
            return unsupported(
                Kind::Call,
                "warnings.warn() in a graph that draws random numbers or writes the caller's \
                 tensors (an error filter raising after them would leave what the program never does)",
            );
        }
        if args.len() > 3 {
            return unsupported(Kind::Call, "warnings.warn() with a source");
        }
        let mut bound: [Option<Var>; 3] =
            [args.first(), args.get(1), args.get(2)].map(|a| a.cloned());
        for (name, v) in kwargs {
            let slot = match name.as_str() {
                "message" => 0,
                "category" => 1,
                "stacklevel" => 2,
                _ => return unsupported(Kind::Call, format!("warnings.warn() with {name}=")),
            };
            bound[slot] = Some(v.clone());
        }
        let [message, category, level] = bound;
        let Some(message) = message else {
            return unsupported(
                Kind::Raises,
                "warnings.warn() without a message (TypeError)",
            );
        };
        let message = self.warning_text(&message)?;
        let category = match category.filter(|c| !matches!(c, Var::Obj(o) if vm.is_none(o))) {
            Some(c) => Some(self.native_warning_class(&c)?),
            None => None,
        };
        let level = match level {
            None => 1,
            Some(Var::Obj(o)) if o.class().is(vm.ctx.types.int_type) => {
                o.try_to_value::<i64>(vm).unwrap_or(0)
            }
            Some(_) => {
                return unsupported(Kind::Call, "warnings.warn() with a computed stacklevel");
            }
        };
        let inlined = self.depth as i64;
        // A frame of an inlined call, named explicitly (see `located_output`).
        let (function, args, kwargs) = if (1..=inlined).contains(&level) {
            let (function, args) = self.warning_in_inlined_frame(level, message, category)?;
            (function, args, Vec::new())
        } else {
            let replayed_level = self.replayed_stacklevel(level, inlined, "warnings.warn()")?;
            let mut replayed: Vec<_> = category
                .map(|c| ("category".to_owned(), c))
                .into_iter()
                .collect();
            if level > 1 || inlined > 0 {
                let replayed_level = vm.ctx.new_int(replayed_level).into();
                replayed.push(("stacklevel".to_owned(), Var::Obj(replayed_level)));
            }
            (warn.clone(), vec![message], replayed)
        };
        self.standard_warning_hooks()?;
        self.sys_stream_is_native("stderr")?;
        self.effects.output(Effect::Output {
            call: OutputCall::Located {
                function,
                position: self.top_position,
            },
            args,
            kwargs,
        });
        Ok(Var::Obj(vm.ctx.none()))
    }

    /// A message whose text is fixed now: a str (read from the frame: its type guarded, its
    /// value loaded when replayed), or text formatted here.
    fn warning_text(&mut self, v: &Var) -> SimResult<Var> {
        let str_type = self.vm.ctx.types.str_type;
        match v {
            Var::Obj(o) if o.class().is(str_type) => Ok(v.clone()),
            Var::Text(_) => Ok(v.clone()),
            Var::Lazy(o, source) if o.class().is(str_type) => {
                self.guard(source, Check::type_is(str_type.to_owned()));
                Ok(v.clone())
            }
            other => unsupported(
                Kind::Call,
                format!("warnings.warn() of a {} (not text)", other.kind()),
            ),
        }
    }

    /// A category: a `Warning` class of the interpreter's own (its identity guarded).
    fn native_warning_class(&mut self, v: &Var) -> SimResult<Var> {
        let vm = self.vm;
        let o = self.obj(v)?;
        match o.downcast_ref::<PyType>() {
            Some(c)
                if !c.slots.flags.has_feature(PyTypeFlags::HEAPTYPE)
                    && c.fast_issubclass(vm.ctx.exceptions.warning) =>
            {
                Ok(Var::Obj(o))
            }
            _ => unsupported(
                Kind::Call,
                "warnings.warn() of a category that is not a builtin Warning class",
            ),
        }
    }

    /// The hooks of `sys.modules["warnings"]` are the standard library's, and stay so.
    fn standard_warning_hooks(&mut self) -> SimResult<()> {
        let vm = self.vm;
        let sys = vm.sys_module.clone();
        let missing = || Unsupported::new(Kind::Call, "warnings.warn() with no warnings module");
        let modules = sys.get_attr("modules", vm).map_err(|_| missing())?;
        let module = modules.get_item("warnings", vm).map_err(|_| missing())?;
        let source = Source::object(sys.into()).attr("modules").key("warnings");
        self.guard(&source, Check::is(module.clone()));
        for name in HOOKS {
            let hook = module.get_attr(*name, vm).map_err(|_| missing())?;
            if !is_standard(&hook, vm) {
                return unsupported(
                    Kind::Call,
                    format!("warnings.warn() with warnings.{name} replaced"),
                );
            }
            self.guard(&Source::object(module.clone()).attr(name), Check::is(hook));
        }
        Ok(())
    }
}

/// A function of the `warnings` modules, or one written in Rust.
fn is_standard(f: &PyObjectRef, vm: &rustpython_vm::VirtualMachine) -> bool {
    if f.class().is(vm.ctx.types.builtin_function_or_method_type) {
        return true;
    }
    f.class().is(vm.ctx.types.function_type)
        && f.get_attr("__module__", vm).ok().is_some_and(|m| {
            m.downcast_ref::<PyStr>()
                .is_some_and(|m| matches!(m.to_str(), Some("warnings" | "_py_warnings")))
        })
}
