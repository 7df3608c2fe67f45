//! `itertools` as the simulation steps it. The combinatoric iterators (`product`,
//! `combinations`, `combinations_with_replacement`, `permutations`) read their inputs whole
//! when made, as CPython's do, so they are made whole here: an iterator over their tuples
//! (made again at a graph break as one over what it has left, whose type is then a tuple
//! iterator's). The others read lazily, one step at a time, and so do these
//! ([`Itertool`]): `chain` and `chain.from_iterable`, `islice`, `count`, `repeat`,
//! `pairwise`, `starmap` and `accumulate`, each made again at a graph break as the same
//! itertools object over what its inputs have left.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use rustpython_vm::builtins::PyStr;
use rustpython_vm::bytecode::BinaryOperator;
use rustpython_vm::{AsObject, PyObjectRef, VirtualMachine};

use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, State, Unsupported, unsupported};
use crate::translate::values::Var;
use crate::translate::values::iterators::Stepper;

/// A lazy itertools iterator: what it holds between steps.
#[derive(Debug)]
pub enum Itertool {
    /// `chain(*its)` (`outer` iterates the arguments) and `chain.from_iterable(outer)`:
    /// `current` is the iterator of the input being read.
    Chain {
        current: Option<Var>,
        outer: Var,
    },
    /// `islice(inner, start, stop, step)` as CPython steps it: `read` inputs taken so far,
    /// `next` the input to give next (inputs before it are read and dropped, even where
    /// none is given: `islice(it, 2, 2)` reads two), `stop` where reading ends. `inner` is
    /// `None` once it has ended: an ended islice never reads its input again.
    Islice {
        inner: Option<Var>,
        read: usize,
        next: usize,
        stop: Option<usize>,
        step: usize,
    },
    Count {
        next: i64,
        step: i64,
    },
    /// `repeat(item)` without a count.
    Repeat {
        item: Var,
    },
    /// `pairwise(inner)`: `prev` the item the next pair starts with.
    Pairwise {
        inner: Var,
        prev: Option<Var>,
    },
    Starmap {
        func: Var,
        inner: Var,
    },
    /// `accumulate(inner, func, initial=...)`: `total` the last item given; `initial` to be
    /// given before the first input is read.
    Accumulate {
        inner: Var,
        func: Option<Var>,
        total: Option<Var>,
        initial: Option<Var>,
    },
}

impl Itertool {
    /// Every value it holds (for the analyses that walk what a value reaches).
    pub fn held(&self) -> Vec<&Var> {
        match self {
            Itertool::Chain { current, outer } => current.iter().chain([outer]).collect(),
            Itertool::Islice { inner, .. } => inner.iter().collect(),
            Itertool::Count { .. } => Vec::new(),
            Itertool::Repeat { item } => vec![item],
            Itertool::Pairwise { inner, prev } => prev.iter().chain([inner]).collect(),
            Itertool::Starmap { func, inner } => vec![func, inner],
            Itertool::Accumulate {
                inner,
                func,
                total,
                initial,
            } => [Some(inner), func.as_ref(), total.as_ref(), initial.as_ref()]
                .into_iter()
                .flatten()
                .collect(),
        }
    }
}

/// The itertools type or function `o` is (`itertools.chain.from_iterable` as
/// `"chain.from_iterable"`), when it is the module's own.
pub fn itertools_name(o: &PyObjectRef, vm: &VirtualMachine) -> Option<&'static str> {
    const NAMES: [&str; 11] = [
        "product",
        "combinations",
        "combinations_with_replacement",
        "permutations",
        "chain",
        "islice",
        "count",
        "repeat",
        "pairwise",
        "starmap",
        "accumulate",
    ];
    let module = crate::translate::loaded_modules::loaded_module("itertools", vm)?;
    for name in NAMES {
        if module.get_attr(name, vm).ok()?.is(o) {
            return Some(name);
        }
    }
    // A classmethod read from its class is a new bound object each time: known by its
    // class and name.
    let chain = module.get_attr("chain", vm).ok()?;
    let owner = o.get_attr("__self__", vm).ok()?;
    let name = o.get_attr("__name__", vm).ok()?;
    (owner.is(&chain)
        && name
            .downcast_ref::<PyStr>()
            .is_some_and(|n| n.to_str() == Some("from_iterable")))
    .then_some("chain.from_iterable")
}

fn tool(t: Itertool) -> Var {
    Var::Stepper(Rc::new(RefCell::new(Stepper::Tool(t))))
}

fn made_whole(items: Vec<Var>) -> Var {
    Var::Iter(Rc::new(RefCell::new(VecDeque::from(items))))
}

