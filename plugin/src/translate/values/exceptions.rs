//! Exceptions in the simulation: `raise`, and the handlers of the exception table. An
//! exception the simulation raises is an instance of a native exception class (or of a user
//! subclass that defines no `__new__`, `__init__`, `__str__` or `__repr__`), made natively from
//! plain arguments: making it runs no user code. The translator remembers how it was made, so
//! that the replacement makes a new one on every call where it escapes the frame or is
//! returned, as the original would.
//!
//! Raised, it goes where the VM would send it: the handler of the raising instruction (the
//! stack cut to the handler's depth, the raising offset pushed if the handler wants it), or out
//! of the frame. An exception that leaves an inlined call is not followed into its caller: the
//! call is rolled back and runs as written. One that leaves the translated frame ends its
//! replacement: the graph, the side effects, then `raise`.
//!
//! The traceback is not simulated: reading `__traceback__`, or a `with` block's `__exit__`
//! (which is given it), is not simulated either, and breaks.

use rustpython_vm::builtins::PyType;
use rustpython_vm::{AsObject, PyObjectRef, PyRef};

use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::values::Var;

/// An exception made during the simulation: its class and arguments, to make it again.
#[derive(Clone, Debug)]
pub struct MadeException {
    pub object: PyObjectRef,
    pub class: PyRef<PyType>,
    pub args: Vec<Var>,
    /// Raised while another exception was being handled: the VM would have chained that one
    /// as its `__context__`, which a new instance would not have.
    pub chained: bool,
    /// Raised `from` a cause (or `from None`): the VM would have set its `__cause__` and
    /// `__suppress_context__`, which a new instance would not have.
    pub caused: bool,
    /// Raised out of an inlined call into a handler of its caller's.
    pub crossed: bool,
    /// Attributes the VM sets on it beyond its arguments (an AttributeError's `name` and
    /// `obj`, the caller's object with its source), which `class(*args)` would not have.
    pub attributes: Vec<(&'static str, Var)>,
    /// Raised: the VM would have given it a `__traceback__`. Made again, only the exception
    /// the frame raises out of itself gets one (when the replacement raises it).
    pub raised: bool,
}

/// An exception that an operation raises in Python, as a dict read of a missing key raises
/// `KeyError(key)`: made, and raised where the instruction's handler catches it, by the
/// executor; where no handler of the frame covers the instruction, the failure it came with
/// stands (the frame breaks there and raises as written).
pub struct NativeRaise {
    pub class: PyRef<PyType>,
    pub args: Vec<Var>,
    /// The exception itself, when an inlined call raised it out of its frame (`None`: made
    /// as `class(*args)` where it is raised).
    pub made: Option<Var>,
    /// Attributes set on it once made, as the VM sets them (an AttributeError's `name`, `obj`).
    pub attributes: Vec<(&'static str, Var)>,
    /// The failure's message, which names this raise (another failure is not it).
    pub message: String,
}

/// Methods that would run user code when an exception is made or shown.
const USER_METHODS: &[&str] = &["__new__", "__init__", "__str__", "__repr__"];

impl State<'_> {
    /// The exception class `o`, if it is one the simulation may instantiate.
    pub fn exception_class(&self, o: &PyObjectRef) -> Option<PyRef<PyType>> {
        let vm = self.vm;
        let class = o.clone().downcast::<PyType>().ok()?;
        if !class.fast_issubclass(vm.ctx.exceptions.base_exception_type)
            || !o.class().is(vm.ctx.types.type_type)
        {
            return None;
        }
        // A class of the user's that defines one of them would run its code.
        let user_method = class.mro_map_collect(|t| {
            t.slots
                .flags
                .has_feature(rustpython_vm::types::PyTypeFlags::HEAPTYPE)
                && USER_METHODS
                    .iter()
                    .any(|m| t.get_direct_attr(vm.ctx.intern_str(*m)).is_some())
        });
        (!user_method.iter().any(|u| *u)).then_some(class)
    }

