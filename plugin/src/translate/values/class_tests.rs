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
        if let Some(answer) = self.standard_abc_answer(test, t, c)? {
            return Ok(answer);
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

    /// The answer of an abstract base class of the standard library (`numbers.Number`,
    /// `collections.abc.Mapping`) for `t`, computed as ABCMeta computes it when that runs no
    /// code of the user's (`abc_answer`): `isinstance(2.0, numbers.Number)` is True by
    /// registration, `isinstance(tensor, Mapping)` False. It stands while nothing is
    /// registered with any ABC (the cache token, which ABCMeta's own negative caches follow)
    /// and the class and its metaclass are unchanged.
    fn standard_abc_answer(
        &mut self,
        test: ClassTest,
        t: &Py<PyType>,
        c: &Py<PyType>,
    ) -> SimResult<Option<bool>> {
        let vm = self.vm;
        let Some(abc_meta) = crate::translate::loaded_modules::loaded_attr("abc", "ABCMeta", vm)
        else {
            return Ok(None);
        };
        let Some(token_fn) =
            crate::translate::loaded_modules::loaded_attr("_abc", "get_cache_token", vm)
        else {
            return Ok(None);
        };
        // A class whose own lookups are `type`'s: the hooks read its MRO and dictionaries.
        let plain_meta = t.class().is(vm.ctx.types.type_type) || t.class().is(&abc_meta);
        if !plain_meta || !c.class().is(&abc_meta) || !is_standard(c.as_object(), vm) {
            return Ok(None);
        }
        let Some(token) = crate::translate::guards::guard::abc_cache_token(&token_fn, vm) else {
            return Ok(None);
        };
        let Some(answer) = abc_answer(t, c, &abc_meta, 0, vm) else {
            return Ok(None);
        };
        if matches!(test, ClassTest::Instance) {
            self.class_attribute_is_the_type(t)?;
        } else if t.slots.flags.has_feature(PyTypeFlags::HEAPTYPE) {
            self.guard_class(Source::object(t.to_owned().into()), t)?;
        }
        self.guard_class(Source::object(c.to_owned().into()).type_of(), c.class())?;
        self.guard_class(Source::object(c.to_owned().into()), c)?;
        self.guard(
            &Source::object(token_fn),
            crate::translate::guards::Check::AbcCacheToken(token),
        );
        Ok(Some(answer))
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

/// The modules whose abstract base classes (and their `__subclasshook__`s) answer from a
/// class's MRO and dictionaries alone: running them at translation runs no user code.
const STANDARD_ABC_MODULES: [&str; 6] = [
    "numbers",
    "collections.abc",
    "_collections_abc",
    "abc",
    "io",
    "os",
];

fn is_standard(o: &rustpython_vm::PyObject, vm: &rustpython_vm::VirtualMachine) -> bool {
    o.get_attr("__module__", vm)
        .ok()
        .and_then(|m| {
            m.downcast_ref::<rustpython_vm::builtins::PyStr>()
                .and_then(|s| s.to_str().map(|s| STANDARD_ABC_MODULES.contains(&s)))
        })
        .unwrap_or(false)
}

/// Whether `t` is a subclass of `c` as ABCMeta's `__subclasscheck__` decides (its hook,
/// the MRO, the registry, the subclasses, each recursively), without its caches; `None`
/// where deciding would run a hook of the user's (not a standard module's), meet a
/// metaclass other than `type` and ABCMeta, or go deeper than a few levels.
fn abc_answer(
    t: &Py<PyType>,
    c: &Py<PyType>,
    abc_meta: &PyObjectRef,
    depth: usize,
    vm: &rustpython_vm::VirtualMachine,
) -> Option<bool> {
    if c.class().is(vm.ctx.types.type_type) {
        return Some(t.fast_issubclass(c));
    }
    if depth > 6 || !checks_subclasses_as_abc(c.class(), abc_meta, vm) {
        return None;
    }
    let hook_name = vm.ctx.intern_str("__subclasshook__");
    let hook = c.get_attr(hook_name)?;
    let object_hook = vm.ctx.types.object_type.get_attr(hook_name)?;
    if !hook.is(&object_hook) {
        let func = hook.get_attr("__func__", vm).ok()?;
        if func.downcast_ref::<PyFunction>().is_none() || !is_standard(&func, vm) {
            return None;
        }
        let said = vm
            .call_method(c.as_object(), "__subclasshook__", (t.to_owned(),))
            .ok()?;
        if said.is(&vm.ctx.true_value) {
            return Some(true);
        }
        if said.is(&vm.ctx.false_value) {
            return Some(false);
        }
        if !said.is(&vm.ctx.not_implemented) {
            return None;
        }
    }
    if t.fast_issubclass(c) {
        return Some(true);
    }
    let dump = crate::translate::loaded_modules::loaded_attr("_abc", "_get_dump", vm)?
        .call((c.to_owned(),), vm)
        .ok()?;
    let registry = dump.downcast_ref::<PyTuple>()?.as_slice().first()?.clone();
    let registered: Vec<PyObjectRef> = vm.extract_elements_with(&registry, Ok).ok()?;
    let subclasses = vm.call_method(c.as_object(), "__subclasses__", ()).ok()?;
    let subclasses: Vec<PyObjectRef> = vm.extract_elements_with(&subclasses, Ok).ok()?;
    let registered = registered.into_iter().filter_map(|r| {
        // A registry entry is a weak reference: dead ones are skipped, as ABCMeta does.
        let class = r.call((), vm).ok()?;
        (!vm.is_none(&class)).then_some(class)
    });
    for other in registered.chain(subclasses) {
        let other = other.downcast::<PyType>().ok()?;
        if abc_answer(t, &other, abc_meta, depth + 1, vm)? {
            return Some(true);
        }
    }
    Some(false)
}

/// Whether `meta` is ABCMeta, or a metaclass on it that leaves `__subclasscheck__` alone
/// (`collections.abc.ByteString`'s, which only warns on its `__instancecheck__`).
fn checks_subclasses_as_abc(
    meta: &Py<PyType>,
    abc_meta: &PyObjectRef,
    vm: &rustpython_vm::VirtualMachine,
) -> bool {
    if meta.is(abc_meta) {
        return true;
    }
    let Some(abc_type) = abc_meta.downcast_ref::<PyType>() else {
        return false;
    };
    let name = vm.ctx.intern_str("__subclasscheck__");
    meta.fast_issubclass(abc_type)
        && matches!((meta.get_attr(name), abc_type.get_attr(name)), (Some(a), Some(b)) if a.is(&b))
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
            Var::Bound(b) => {
                crate::translate::values::native_method_forms::native_bound_class(&b.0, vm)
                    .unwrap_or_else(|| t.bound_method_type.to_owned().into())
            }
            Var::Set(_) => t.set_type.to_owned().into(),
            // A slice of numbers that change per call (`blocks[: self.depth]`).
            Var::SymSlice(_) => t.slice_type.to_owned().into(),
            Var::TStr(s) => s.class(vm),
            Var::Deque(_) => crate::translate::values::deques::deque_class(vm)
                .ok_or_else(|| Unsupported::new(Kind::Internal, "collections.deque"))?,
            other => return unsupported(Kind::Value, format!("type() of a {}", other.kind())),
        })
    }
}
