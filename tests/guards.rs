//! Guards evaluated on real frames, through the hook, before the frame runs: each source is
//! re-read from the frame (locals, globals, builtins, closure cells, attributes, items) and
//! the first failing guard is named in its readable form.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use rustpython_vm::eval_hook::{EvalFrameHook, FrameDecision, FrameView};
use rustpython_vm::{PyResult, VirtualMachine};
use symtrace::tensor::{DType, Meta};
use symtrace::translate::{Check, Guard, GuardSet, Source};

/// Checks `guards` on every frame of `f` and records the verdicts.
struct Checker {
    guards: Mutex<Option<GuardSet>>,
    verdicts: Mutex<Vec<String>>,
}

impl EvalFrameHook for Checker {
    fn on_frame(&self, frame: &FrameView<'_>, vm: &VirtualMachine) -> PyResult<FrameDecision> {
        if frame.code().obj_name.as_str() == "f"
            && let Some(set) = self.guards.lock().unwrap().as_ref()
        {
            let verdict = match set.check(frame, vm) {
                Ok(()) => "ok".to_owned(),
                Err(Some(g)) => format!("failed: {g}"),
                Err(None) => "failed, but each guard holds when read again".to_owned(),
            };
            self.verdicts.lock().unwrap().push(verdict);
        }
        Ok(FrameDecision::run_default())
    }
}

const PROGRAM: &str = "\
import symtrace as st
scale = 2.0
class Model:
    def __init__(self):
        self.w = st.ones(3)
def make():
    k = 4
    def f(x, n, xs, m, flag=None):
        return k
    return f
f = make()
model = Model()
class MyInt(int):
    pass
";

#[test]
fn guards_read_every_kind_of_source_and_name_the_first_failure() {
    with_vm(|vm| {
        let scope = exec(vm, PROGRAM, "guards.py");
        let len_builtin = eval(vm, &scope, "len").unwrap();
        let tensor = |shape: Vec<usize>| {
            Check::tensor(Meta {
                shape,
                dtype: DType::Float64,
            })
        };
        let set = GuardSet::new(vec![
            Guard::new(Source::Local("x".into()), tensor(vec![2, 3])),
            Guard::new(Source::Local("n".into()), Check::EqInt(3)),
            Guard::new(Source::Local("xs".into()), Check::Len(2)),
            Guard::new(Source::Local("xs".into()).item(1), Check::EqStr("b".into())),
            Guard::new(Source::Local("m".into()).attr("w"), tensor(vec![3])),
            Guard::new(Source::Local("flag".into()), Check::IsNone),
            Guard::new(Source::Global("scale".into()), Check::EqFloat(2.0)),
            Guard::new(Source::Global("missing".into()), Check::Absent),
            Guard::new(Source::Builtin("len".into()), Check::is(len_builtin)),
            Guard::new(Source::Free("k".into()), Check::EqInt(4)),
        ]);
        let text = set.to_string();
        assert!(
            text.contains("L['x'] is a float64 tensor of shape [2, 3]"),
            "{text}"
        );
        assert!(text.contains("L['xs'][1] == \"b\""), "{text}");
        assert!(
            text.contains("L['m'].w is a float64 tensor of shape [3]"),
            "{text}"
        );
        assert!(
            text.contains("B['len'] is <builtin_function_or_method object at"),
            "{text}"
        );
        assert!(text.contains("F['k'] == 4"), "{text}");

        let checker = Arc::new(Checker {
            guards: Mutex::new(Some(set)),
            verdicts: Mutex::new(Vec::new()),
        });
        symtrace::activate(vm, checker.clone());
        let calls = "\
f(st.zeros(2, 3), 3, ['a', 'b'], model)
f(st.zeros(3), 3, ['a', 'b'], model)
f(st.zeros(2, 3), 3.0, ['a', 'b'], model)
f(st.zeros(2, 3), MyInt(3), ['a', 'b'], model)
f(st.zeros(2, 3), (10**30 + 3) - 10**30, ['a', 'b'], model)
f(st.zeros(2, 3), 3, ('a', 'b', 'c'), model)
f(st.zeros(2, 3), 3, ['a', 'c'], model)
model.w = st.ones(4)
f(st.zeros(2, 3), 3, ['a', 'b'], model)
model.w = st.ones(3)
f(st.zeros(2, 3), 3, ['a', 'b'], model, flag=True)
scale = 2.5
f(st.zeros(2, 3), 3, ['a', 'b'], model)
scale = 2.0
missing = 1
f(st.zeros(2, 3), 3, ['a', 'b'], model)
del missing
len = lambda x: 0
f(st.zeros(2, 3), 3, ['a', 'b'], model)
del len
f(st.zeros(2, 3), 3, ['a', 'b'], model)
";
        exec_in(vm, &scope, calls, "guards.py").unwrap_or_else(|e| panic!("{}", describe(vm, &e)));
        vm.set_eval_frame_hook(None);
        let verdicts = checker.verdicts.lock().unwrap().clone();
        assert_eq!(
            verdicts,
            [
                "ok",
                "failed: L['x'] is a float64 tensor of shape [2, 3]",
                "failed: L['n'] == 3",
                "failed: L['n'] == 3", // an int subclass, equal in value
                "ok",                  // an int made by arithmetic: another object, equal
                "failed: len(L['xs']) == 2",
                "failed: L['xs'][1] == \"b\"",
                "failed: L['m'].w is a float64 tensor of shape [3]",
                "failed: L['flag'] is None",
                "failed: G['scale'] == 2.0",
                "failed: G['missing'] is absent",
                "ok", // a global `len` shadows nothing the guard reads: B['len'] is still the builtin
                "ok",
            ]
        );
    });
}

/// A cache entry's guards hold the objects they compare by identity weakly: the class is
/// collected as without them, and the set fails from then on, even for another class that
/// takes the dead one's address.
#[test]
fn an_entrys_guards_let_their_classes_go() {
    with_vm(|vm| {
        let scope = exec(
            vm,
            "import gc, weakref\nclass C: pass\nc = C()\nr = weakref.ref(C)\n",
            "weak.py",
        );
        // Read from the globals: a value `eval` returned stays referenced after it.
        let class = scope.globals.get_item("C", vm).unwrap();
        let mut set = GuardSet::new(vec![
            Guard::new(
                Source::Global("c".into()),
                Check::type_is(class.clone().downcast().unwrap()),
            ),
            Guard::new(Source::Global("C".into()), Check::is(class.clone())),
            Guard::new(Source::object(class.clone()), Check::Absent),
        ]);
        drop(class);
        set.weaken(vm);
        assert!(!set.lost_an_object());
        let text = set.to_string();
        assert!(text.contains("type(G['c']) is C"), "{text}");
        exec_in(
            vm,
            &scope,
            "del C, c\ngc.collect()\nassert r() is None, 'the guards kept the class alive'\n",
            "weak.py",
        )
        .unwrap_or_else(|e| panic!("{}", describe(vm, &e)));
        assert!(set.lost_an_object());
        let text = set.to_string();
        assert!(text.contains("collected object at"), "{text}");
    });
}