/// The index tuples of the combinatoric iterators over a pool of `n`, in CPython's order.
fn combinatoric(name: &str, n: usize, r: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut current = Vec::with_capacity(r);
    fn walk(name: &str, n: usize, r: usize, current: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if current.len() == r {
            out.push(current.clone());
            return;
        }
        let from = match (name, current.last()) {
            ("combinations", Some(&last)) => last + 1,
            ("combinations_with_replacement", Some(&last)) => last,
            _ => 0,
        };
        for i in from..n {
            if name == "permutations" && current.contains(&i) {
                continue;
            }
            current.push(i);
            walk(name, n, r, current, out);
            current.pop();
        }
    }
    walk(name, n, r, &mut current, &mut out);
    out
}

/// How many items a made-whole iterator may give before the simulation refuses it (a
/// combinatoric explosion is no graph's business).
const MAX_MADE: usize = 100_000;

impl State<'_> {
    /// A non-negative int argument.
    fn count_arg(&mut self, v: &Var, what: &str) -> SimResult<usize> {
        let vm = self.vm;
        let o = self.plain_obj(v, what)?;
        let i = o
            .try_index(vm)
            .ok()
            .and_then(|i| i.try_to_primitive::<i64>(vm).ok())
            .ok_or_else(|| Unsupported::new(Kind::Raises, format!("{what} is not an int")))?;
        usize::try_from(i).map_err(|_| Unsupported::new(Kind::Raises, format!("{what} < 0")))
    }

    fn int_arg(&mut self, v: &Var, what: &str) -> SimResult<i64> {
        let vm = self.vm;
        let o = self.plain_obj(v, what)?;
        if !o.class().is(vm.ctx.types.int_type) {
            return unsupported(Kind::Value, format!("{what} that is not an int"));
        }
        o.try_index(vm)
            .ok()
            .and_then(|i| i.try_to_primitive::<i64>(vm).ok())
            .ok_or_else(|| Unsupported::new(Kind::Value, format!("{what} out of range")))
    }

    /// A call to `itertools.<name>`.
    pub(super) fn itertools_call(
        &mut self,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> SimResult<Var> {
        let kw = |key: &str| kwargs.iter().find(|(k, _)| k == key).map(|(_, v)| v);
        let allowed: &[&str] = match name {
            "product" => &["repeat"],
            "combinations" | "combinations_with_replacement" | "permutations" => &["r"],
            "count" => &["start", "step"],
            "repeat" => &["times"],
            "accumulate" => &["func", "initial"],
            _ => &[],
        };
        if let Some((k, _)) = kwargs.iter().find(|(k, _)| !allowed.contains(&k.as_str())) {
            return unsupported(
                Kind::Raises,
                format!("itertools.{name}() with keyword {k} (TypeError)"),
            );
        }
        match (name, args) {
            ("product", its) => {
                let repeat = match kw("repeat") {
                    Some(r) => self.count_arg(r, "product(repeat=)")?,
                    None => 1,
                };
                let mut pools = Vec::with_capacity(its.len());
                for it in its {
                    pools.push(self.items(it)?);
                }
                let pools: Vec<Vec<Var>> = (0..repeat).flat_map(|_| pools.clone()).collect();
                let count = pools
                    .iter()
                    .try_fold(1usize, |n, p| n.checked_mul(p.len()))
                    .filter(|&n| n <= MAX_MADE);
                if count.is_none() {
                    return unsupported(Kind::Value, "an itertools.product too large to make");
                }
                let mut tuples: Vec<Vec<Var>> = vec![Vec::new()];
                for pool in &pools {
                    tuples = tuples
                        .into_iter()
                        .flat_map(|t| {
                            pool.iter().map(move |x| {
                                let mut t = t.clone();
                                t.push(x.clone());
                                t
                            })
                        })
                        .collect();
                }
                Ok(made_whole(tuples.into_iter().map(Var::tuple).collect()))
            }
            (
                "combinations" | "combinations_with_replacement" | "permutations",
                [it, rest @ ..],
            ) if rest.len() <= 1 => {
                let pool = self.items(it)?;
                let r = match rest.first().or(kw("r")) {
                    Some(Var::Obj(o)) if name == "permutations" && self.vm.is_none(o) => pool.len(),
                    Some(r) => self.count_arg(r, "r")?,
                    None if name == "permutations" => pool.len(),
                    None => {
                        return unsupported(
                            Kind::Raises,
                            format!("{name}() missing argument r (TypeError)"),
                        );
                    }
                };
                if pool.len().saturating_pow(r as u32) > MAX_MADE || r > 64 {
                    return unsupported(Kind::Value, format!("an itertools.{name} too large"));
                }
                let tuples = combinatoric(name, pool.len(), r)
                    .into_iter()
                    .map(|ix| Var::tuple(ix.into_iter().map(|i| pool[i].clone()).collect()))
                    .collect();
                Ok(made_whole(tuples))
            }
            ("chain", its) => Ok(tool(Itertool::Chain {
                current: None,
                outer: made_whole(its.to_vec()),
            })),
            ("chain.from_iterable", [outer]) => {
                let outer = self.iterator_of(outer)?;
                Ok(tool(Itertool::Chain {
                    current: None,
                    outer,
                }))
            }
            ("islice", [it, bounds @ ..]) if (1..=3).contains(&bounds.len()) => {
                let bound = |s: &mut Self, v: &Var, what: &str| -> SimResult<Option<usize>> {
                    match v {
                        Var::Obj(o) if s.vm.is_none(o) => Ok(None),
                        v => s.count_arg(v, what).map(Some),
                    }
                };
                let (start, stop, step) = match bounds {
                    [stop] => (None, bound(self, stop, "islice stop")?, None),
                    [start, stop] => (
                        bound(self, start, "islice start")?,
                        bound(self, stop, "islice stop")?,
                        None,
                    ),
                    [start, stop, step] => (
                        bound(self, start, "islice start")?,
                        bound(self, stop, "islice stop")?,
                        bound(self, step, "islice step")?,
                    ),
                    _ => unreachable!("one to three bounds"),
                };
                let (start, step) = (start.unwrap_or(0), step.unwrap_or(1));
                if step == 0 {
                    return unsupported(Kind::Raises, "islice step 0 (ValueError)");
                }
                let inner = self.iterator_of(it)?;
                Ok(tool(Itertool::Islice {
                    inner: Some(inner),
                    read: 0,
                    next: start,
                    stop,
                    step,
                }))
            }
            ("count", positional) if positional.len() <= 2 => {
                let start = positional.first().or(kw("start"));
                let step = positional.get(1).or(kw("step"));
                let next = match start {
                    Some(v) => self.int_arg(v, "count start")?,
                    None => 0,
                };
                let step = match step {
                    Some(v) => self.int_arg(v, "count step")?,
                    None => 1,
                };
                Ok(tool(Itertool::Count { next, step }))
            }
            ("repeat", [item, rest @ ..]) if rest.len() <= 1 => {
                match rest.first().or(kw("times")) {
                    Some(times) => {
                        let n = self.int_arg(times, "repeat times")?.max(0) as usize;
                        if n > MAX_MADE {
                            return unsupported(Kind::Value, "an itertools.repeat too long");
                        }
                        Ok(made_whole(vec![item.clone(); n]))
                    }
                    None => Ok(tool(Itertool::Repeat { item: item.clone() })),
                }
            }
            ("pairwise", [it]) => {
                let inner = self.iterator_of(it)?;
                Ok(tool(Itertool::Pairwise { inner, prev: None }))
            }
            ("starmap", [func, it]) => {
                let inner = self.iterator_of(it)?;
                Ok(tool(Itertool::Starmap {
                    func: func.clone(),
                    inner,
                }))
            }
            ("accumulate", [it, rest @ ..]) if rest.len() <= 1 => {
                let inner = self.iterator_of(it)?;
                let func = rest
                    .first()
                    .or(kw("func"))
                    .filter(|f| !matches!(f, Var::Obj(o) if self.vm.is_none(o)))
                    .cloned();
                let initial = kw("initial")
                    .filter(|f| !matches!(f, Var::Obj(o) if self.vm.is_none(o)))
                    .cloned();
                Ok(tool(Itertool::Accumulate {
                    inner,
                    func,
                    total: None,
                    initial,
                }))
            }
            _ => unsupported(
                Kind::Raises,
                format!("itertools.{name}() with these arguments (TypeError)"),
            ),
        }
    }

    /// The next item of a lazy itertools iterator, `None` when it is exhausted. Its state
    /// is taken out while it steps (stepping an input may run code that reads this iterator:
    /// it finds it empty, where Python raises) and put back after; a step that fails ends the
    /// simulation there, which is made again stopping before it.
    pub(super) fn step_itertool(&mut self, s: &Rc<RefCell<Stepper>>) -> SimResult<Option<Var>> {
        let vm = self.vm;
        let put = |t: Itertool| *s.borrow_mut() = Stepper::Tool(t);
        let placeholder = Stepper::Tool(Itertool::Chain {
            current: None,
            outer: made_whole(Vec::new()),
        });
        let Stepper::Tool(taken) = std::mem::replace(&mut *s.borrow_mut(), placeholder) else {
            unreachable!("an itertools stepper")
        };
        match taken {
            Itertool::Chain { current, outer } => {
                let mut current = current;
                loop {
                    if let Some(it) = &current
                        && let Some(item) = self.next_item(it)?
                    {
                        put(Itertool::Chain { current, outer });
                        return Ok(Some(item));
                    }
                    match self.next_item(&outer)? {
                        Some(next) => current = Some(self.iterator_of(&next)?),
                        None => {
                            put(Itertool::Chain {
                                current: None,
                                outer,
                            });
                            return Ok(None);
                        }
                    }
                }
            }
            Itertool::Islice {
                inner,
                mut read,
                next,
                stop,
                step,
            } => {
                let ended = |read| Itertool::Islice {
                    inner: None,
                    read,
                    next,
                    stop,
                    step,
                };
                let Some(inner) = inner else {
                    put(ended(read));
                    return Ok(None);
                };
                while read < next {
                    if self.next_item(&inner)?.is_none() {
                        put(ended(read));
                        return Ok(None);
                    }
                    read += 1;
                }
                let item = match stop {
                    Some(stop) if read >= stop => None,
                    _ => self.next_item(&inner)?,
                };
                if item.is_none() {
                    put(ended(read));
                    return Ok(None);
                }
                // Past the stop, the next input to give is the stop itself: the inputs up
                // to it are still read (and dropped) by the step that ends the islice.
                let after = next
                    .checked_add(step)
                    .ok_or_else(|| Unsupported::new(Kind::Value, "an islice past usize"))?;
                put(Itertool::Islice {
                    inner: Some(inner),
                    read: read + 1,
                    next: match stop {
                        Some(stop) if after > stop => stop,
                        _ => after,
                    },
                    stop,
                    step,
                });
                Ok(item)
            }
            Itertool::Count { next, step } => {
                let after = next
                    .checked_add(step)
                    .ok_or_else(|| Unsupported::new(Kind::Value, "a count past 64 bits"))?;
                put(Itertool::Count { next: after, step });
                Ok(Some(Var::Obj(vm.ctx.new_int(next).into())))
            }
            Itertool::Repeat { item } => {
                put(Itertool::Repeat { item: item.clone() });
                Ok(Some(item))
            }
            Itertool::Pairwise { inner, prev } => {
                let first = match prev {
                    Some(p) => Some(p),
                    None => self.next_item(&inner)?,
                };
                let Some(first) = first else {
                    put(Itertool::Pairwise { inner, prev: None });
                    return Ok(None);
                };
                let second = self.next_item(&inner)?;
                put(Itertool::Pairwise {
                    inner,
                    prev: second.clone(),
                });
                Ok(second.map(|second| Var::tuple(vec![first, second])))
            }
            Itertool::Starmap { func, inner } => {
                let item = self.next_item(&inner)?;
                put(Itertool::Starmap {
                    func: func.clone(),
                    inner,
                });
                match item {
                    Some(args) => {
                        let args = self.items(&args)?;
                        self.invoke(&func, args, Vec::new()).map(Some)
                    }
                    None => Ok(None),
                }
            }
            Itertool::Accumulate {
                inner,
                func,
                total,
                initial,
            } => {
                if let Some(first) = initial {
                    put(Itertool::Accumulate {
                        inner,
                        func,
                        total: Some(first.clone()),
                        initial: None,
                    });
                    return Ok(Some(first));
                }
                let Some(item) = self.next_item(&inner)? else {
                    put(Itertool::Accumulate {
                        inner,
                        func,
                        total,
                        initial: None,
                    });
                    return Ok(None);
                };
                let next = match (&total, &func) {
                    (None, _) => item,
                    (Some(t), None) => self.binary(BinaryOperator::Add, t, &item)?,
                    (Some(t), Some(f)) => self.invoke(f, vec![t.clone(), item], Vec::new())?,
                };
                put(Itertool::Accumulate {
                    inner,
                    func,
                    total: Some(next.clone()),
                    initial: None,
                });
                Ok(Some(next))
            }
        }
    }
}

/// The itertools object named `name` (`chain.from_iterable` through `chain`).
pub fn itertools_object(name: &str, vm: &VirtualMachine) -> SimResult<PyObjectRef> {
    let mut o = crate::translate::loaded_modules::loaded_module("itertools", vm)
        .ok_or_else(|| Unsupported::new(Kind::Internal, "itertools is not loaded"))?;
    for part in name.split('.') {
        o = o
            .get_attr(&vm.ctx.new_str(part), vm)
            .map_err(|_| Unsupported::new(Kind::Internal, format!("itertools.{name}")))?;
    }
    Ok(o)
}
