//! `print(...)` in a traced frame: not a break, but an effect on the program's output,
//! replayed by the replacement in program order with the other side effects (after the graph,
//! before a breaking instruction), as TorchDynamo's reorderable logging functions are, but
//! for the plain `print` users leave in a forward pass.
//!
//! Deferring it is sound only if the print, made later, writes what it would have written
//! and does nothing the simulation should have seen. So every argument is a value whose text
//! is the interpreter's own and cannot change before the replay: a constant, a number the
//! replacement computes again, an int, float, str, bool or None read from the frame (its
//! type guarded, its value loaded when replayed: no specialization on a counter it prints),
//! a tensor (its value at the print, a graph output: a later update in place does not show),
//! and tuples, lists and dicts of these (a list or dict copied as it is at the print). The
//! stream is the interpreter's own: `sys.stdout` (or `file=`) of a native class, guarded,
//! and not rebound during the call; so writing to it runs none of the user's code. A write
//! that fails raises from the replay as it would from the print, with the effects before it
//! made and none after, so a print under a handler (`try`, `with`) is not deferred: the
//! handler would not see the failure. Nor where the graph draws random numbers or writes
//! back a caller's tensor before it (`convert_frame::draws_only_before_sure_replays`): the
//! frame is translated again with prints breaking (`Specialization::prints_break`).

use rustpython_vm::builtins::PyStr;
use rustpython_vm::types::PyTypeFlags;
use rustpython_vm::{AsObject, PyObjectRef, PyPayload};

use crate::graph::recorder;
use crate::tensor::PyTensor;
use crate::translate::breaks::reason::Kind;
use crate::translate::effect::OutputCall;
use crate::translate::guards::guard::Check;
use crate::translate::side_effects::Effect;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::values::{Var, is_plain};

