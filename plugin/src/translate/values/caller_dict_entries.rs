//! The whole of a caller's dict (`for k, v in d.items()`, `dict(d)`, `**d`): its keys, in
//! order, guarded; each value read through its key; and the call's own stores and deletes
//! applied as the dict applies them, so that what the simulation sees is what the dict holds
//! at that point of the call.

use rustpython_vm::builtins::{PyDict, PyStr};
use rustpython_vm::{AsObject, PyObjectRef};

use crate::translate::breaks::reason::Kind;
use crate::translate::guards::guard::{Check, exact_str, ordered_keys};
use crate::translate::key_const::{KeyConst, StoreKey};
use crate::translate::source::Source;
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::values::Var;

impl State<'_> {
    /// The entries of a dict of the caller's (exactly a dict, or a subclass that keeps its
    /// entries in it) as they are at this point of the call.
    pub fn lazy_dict_entries(
        &mut self,
        o: &PyObjectRef,
        source: &Source,
    ) -> SimResult<Vec<(PyObjectRef, Var)>> {
        let ordered = crate::translate::values::dict_subclasses::dict_like(o.class(), self.vm)
            .is_some_and(|k| !k.in_dict_order());
        let stores = self.dict_stores(o, source)?;
        let d = o.downcast_ref::<PyDict>().expect("dict");
        if stores.is_empty()
            && !ordered
            && let Some(entries) = self.identity_keyed_entries(d, source)
        {
            return Ok(entries);
        }
        if stores.is_empty()
            && !ordered
            && let Some(entries) = self.enum_keyed_entries(d, source)?
        {
            return Ok(entries);
        }
        if !ordered && let Some(entries) = self.const_keyed_entries(d, source) {
            return self.with_stores(entries, stores);
        }
        // An `OrderedDict` in its own order (its links), each value read from its dict.
        let entries: Vec<(PyObjectRef, PyObjectRef)> = match ordered {
            false => d.into_iter().collect(),
            true => ordered_keys(o, self.vm)
                .ok_or_else(|| Unsupported::new(Kind::Value, "an OrderedDict's keys"))?
                .into_iter()
                .filter_map(|k| {
                    let v = d.get_item_opt(k.as_str(), self.vm).ok().flatten()?;
                    Some((self.vm.ctx.new_str(k.as_str()).into(), v))
                })
                .collect(),
        };
        let mut out = Vec::new();
        let mut keys = Vec::new();
        for (k, val) in entries {
            let Some(ks) = exact_str(&k, self.vm) else {
                return unsupported(
                    Kind::Value,
                    "a mapping with keys that are not all strings, ints, tuples or dtypes, nor all objects hashed by identity",
                );
            };
            keys.push(ks.to_owned());
            out.push((k.clone(), Var::Lazy(val, source.clone().key(ks))));
        }
        self.guard(source, Check::type_is(o.class().to_owned()));
        self.guard(
            source,
            match ordered {
                true => Check::OrderedKeys(keys),
                false => Check::Keys(keys),
            },
        );
        self.with_stores(out, stores)
    }

    /// `entries` once the call's stores and deletes are applied as the dict applies them: a
    /// key stored again keeps its place, a new one (or one deleted and stored again) goes
    /// last. Every key is a constant (`KeyConst`): the stores are matched by value, as the
    /// dict matches them for these types.
    fn with_stores(
        &self,
        mut out: Vec<(PyObjectRef, Var)>,
        stores: Vec<(StoreKey, Option<Var>)>,
    ) -> SimResult<Vec<(PyObjectRef, Var)>> {
        let ctx = &self.vm.ctx;
        for (key, value) in stores {
            let StoreKey::Const(key) = key else {
                return unsupported(
                    Kind::Value,
                    "a read of the whole of a dict the call stored an object's key into",
                );
            };
            let at = out.iter().position(|(k, _)| match &key {
                // A str key as the str path read it: a subclass of str too.
                KeyConst::Str(s) => {
                    k.downcast_ref::<PyStr>().and_then(|k| k.to_str()) == Some(s.as_str())
                }
                _ => KeyConst::of(k, ctx).as_ref() == Some(&key),
            });
            match (at, value) {
                (Some(i), Some(v)) => out[i].1 = v,
                (Some(i), None) => {
                    out.remove(i);
                }
                (None, Some(v)) => out.push((key.object(self.vm), v)),
                (None, None) => {}
            }
        }
        Ok(out)
    }

    /// The entries of the caller's dict `d` (read from `source`) when its keys are ints,
    /// tuples, dtypes, bytes or `None`, one a str at most (`KeyConst`: a table keyed by layer
    /// numbers or dtypes, `for i, w in self.weights.items()`, a count per size): the keys
    /// guarded, in order; each value read through its key.
    fn const_keyed_entries(
        &mut self,
        d: &rustpython_vm::Py<PyDict>,
        source: &Source,
    ) -> Option<Vec<(PyObjectRef, Var)>> {
        let vm = self.vm;
        let keys = d.keys_vec();
        let consts: Vec<KeyConst> = keys
            .iter()
            .map(|k| KeyConst::of(k, &vm.ctx))
            .collect::<Option<_>>()?;
        // All str keys take the path of str keys (`Check::Keys`, a stamp).
        if consts.iter().all(|k| matches!(k, KeyConst::Str(_))) {
            return None;
        }
        let mut out = Vec::with_capacity(keys.len());
        for (k, c) in keys.iter().zip(&consts) {
            let val = d.get_item_opt(&**k, vm).ok().flatten()?;
            out.push((
                k.clone(),
                Var::Lazy(val, source.clone().const_key(c.clone())),
            ));
        }
        self.guard(source, Check::type_is(d.class().to_owned()));
        self.guard(source, Check::ConstKeys(consts));
        Some(out)
    }

    /// The entries of the caller's dict `d` (read from `source`, unchanged by the call) when
    /// its keys are all objects hashed by identity (an optimizer's state keyed by its
    /// parameters, `for p, s in self.state.items()`): the keys guarded to be these very
    /// objects, in order; each value read through its key.
    fn identity_keyed_entries(
        &mut self,
        d: &rustpython_vm::Py<PyDict>,
        source: &Source,
    ) -> Option<Vec<(PyObjectRef, Var)>> {
        let keys = d.keys_vec();
        // `key_var` holds a key as the caller's object exactly when it is found by identity.
        let by_identity =
            |k: &PyObjectRef| matches!(crate::translate::values::key_var(k), Var::Lazy(..));
        if keys.is_empty() || !keys.iter().all(by_identity) {
            return None;
        }
        let mut out = Vec::new();
        for k in &keys {
            let value = d.inner_getitem_opt(&**k, self.vm).ok().flatten()?;
            let at = source.clone().id_key(Source::object(k.clone()));
            out.push((k.clone(), Var::Lazy(value, at)));
        }
        let o: PyObjectRef = d.to_owned().into();
        self.guard(source, Check::type_is(o.class().to_owned()));
        let idents = keys
            .into_iter()
            .map(crate::translate::guards::ident::Ident::new)
            .collect();
        self.guard(source, Check::KeyObjects(idents));
        Some(out)
    }
}
