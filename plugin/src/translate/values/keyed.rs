//! `sorted(xs, key=f)`, `min(xs, key=f)`, `max(..., key=f)` and `list.sort(key=f)`: the key
//! function inlined on each item (its reads guarded as any inlined call's), then the items
//! ordered by their keys as native code orders them. The keys must be plain values (numbers,
//! strs, tuples of them), so that comparing them runs no user code. Python's guarantees
//! hold: the sort is stable (reversed too), `min` and `max` give the first of equal items.
//! `sorted(d.items())` of pairs with unequal plain first items (a tensor after each) is
//! ordered by those first items, as Python's comparisons of such tuples are.

use rustpython_vm::function::{FuncArgs, KwArgs};
use rustpython_vm::{AsObject, PyObjectRef};

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

    /// `sorted(pairs)` (or `reverse=True`) without a key, of tuples whose first items are
    /// plain and pairwise unequal (`sorted(d.items())`): Python then compares each two tuples
    /// by their first items alone, so they are ordered by those, whatever the rest holds (a
    /// tensor). `None` for other arguments.
    pub(super) fn sorted_pairs(
        &mut self,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let Some(reverse) = self.sort_reverse(kwargs)? else {
            return Ok(None);
        };
        // Only what reading does not consume: the plain path may read it again.
        let [xs @ (Var::List(_) | Var::Tuple(_) | Var::View(..) | Var::CallerView(_))] = args
        else {
            return Ok(None);
        };
        let items = self.items(xs)?;
        let mut firsts: Vec<PyObjectRef> = Vec::with_capacity(items.len());
        for item in &items {
            let Var::Tuple(t) = item else {
                return Ok(None);
            };
            let Some(first) = t.first() else {
                return Ok(None);
            };
            let first = self.plain_obj(first, "a sort key")?;
            for seen in &firsts {
                if !matches!(vm.bool_eq(seen, &first), Ok(false)) {
                    return Ok(None);
                }
            }
            firsts.push(first);
        }
        let order = self.ordered_by("sorted", firsts, reverse)?;
        Ok(Some(Var::list(
            order.into_iter().map(|i| items[i].clone()).collect(),
        )))
    }

    /// `sorted`'s keywords when they are none or `reverse=` a bool: whether to reverse
    /// (`None`: other keywords, left to the general path).
    pub(super) fn sort_reverse(&mut self, kwargs: &[(String, Var)]) -> SimResult<Option<bool>> {
        let vm = self.vm;
        Ok(match kwargs {
            [] => Some(false),
            [(k, v)] if k == "reverse" => {
                let flag = self.plain_obj(v, "reverse")?;
                flag.class()
                    .is(vm.ctx.types.bool_type)
                    .then(|| flag.is(&vm.ctx.true_value))
            }
            _ => None,
        })
    }

    /// The positions of `items` as native `sorted` orders them by their keys (every
    /// position), or the one `min` or `max` picks.
    fn key_order(&mut self, name: &str, keyed: &Keyed, items: &[Var]) -> SimResult<Vec<usize>> {
        let mut keys = Vec::with_capacity(items.len());
        for item in items {
            let k = self.invoke(&keyed.key, vec![item.clone()], Vec::new())?;
            keys.push(self.plain_obj(&k, "a sort key")?);
        }
        self.ordered_by(name, keys, keyed.reverse)
    }

    /// The positions of items with the plain `keys` as native `sorted` orders them (every
    /// position), or the one `min` or `max` picks.
    fn ordered_by(
        &mut self,
        name: &str,
        keys: Vec<PyObjectRef>,
        reverse: bool,
    ) -> SimResult<Vec<usize>> {
        let vm = self.vm;
        let count = keys.len();
        let keys: PyObjectRef = vm.ctx.new_list(keys).into();
        let lookup = keys
            .get_attr("__getitem__", vm)
            .map_err(|_| Unsupported::new(Kind::Internal, "list.__getitem__"))?;
        let positions: Vec<PyObjectRef> = (0..count).map(|i| vm.ctx.new_int(i).into()).collect();
        let mut kw: Vec<(String, PyObjectRef)> = vec![("key".to_owned(), lookup)];
        if name == "sorted" {
            kw.push(("reverse".to_owned(), vm.ctx.new_bool(reverse).into()));
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
