//! `isinstance` and `issubclass` in the interpreter's order: an exact type first, then the
//! items of a tuple or union one by one (stopping at the first hit: a later item's check may
//! be user code), then the class's metaclass. `type`'s own `__instancecheck__` and
//! `__subclasscheck__` are the subtype test; one written in Python (an `nn.Parameter`-style
//! class) is inlined like any call, with the metaclass's version guarded so that the method
//! found stays the method called.

use rustpython_vm::builtins::{PyFunction, PyTuple, PyType, PyUnion};
use rustpython_vm::types::PyTypeFlags;
use rustpython_vm::{AsObject, Py, PyObjectRef};

use crate::translate::breaks::reason::Kind;
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::values::Var;

/// Which of the two tests a metaclass hook answers.
#[derive(Clone, Copy)]
enum ClassTest {
    Instance,
    Subclass,
}

impl ClassTest {
    fn name(self) -> &'static str {
        match self {
            ClassTest::Instance => "isinstance",
            ClassTest::Subclass => "issubclass",
        }
    }

    fn hook(self) -> &'static str {
        match self {
            ClassTest::Instance => "__instancecheck__",
            ClassTest::Subclass => "__subclasscheck__",
        }
    }
}

impl State<'_> {
    /// `isinstance(inst, classes)`.
    pub(super) fn isinstance(&mut self, inst: &Var, classes: &Var) -> SimResult<bool> {
        let t = self.type_of(inst)?;
        let t = t
            .downcast::<PyType>()
            .map_err(|_| Unsupported::new(Kind::Value, "type"))?;
        let classes = self.obj(classes)?;
        self.class_test(ClassTest::Instance, inst, &t, &classes)
    }

    /// `issubclass(derived, classes)`.
    pub(super) fn issubclass(&mut self, derived: &Var, classes: &Var) -> SimResult<bool> {
        let (derived, classes) = (self.obj(derived)?, self.obj(classes)?);
        let Ok(d) = derived.clone().downcast::<PyType>() else {
            return unsupported(
                Kind::Raises,
                "issubclass() arg 1 must be a class (TypeError)",
            );
        };
        self.class_test(ClassTest::Subclass, &Var::Obj(derived), &d, &classes)
    }

    /// Whether `subject` (an instance of `t`, or the class `t` itself) passes `test` against
    /// `cls`.
    fn class_test(
        &mut self,
        test: ClassTest,
        subject: &Var,
        t: &Py<PyType>,
        cls: &PyObjectRef,
    ) -> SimResult<bool> {
        if t.as_object().is(cls) {
            return Ok(true);
        }
        if let Some(items) = class_items(cls) {
            for c in &items {
                if self.class_test(test, subject, t, c)? {
                    return Ok(true);
                }
            }
            return Ok(false);
        }
        let Some(c) = cls.downcast_ref::<PyType>() else {
            return unsupported(Kind::Call, format!("{}() with a non-class", test.name()));
        };
        if self.abc_subtype(test, t, c)? {
            return Ok(true);
        }
        if let Some(hook) = self.metaclass_hook(c, test)? {
            let r =
                self.call_function(&hook, vec![Var::Obj(cls.clone()), subject.clone()], vec![])?;
            return self.truth(&r);
        }
        if t.fast_issubclass(c) {
            return Ok(true);
        }
        if matches!(test, ClassTest::Instance) {
            self.class_attribute_is_the_type(t)?;
        }
        Ok(false)
    }

    /// The metaclass's `__instancecheck__` or `__subclasscheck__` when it is not `type`'s
    /// own: a function to inline. Refused when the metaclass's method is not Python.
    fn metaclass_hook(
        &mut self,
        c: &Py<PyType>,
        test: ClassTest,
    ) -> SimResult<Option<PyObjectRef>> {
        let vm = self.vm;
        let meta = c.class();
        if meta.is(vm.ctx.types.type_type) {
            return Ok(None);
        }
        // `c` itself is fixed by the guard on where it was read; its metaclass and the
        // metaclass's attributes by this one.
        self.guard_class(Source::object(c.to_owned().into()).type_of(), meta)?;
        let name = vm.ctx.intern_str(test.hook());
        let found = meta.get_attr(name);
        let own = vm.ctx.types.type_type.get_attr(name);
        match found {
            Some(f) if own.is_some_and(|o| o.is(&f)) => Ok(None),
            Some(f) if f.downcast_ref::<PyFunction>().is_some() => Ok(Some(f)),
            _ => unsupported(
                Kind::Call,
                format!(
                    "{}.{} (not written in Python, not simulated)",
                    meta.name(),
                    test.hook()
                ),
            ),
        }
    }

    /// Whether `t` is a subtype of `c`, an abstract base class (metaclass exactly
    /// `abc.ABCMeta`) whose `__subclasshook__` is `object`'s: ABCMeta's check then finds `c`
    /// in `t`'s MRO whatever the registry and caches hold, as they only add subclasses. A
    /// class not in the MRO is the hook's to answer (inlined, then refused at `_abc`'s native
    /// check: a registered virtual subclass would be one).
    fn abc_subtype(&mut self, test: ClassTest, t: &Py<PyType>, c: &Py<PyType>) -> SimResult<bool> {
        let vm = self.vm;
        let meta = c.class();
        let abc_meta = crate::translate::loaded_modules::loaded_attr("abc", "ABCMeta", vm);
        if !abc_meta.is_some_and(|m| meta.is(&m)) || !t.fast_issubclass(c) {
            return Ok(false);
        }
        let hook = vm.ctx.intern_str("__subclasshook__");
        match (c.get_attr(hook), vm.ctx.types.object_type.get_attr(hook)) {
            (Some(a), Some(b)) if a.is(&b) => {}
            _ => return Ok(false),
        }
        if matches!(test, ClassTest::Instance) {
            self.class_attribute_is_the_type(t)?;
        }
        self.guard_class(Source::object(c.to_owned().into()).type_of(), meta)?;
        self.guard_class(Source::object(c.to_owned().into()), c)?;
        Ok(true)
    }

    /// A failed subtype test stands only if `inst.__class__` is its type, as the
    /// interpreter then asks `inst.__class__` (a proxy or a mock names another class).
    /// The lookup is the default one on builtin types; a class of the user's has its
    /// version guarded, as the default could later be overridden on it.
    fn class_attribute_is_the_type(&mut self, t: &Py<PyType>) -> SimResult<()> {
        let vm = self.vm;
        let object = vm.ctx.types.object_type;
        let class_attr = vm.ctx.intern_str("__class__");
        let default_class = match (t.get_attr(class_attr), object.get_attr(class_attr)) {
            (Some(a), Some(b)) => a.is(&b),
            _ => false,
        };
        let python_lookup = t
            .get_attr(vm.ctx.intern_str("__getattribute__"))
            .is_some_and(|f| f.downcast_ref::<PyFunction>().is_some());
        if !default_class || python_lookup {
            return unsupported(
                Kind::Value,
                format!("isinstance() of a {} with a __class__ of its own", t.name()),
            );
        }
        if t.slots.flags.has_feature(PyTypeFlags::HEAPTYPE) {
            self.guard_class(Source::object(t.to_owned().into()), t)?;
        }
        Ok(())
    }
}

