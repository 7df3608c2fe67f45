//! `sorted(xs, key=f)`, `min(xs, key=f)`, `max(..., key=f)` and `list.sort(key=f)`: the key
//! function inlined on each item (its reads guarded as any inlined call's), then the items
//! ordered by their keys as native code orders them. The keys must be plain values (numbers,
//! strs, tuples of them), so that comparing them runs no user code. Python's guarantees
//! hold: the sort is stable (reversed too), `min` and `max` give the first of equal items.

use rustpython_vm::PyObjectRef;
use rustpython_vm::function::{FuncArgs, KwArgs};

use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::values::{ListRef, Var};

/// The keyword arguments of a keyed call.
struct Keyed {
    key: Var,
    reverse: bool,
    default: Option<Var>,
}

impl State<'_> {
    fn keyed_arguments(
        &mut self,
        name: &str,
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Keyed>> {
        let vm = self.vm;
        let Some(key) = kwargs
            .iter()
            .find(|(k, _)| k == "key")
            .map(|(_, v)| v.clone())
        else {
            return Ok(None);
        };
        if matches!(&key, Var::Obj(o) if vm.is_none(o)) {
            // `key=None` is no key: native code sorts plain values alone.
            return Ok(None);
        }
        let mut keyed = Keyed {
            key,
            reverse: false,
            default: None,
        };
        for (k, v) in kwargs {
            match (name, k.as_str()) {
                (_, "key") => {}
                ("sorted" | "sort", "reverse") => keyed.reverse = self.truth(v)?,
                ("min" | "max", "default") => keyed.default = Some(v.clone()),
                _ => {
                    return unsupported(
                        Kind::Call,
                        format!("{name}() with the keyword argument {k}"),
                    );
                }
            }
        }
        Ok(Some(keyed))
    }

    /// `sorted`, `min` or `max` with `key=`; `None` when there is no key.
    pub(super) fn keyed_builtin(
        &mut self,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let Some(keyed) = self.keyed_arguments(name, kwargs)? else {
            return Ok(None);
        };
        let items = match (name, args) {
            (_, [xs]) => self.items(xs)?,
            ("min" | "max", xs) if xs.len() >= 2 && keyed.default.is_none() => xs.to_vec(),
            _ => return unsupported(Kind::Call, format!("{name}() with these arguments")),
        };
        if name == "sorted" {
            let order = self.key_order("sorted", &keyed, &items)?;
            return Ok(Some(Var::list(
                order.into_iter().map(|i| items[i].clone()).collect(),
            )));
        }
        if items.is_empty() {
            return match keyed.default {
                Some(d) => Ok(Some(d)),
                None => unsupported(
                    Kind::Raises,
                    format!("{name}() of an empty sequence (ValueError)"),
                ),
            };
        }
        let best = self.key_order(name, &keyed, &items)?;
        Ok(Some(items[best[0]].clone()))
    }

    /// `l.sort(key=f, reverse=r)` on a list of the simulation's; `None` without a key.
    pub(super) fn keyed_list_sort(
        &mut self,
        l: &ListRef,
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let Some(keyed) = self.keyed_arguments("sort", kwargs)? else {
            return Ok(None);
        };
        let items = l.borrow().clone();
        let order = self.key_order("sorted", &keyed, &items)?;
        *l.borrow_mut() = order.into_iter().map(|i| items[i].clone()).collect();
        Ok(Some(Var::Obj(self.vm.ctx.none())))
    }

    /// The positions of `items` as native `sorted` orders them by their keys (every
    /// position), or the one `min` or `max` picks.
    fn key_order(&mut self, name: &str, keyed: &Keyed, items: &[Var]) -> SimResult<Vec<usize>> {
        let vm = self.vm;
        let mut keys = Vec::with_capacity(items.len());
        for item in items {
            let k = self.invoke(&keyed.key, vec![item.clone()], Vec::new())?;
            keys.push(self.plain_obj(&k, "a sort key")?);
        }
        let keys: PyObjectRef = vm.ctx.new_list(keys).into();
        let lookup = keys
            .get_attr("__getitem__", vm)
            .map_err(|_| Unsupported::new(Kind::Internal, "list.__getitem__"))?;
        let positions: Vec<PyObjectRef> =
            (0..items.len()).map(|i| vm.ctx.new_int(i).into()).collect();
        let mut kw: Vec<(String, PyObjectRef)> = vec![("key".to_owned(), lookup)];
        if name == "sorted" {
            kw.push(("reverse".to_owned(), vm.ctx.new_bool(keyed.reverse).into()));
        }
        let native = self.builtins_obj(name)?;
        let args = FuncArgs::new(
            vec![vm.ctx.new_list(positions).into()],
            KwArgs::from_iter(kw),
        );
        let r = native.call(args, vm).map_err(|_| {
            Unsupported::new(
                Kind::Raises,
                format!("{name}() of keys that do not compare (TypeError)"),
            )
        })?;
        let as_index = |o: &PyObjectRef| -> SimResult<usize> {
            o.try_index(vm)
                .ok()
                .and_then(|i| i.try_to_primitive::<usize>(vm).ok())
                .ok_or_else(|| Unsupported::new(Kind::Internal, "a position"))
        };
        if name == "sorted" {
            let order: Vec<PyObjectRef> = vm
                .extract_elements_with(&r, Ok)
                .map_err(|_| Unsupported::new(Kind::Internal, "sorted positions"))?;
            order.iter().map(as_index).collect()
        } else {
            Ok(vec![as_index(&r)?])
        }
    }
}
