//! Structural pattern matching (`match`): MATCH_SEQUENCE, MATCH_MAPPING, GET_LEN, MATCH_KEYS
//! and MATCH_CLASS, as the VM runs them, over the simulation's values: what a pattern reads
//! of the subject (its class, its length, entries, attributes) is read as the program's own
//! reads are, and guarded alike. What would raise (a malformed pattern, a missing attribute)
//! is not simulated.

use rustpython_vm::builtins::{PyStr, PyTuple, PyType};
use rustpython_vm::types::PyTypeFlags;
use rustpython_vm::{AsObject, PyObjectRef};

use super::{Flow, Handler, SimFrame};
use crate::bytecode::decode::Instr;
use crate::translate::state::{Kind, SimResult, State, Unsupported, is_dict, unsupported};
use crate::translate::values::{Var, dict_entry};

impl State<'_> {
    /// Whether the subject's class has the collection flag `flag` (`SEQUENCE`, `MAPPING`). A
    /// class written in Python that has neither may still be registered as one later
    /// (`Sequence.register`), which no guard sees: not simulated.
    fn patma_flag(&mut self, subject: &Var, flag: u8) -> SimResult<bool> {
        let class = self.type_of(subject)?;
        let class = class
            .downcast_ref::<PyType>()
            .ok_or_else(|| Unsupported::new(Kind::Internal, "a class"))?;
        let flags = &class.slots.flags;
        let set = |f: u8| flags.has_feature(f);
        if flags.has_feature(PyTypeFlags::HEAPTYPE)
            && !set(PyTypeFlags::SEQUENCE)
            && !set(PyTypeFlags::MAPPING)
        {
            return unsupported(
                Kind::Value,
                "a pattern on an instance of a class that may be registered as a collection",
            );
        }
        Ok(set(flag))
    }

    pub(super) fn match_collection(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        use rustpython_vm::bytecode::Opcode;
        let subject = f.top(1)?.clone();
        let flag = match x.op {
            Opcode::MatchSequence => PyTypeFlags::SEQUENCE,
            _ => PyTypeFlags::MAPPING,
        };
        let is = self.patma_flag(&subject, flag)?;
        f.push(Var::Obj(self.vm.ctx.new_bool(is).into()));
        Ok(Flow::Next)
    }

    pub(super) fn get_len(&mut self, f: &mut SimFrame, _x: &Instr) -> Handler {
        let subject = f.top(1)?.clone();
        let len = self.builtin_named("len", vec![subject])?;
        f.push(len);
        Ok(Flow::Next)
    }

    /// `builtins.name(*args)`, simulated as a call of it.
    fn builtin_named(&mut self, name: &str, args: Vec<Var>) -> SimResult<Var> {
        let f = self.builtins_obj(name)?;
        self.invoke(&Var::Obj(f), args, Vec::new())
    }

    /// MATCH_KEYS: the values of the keys (a tuple of constants) in a mapping subject, or
    /// None when one is missing.
    pub(super) fn match_keys(&mut self, f: &mut SimFrame, _x: &Instr) -> Handler {
        let vm = self.vm;
        let keys = self.obj(f.top(1)?)?;
        let subject = f.top(2)?.clone();
        let keys = keys
            .downcast_ref::<PyTuple>()
            .ok_or_else(|| Unsupported::new(Kind::Internal, "MATCH_KEYS of no tuple"))?
            .as_slice()
            .to_vec();
        let mut values = Vec::with_capacity(keys.len());
        for (i, key) in keys.iter().enumerate() {
            if keys[..i].iter().any(|k| vm.bool_eq(k, key).unwrap_or(true)) {
                return unsupported(Kind::Raises, "a mapping pattern with a key twice");
            }
            let found = match &subject {
                Var::Dict(d) => dict_entry(d, key, vm),
                Var::Lazy(o, source) if o.class().is(vm.ctx.types.dict_type) && is_dict(o, vm) => {
                    let k = self.caller_key(&Var::Obj(key.clone()), "a mapping pattern")?;
                    self.caller_dict_read(o, source, &k)?
                }
                other => {
                    return unsupported(
                        Kind::Value,
                        format!("a mapping pattern on a {}", other.kind()),
                    );
                }
            };
            match found {
                Some(v) => values.push(v),
                None => {
                    f.push(Var::Obj(vm.ctx.none()));
                    return Ok(Flow::Next);
                }
            }
        }
        f.push(Var::tuple(values));
        Ok(Flow::Next)
    }

    /// MATCH_CLASS: whether the subject is an instance of the class (as `isinstance` says),
    /// then its attributes: the positional ones named by the class's `__match_args__` (or the
    /// subject itself for a builtin class that matches itself), then the keyword ones.
    pub(super) fn match_class(&mut self, f: &mut SimFrame, x: &Instr) -> Handler {
        let vm = self.vm;
        let names = f.pop()?;
        let class = f.pop()?;
        let subject = f.pop()?;
        let names = self.obj(&names)?;
        let names: Vec<PyObjectRef> = names
            .downcast_ref::<PyTuple>()
            .ok_or_else(|| Unsupported::new(Kind::Internal, "MATCH_CLASS of no tuple"))?
            .as_slice()
            .to_vec();
        let is = self.builtin_named("isinstance", vec![subject.clone(), class.clone()])?;
        if !self.truth(&is)? {
            f.push(Var::Obj(vm.ctx.none()));
            return Ok(Flow::Next);
        }
        let positional = x.arg as usize;
        let mut attrs: Vec<PyObjectRef> = Vec::new();
        let mut extracted = Vec::new();
        if positional > 0 {
            let class_obj = self.obj(&class)?;
            let Some(class_type) = class_obj.downcast_ref::<PyType>() else {
                return unsupported(Kind::Raises, "a class pattern of no class (TypeError)");
            };
            let flags = &class_type.slots.flags;
            let match_self = flags.has_feature(PyTypeFlags::_MATCH_SELF);
            let listed = class_type
                .get_attr(vm.ctx.intern_str("__match_args__"))
                .is_some();
            if !listed && match_self && positional == 1 {
                extracted.push(subject.clone());
            } else if !listed {
                return unsupported(
                    Kind::Raises,
                    "positional sub-patterns of a class without __match_args__",
                );
            } else {
                let args = self.attr_of(&class, "__match_args__")?;
                let args = self.plain_obj(&args, "__match_args__")?;
                let Some(args) = args.downcast_ref::<PyTuple>() else {
                    return unsupported(Kind::Raises, "__match_args__ of no tuple");
                };
                if args.len() < positional {
                    return unsupported(Kind::Raises, "too many positional sub-patterns");
                }
                attrs.extend(args.as_slice()[..positional].iter().cloned());
            }
        }
        attrs.extend(names);
        for (i, name) in attrs.iter().enumerate() {
            let Some(n) = name.downcast_ref::<PyStr>() else {
                return unsupported(Kind::Raises, "an attribute pattern of no str");
            };
            if attrs[..i]
                .iter()
                .any(|a| vm.bool_eq(a, name).unwrap_or(true))
            {
                return unsupported(Kind::Raises, "a sub-pattern for one attribute twice");
            }
            extracted.push(self.attr_of(&subject, &n.to_string_lossy())?);
        }
        f.push(Var::tuple(extracted));
        Ok(Flow::Next)
    }
}