/// The classes of a tuple or a union (`int | str`), which both tests take item by item.
fn class_items(cls: &PyObjectRef) -> Option<Vec<PyObjectRef>> {
    if let Some(u) = cls.downcast_ref::<PyUnion>() {
        return Some(u.args().as_slice().to_vec());
    }
    cls.downcast_ref::<PyTuple>().map(|t| t.as_slice().to_vec())
}

impl State<'_> {
    /// The type of `v`, guarded when `v` is read from the frame.
    pub fn type_of(&mut self, v: &Var) -> SimResult<PyObjectRef> {
        let vm = self.vm;
        let t = &vm.ctx.types;
        Ok(match v {
            Var::Lazy(o, source) => {
                self.guard(
                    source,
                    crate::translate::guards::Check::type_is(o.class().to_owned()),
                );
                o.class().to_owned().into()
            }
            Var::Obj(o) => o.class().to_owned().into(),
            // The types of what it is computed from are guarded: its type follows from them.
            Var::Num(n) => n.value.class().to_owned().into(),
            Var::Tensor(_) => <crate::tensor::PyTensor as rustpython_vm::PyPayload>::class(&vm.ctx)
                .to_owned()
                .into(),
            Var::Tuple(_) => t.tuple_type.to_owned().into(),
            Var::List(_) => t.list_type.to_owned().into(),
            Var::Dict(d) => match self.dict_kind(d) {
                Some((class, _)) => class.into(),
                None => t.dict_type.to_owned().into(),
            },
            Var::Partial(_) => {
                crate::translate::loaded_modules::loaded_attr("functools", "partial", vm)
                    .ok_or_else(|| Unsupported::new(Kind::Internal, "functools.partial"))?
            }
            Var::Func(_) => t.function_type.to_owned().into(),
            Var::Object(o) => o.class.clone().into(),
            Var::NamedTuple(c, _) => c.clone().into(),
            Var::Bound(_) => t.bound_method_type.to_owned().into(),
            Var::Set(_) => t.set_type.to_owned().into(),
            Var::TStr(s) => s.class(vm),
            Var::Deque(_) => crate::translate::values::deques::deque_class(vm)
                .ok_or_else(|| Unsupported::new(Kind::Internal, "collections.deque"))?,
            other => return unsupported(Kind::Value, format!("type() of a {}", other.kind())),
        })
    }
}