impl State<'_> {
    /// `print(*args, sep=, end=, file=, flush=)`, recorded to be replayed.
    pub(super) fn deferred_print(
        &mut self,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> SimResult<Var> {
        let vm = self.vm;
        // A write can fail (a closed stream, a character its encoding lacks): replayed, the
        // failure is raised after the graph, where no handler of the simulated code sees it.
        if self.under_handler {
            return unsupported(Kind::Call, "print() under an exception handler or `with`");
        }
        if self.spec.prints_break {
            return unsupported(
                Kind::Call,
                "print() in a graph that draws random numbers or writes the caller's tensors \
                 (a write that failed after them would leave what the program never does)",
            );
        }
        let mut to_file = false;
        let mut kept_kwargs = Vec::with_capacity(kwargs.len());
        for (name, v) in kwargs {
            let v = match name.as_str() {
                "sep" | "end" => match &v {
                    Var::Obj(o) if o.downcast_ref::<PyStr>().is_some() || vm.is_none(o) => v,
                    _ => return unsupported(Kind::Call, "print() with a computed sep or end"),
                },
                "flush" => self.printed(&v)?,
                "file" => {
                    to_file = true;
                    self.native_stream(&v)?
                }
                _ => return unsupported(Kind::Call, format!("print() with {name}=")),
            };
            kept_kwargs.push((name, v));
        }
        if !to_file {
            self.sys_stream_is_native("stdout")?;
        }
        let args = args
            .iter()
            .map(|a| self.printed(a))
            .collect::<SimResult<Vec<_>>>()?;
        self.effects.output(Effect::Output {
            call: OutputCall::Print,
            args,
            kwargs: kept_kwargs,
        });
        Ok(Var::Obj(vm.ctx.none()))
    }

    /// `sys.<name>` (`stdout`, `stderr`) at entry is of a native class, and the call did
    /// not rebind it.
    pub(super) fn sys_stream_is_native(&mut self, name: &'static str) -> SimResult<()> {
        let vm = self.vm;
        let sys = vm.sys_module.clone();
        if self.effects.touched(sys.dict().as_object()) || self.effects.touched(sys.as_object()) {
            return unsupported(Kind::Call, "an output after the call changed sys");
        }
        let stream = sys
            .get_attr(name, vm)
            .map_err(|_| Unsupported::new(Kind::Call, format!("an output without sys.{name}")))?;
        let source = Source::object(sys.into()).attr(name);
        self.native_class(&stream, &source)
    }

    /// A `file=` argument: a stream of a native class read from the frame.
    fn native_stream(&mut self, v: &Var) -> SimResult<Var> {
        match v {
            Var::Lazy(o, source) => {
                self.native_class(o, source)?;
                Ok(v.clone())
            }
            _ => unsupported(Kind::Call, "print() to a stream made in the call"),
        }
    }

    fn native_class(&mut self, stream: &PyObjectRef, source: &Source) -> SimResult<()> {
        let class = stream.class();
        if class.slots.flags.has_feature(PyTypeFlags::HEAPTYPE) {
            return unsupported(
                Kind::Call,
                format!("output to a {} (a class written in Python)", class.name()),
            );
        }
        self.guard(source, Check::type_is(class.to_owned()));
        Ok(())
    }

    /// What `v` prints as, fixed at this point of the program (see the module's comment).
    pub(super) fn printed(&mut self, v: &Var) -> SimResult<Var> {
        let (vm, _level) = (self.vm, crate::translate::nesting::Level::enter()?);
        let t = &vm.ctx.types;
        Ok(match v {
            Var::Obj(o) if is_plain(o, vm) => v.clone(),
            Var::Num(_) | Var::Text(_) => v.clone(),
            Var::Obj(o) if o.downcast_ref::<PyTensor>().is_some() => self.tensor_now(v)?,
            Var::Tensor(_) => self.tensor_now(v)?,
            Var::Lazy(o, _) if o.downcast_ref::<PyTensor>().is_some() => self.tensor_now(v)?,
            Var::Lazy(o, source) => {
                let c = o.class();
                let leaf = [
                    t.int_type,
                    t.float_type,
                    t.str_type,
                    t.bool_type,
                    t.none_type,
                ];
                if leaf.iter().any(|l| c.is(*l)) {
                    self.guard(source, Check::type_is(c.to_owned()));
                    return Ok(v.clone());
                }
                // Exactly a list or tuple: a named tuple prints through its class's
                // `__repr__`, not as its items.
                let items = match self.lazy_items(o, source)? {
                    Some(items) if c.is(t.list_type) || c.is(t.tuple_type) => items,
                    _ => return unsupported(Kind::Call, format!("print() of a {}", c.name())),
                };
                let items = self.printed_items(&items)?;
                if c.is(t.list_type) {
                    Var::list(items)
                } else {
                    Var::Tuple(std::rc::Rc::new(items))
                }
            }
            Var::Tuple(items) => Var::Tuple(std::rc::Rc::new(self.printed_items(items)?)),
            Var::List(items) => {
                let items = items.borrow().clone();
                Var::list(self.printed_items(&items)?)
            }
            // A `defaultdict` or `OrderedDict` made here prints with its class's name.
            Var::Dict(d) if self.dict_kind(d).is_some() => {
                return unsupported(Kind::Call, "print() of a dict subclass made in the call");
            }
            Var::Dict(entries) => {
                let entries = entries.borrow().clone();
                let mut copied = Vec::with_capacity(entries.len());
                for (k, v) in entries {
                    copied.push((k, self.printed(&v)?));
                }
                Var::Dict(std::rc::Rc::new(std::cell::RefCell::new(copied)))
            }
            other => return unsupported(Kind::Call, format!("print() of a {}", other.kind())),
        })
    }

    fn printed_items(&mut self, items: &[Var]) -> SimResult<Vec<Var>> {
        items.iter().map(|i| self.printed(i)).collect()
    }

    /// A tensor as it is now: a new fake for its present graph value (the tensor itself may
    /// be updated in place later in the call), of the class whose text `print` shows.
    fn tensor_now(&mut self, v: &Var) -> SimResult<Var> {
        let o = self.obj(v)?;
        let Ok(t) = o.downcast::<PyTensor>() else {
            return unsupported(Kind::Internal, "a tensor that is not one");
        };
        let value = match self.value_of(&t) {
            Some(value) => value,
            None => {
                let data = t.read().clone();
                recorder::with(|r| r.graph.constant(data))
            }
        };
        let Some(now) = recorder::with(|r| r.stand_in(value)) else {
            return unsupported(
                Kind::Internal,
                "print() of a tensor that cannot have a stand-in",
            );
        };
        let fake = PyTensor::new(now).into_ref(&self.vm.ctx);
        self.keep_alive(&fake);
        Ok(Var::Tensor(fake))
    }
}