    /// `class(*args)` for an exception class (see `exception_class`): made natively from plain
    /// arguments, and remembered.
    /// `class(*args)` with `attributes` set on it, as the VM makes an exception it raises.
    pub fn new_exception_with(
        &mut self,
        class: PyRef<PyType>,
        args: Vec<Var>,
        attributes: Vec<(&'static str, Var)>,
    ) -> SimResult<Var> {
        let exc = self.new_exception(class, args)?;
        if attributes.is_empty() {
            return Ok(exc);
        }
        let Var::Obj(o) = &exc else {
            return unsupported(Kind::Internal, "an exception that is no object");
        };
        for (name, value) in &attributes {
            let (Var::Obj(value) | Var::Lazy(value, _)) = value else {
                return unsupported(Kind::Internal, "an exception's attribute");
            };
            o.set_attr(*name, value.clone(), self.vm)
                .map_err(|_| Unsupported::new(Kind::Internal, "an exception's attribute"))?;
        }
        if let Some(m) = self.exceptions.iter_mut().find(|m| m.object.is(o)) {
            m.attributes = attributes;
        }
        Ok(exc)
    }

    pub fn new_exception(&mut self, class: PyRef<PyType>, args: Vec<Var>) -> SimResult<Var> {
        let vm = self.vm;
        let mut plain = Vec::with_capacity(args.len());
        for a in &args {
            plain.push(self.plain_obj(a, "an exception's argument")?);
        }
        let object = class.as_object().call(plain, vm).map_err(|_| {
            crate::translate::state::Unsupported::new(
                Kind::Raises,
                format!("{}() raises", class.name()),
            )
        })?;
        self.exceptions.push(MadeException {
            object: object.clone(),
            class,
            args,
            chained: false,
            caused: false,
            crossed: false,
            attributes: Vec::new(),
            raised: false,
        });
        Ok(Var::Obj(object))
    }

    /// Fail as an operation that raises `class(*args)` in Python (see [`NativeRaise`]).
    pub fn raise_native<T>(
        &mut self,
        class: &'static rustpython_vm::Py<PyType>,
        args: Vec<Var>,
        message: String,
    ) -> SimResult<T> {
        self.raise_native_with(class, args, Vec::new(), message)
    }

    /// [`Self::raise_native`], the exception made with `attributes` set (see `NativeRaise`).
    pub fn raise_native_with<T>(
        &mut self,
        class: &'static rustpython_vm::Py<PyType>,
        args: Vec<Var>,
        attributes: Vec<(&'static str, Var)>,
        message: String,
    ) -> SimResult<T> {
        self.pending_raise = Some(NativeRaise {
            class: class.to_owned(),
            args,
            made: None,
            attributes,
            message: message.clone(),
        });
        unsupported(Kind::Raises, message)
    }

    /// Fail as the call whose inlined frame raised `exc` out of itself: a handler of the
    /// calling frame gets it (or, under a handler of a frame further out, the calling frame
    /// raises it on). Kept or raised out of the translated frame, it is not made again: its
    /// traceback would lack the call's frames.
    pub fn raise_from_call<T>(&mut self, exc: Var, callee: &str) -> SimResult<T> {
        let Var::Obj(e) = &exc else {
            return unsupported(Kind::Internal, "an exception that is no object");
        };
        let class = e.class().to_owned();
        if let Some(m) = self.exceptions.iter_mut().find(|m| m.object.is(e)) {
            m.crossed = true;
        }
        let message = format!(
            "{} raised out of {callee} (an exception leaving an inlined call)",
            class.name()
        );
        self.pending_raise = Some(NativeRaise {
            class,
            args: Vec::new(),
            made: Some(exc),
            attributes: Vec::new(),
            message: message.clone(),
        });
        unsupported(Kind::Raises, message)
    }

    /// The exception the failure `e` of the instruction just simulated stands for, if an
    /// operation raised it (`raise_native`).
    pub fn take_raise(&mut self, e: &crate::translate::state::Unsupported) -> Option<NativeRaise> {
        self.pending_raise
            .take()
            .filter(|r| e.kind == Kind::Raises && r.message == e.message)
    }

    /// `exc` is raised while `handled` (if any) is being handled: it would be chained to it.
    pub fn note_raised(&mut self, exc: &Var, handled: Option<&Var>) {
        let Var::Obj(e) = exc else { return };
        let chained = matches!(handled, Some(Var::Obj(h)) if !e.is(h));
        if let Some(m) = self.exceptions.iter_mut().find(|m| m.object.is(e)) {
            m.raised = true;
            m.chained |= chained;
        }
    }

    /// `exc` is raised `from` a cause: kept or raised out of the frame, it is not made again.
    pub fn note_caused(&mut self, exc: &Var) {
        let Var::Obj(e) = exc else { return };
        if let Some(m) = self.exceptions.iter_mut().find(|m| m.object.is(e)) {
            m.caused = true;
        }
    }

    /// How `o` was made, if the simulation made it.
    pub fn made_exception(&self, o: &PyObjectRef) -> Option<&MadeException> {
        self.exceptions.iter().find(|m| m.object.is(o))
    }

    /// What `raise x` raises: `x` itself, an exception the simulation made, or a new instance
    /// of the exception class `x`.
    pub fn exception_to_raise(&mut self, x: &Var) -> SimResult<Var> {
        if let Var::Obj(o) = x
            && self.made_exception(o).is_some()
        {
            return Ok(x.clone());
        }
        if let Var::Obj(o) | Var::Lazy(o, _) = x
            && let Some(class) = self.exception_class(o)
        {
            self.obj(x)?; // the class's identity
            return self.new_exception(class, Vec::new());
        }
        unsupported(Kind::Value, format!("raise of a {}", x.kind()))
    }

    /// Whether the exception `exc` matches `except` clause's `class` (a class, or a tuple of them).
    pub fn exception_matches(&mut self, exc: &Var, class: &Var) -> SimResult<bool> {
        let Var::Obj(e) = exc else {
            return unsupported(Kind::Value, "an exception the simulation did not make");
        };
        let class = self.obj(class)?;
        let classes: Vec<PyObjectRef> =
            match class.downcast_ref::<rustpython_vm::builtins::PyTuple>() {
                Some(t) => t.as_slice().to_vec(),
                None => vec![class.clone()],
            };
        let mut matched = false;
        for c in classes {
            let Ok(c) = c.downcast::<PyType>() else {
                return unsupported(Kind::Value, "an except clause that names no class");
            };
            matched |= e.class().fast_issubclass(&c);
        }
        Ok(matched)
    }

    /// `e.args` of an exception the simulation made: the arguments it was made from, where
    /// the exception kept them all (`OSError` keeps only the first two of more); an
    /// attribute the VM set on it (an AttributeError's `obj`, read from its source).
    pub fn exception_attr(&self, e: &Var, name: &str) -> Option<Var> {
        let Var::Obj(o) = e else { return None };
        let made = self.made_exception(o)?;
        if let Some((_, v)) = made.attributes.iter().find(|(n, _)| *n == name) {
            return Some(v.clone());
        }
        if name != "args" {
            return None;
        }
        let kept = o.get_attr("args", self.vm).ok()?;
        let kept = kept
            .downcast_ref::<rustpython_vm::builtins::PyTuple>()?
            .len();
        (kept == made.args.len()).then(|| Var::tuple(made.args.clone()))
    }

    /// `str(e)` or `repr(e)` of an exception the simulation made (its class shows it natively).
    pub fn show_exception(&mut self, name: &str, e: &Var) -> Option<SimResult<Var>> {
        let Var::Obj(o) = e else { return None };
        self.made_exception(o)?;
        let vm = self.vm;
        let shown = if name == "str" {
            o.str(vm).map(Into::into)
        } else {
            o.repr(vm).map(Into::into)
        };
        Some(shown.map(Var::Obj).map_err(|_| {
            crate::translate::state::Unsupported::new(
                Kind::Raises,
                format!("{name}() of an exception raises"),
            )
        }))
    }
}
