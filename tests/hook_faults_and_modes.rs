//! What a plugin can get wrong never takes the interpreter down: a panic or an invalid
//! replacement is logged and the frame runs as is; a Python exception reaches the caller.
//! And the modes: RunOnly consults only the cache lookup, a decision can set the mode of the
//! callees, SkipCode stops the questions for a code object, generator frames run as is.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use common::*;
use rustpython_vm::builtins::PyCode;
use rustpython_vm::eval_hook::{
    CalleeMode, EvalFrameHook, EvalHookMode, FrameDecision, FrameEntry, FrameView,
};
use rustpython_vm::{PyRef, PyResult, VirtualMachine};

/// A hook whose behaviour on the frame named `target` is given by a closure.
struct OnTarget<F: Fn(&FrameView<'_>, &VirtualMachine) -> PyResult<FrameDecision> + Send + Sync> {
    target: &'static str,
    act: F,
    seen: Mutex<Vec<String>>,
}

impl<F> EvalFrameHook for OnTarget<F>
where
    F: Fn(&FrameView<'_>, &VirtualMachine) -> PyResult<FrameDecision> + Send + Sync + 'static,
{
    fn on_frame(&self, frame: &FrameView<'_>, vm: &VirtualMachine) -> PyResult<FrameDecision> {
        let name = frame.code().qualname.as_str().to_owned();
        self.seen.lock().unwrap().push(name.clone());
        if name == self.target {
            (self.act)(frame, vm)
        } else {
            Ok(FrameDecision::run_default())
        }
    }
    fn wants_generator_events(&self) -> bool {
        true
    }
}

fn on_target<F>(target: &'static str, act: F) -> Arc<OnTarget<F>>
where
    F: Fn(&FrameView<'_>, &VirtualMachine) -> PyResult<FrameDecision> + Send + Sync + 'static,
{
    Arc::new(OnTarget {
        target,
        act,
        seen: Mutex::new(Vec::new()),
    })
}

const PROGRAM: &str =
    "def target(x):\n    return x * 2\ndef caller():\n    return [target(i) for i in range(3)]\n";

#[test]
fn a_panicking_plugin_is_logged_and_the_frame_runs_as_is() {
    collect_logs();
    with_vm(|vm| {
        let scope = exec(vm, PROGRAM, "prog.py");
        vm.set_eval_frame_hook(Some(on_target("target", |_, _| panic!("plugin bug 7431"))));
        vm.set_eval_hook_mode(EvalHookMode::Active);
        let got = eval_repr(vm, &scope, "caller()");
        assert_eq!(
            vm.eval_hook_mode(),
            EvalHookMode::Active,
            "the mode survives the panic"
        );
        vm.set_eval_hook_mode(EvalHookMode::Disabled);
        assert_eq!(got, "[0, 2, 4]");
    });
    let logged = logged("eval_hook", "plugin bug 7431");
    assert_eq!(
        logged.len(),
        3,
        "one log line per panicking call: {logged:?}"
    );
    assert!(
        logged[0].contains("target (prog.py:1)") && logged[0].contains("runs as is"),
        "{logged:?}"
    );
}

#[test]
fn a_raising_plugin_gives_the_caller_a_python_exception() {
    with_vm(|vm| {
        let scope = exec(vm, PROGRAM, "prog.py");
        let hook = on_target("target", |_, vm| {
            Err(vm.new_runtime_error("the plugin refuses"))
        });
        vm.set_eval_frame_hook(Some(hook));
        vm.set_eval_hook_mode(EvalHookMode::Active);
        exec_in(vm, &scope, "try:\n    caller()\n    outcome = 'no error'\nexcept RuntimeError as e:\n    outcome = str(e)\nafter = target.__name__\n", "driver.py").unwrap();
        vm.set_eval_hook_mode(EvalHookMode::Disabled);
        assert_eq!(
            eval_repr(vm, &scope, "(outcome, after)"),
            "('the plugin refuses', 'target')"
        );
    });
}

/// Compile `src` (defining `target`) and return its `target.__code__`.
fn target_code(vm: &VirtualMachine, src: &str) -> PyRef<PyCode> {
    let scope = exec(vm, src, "alt.py");
    eval(vm, &scope, "target.__code__")
        .unwrap()
        .downcast::<PyCode>()
        .unwrap()
}

#[test]
fn invalid_replacements_are_refused_with_the_reason_logged() {
    collect_logs();
    let cases = [
        (
            "def target(x, extra):\n    return 0\n",
            "argument \"extra\" is not an argument of the original",
        ),
        (
            "def target(x):\n    yield 0\n",
            "is a generator or coroutine",
        ),
        (
            "def outer():\n    free = 1\n    def target(x):\n        return free\n    return target\ntarget = outer()\n",
            "free variable \"free\" is not a free variable",
        ),
    ];
    for (alt_src, reason) in cases {
        with_vm(|vm| {
            let scope = exec(vm, PROGRAM, "prog.py");
            let alt = target_code(vm, alt_src);
            let hook = on_target("target", move |_, _| {
                Ok(FrameDecision::replace(alt.clone()))
            });
            vm.set_eval_frame_hook(Some(hook));
            vm.set_eval_hook_mode(EvalHookMode::Active);
            let got = eval_repr(vm, &scope, "caller()");
            vm.set_eval_hook_mode(EvalHookMode::Disabled);
            assert_eq!(got, "[0, 2, 4]", "the original ran for {reason}");
        });
        let logged = logged("eval_hook", reason);
        assert!(!logged.is_empty(), "no log line says {reason:?}");
        assert!(
            logged[0].contains("replacement refused for target (prog.py:1)"),
            "{logged:?}"
        );
    }
}

#[test]
fn module_code_cannot_be_replaced_by_a_function_body() {
    // Scope flags must agree: a module frame keeps its namespace mapping.
    collect_logs();
    with_vm(|vm| {
        let scope = exec(
            vm,
            "def target(x):\n    return x\nsrc = compile('y = 1', 'modprobe.py', 'exec')\nns = {}\n",
            "prog.py",
        );
        let func_code = target_code(vm, "def target(x):\n    return x\n");
        let hook = Arc::new(OnTarget {
            target: "<module>",
            act: move |_: &FrameView<'_>, _: &VirtualMachine| {
                Ok(FrameDecision::replace(func_code.clone()))
            },
            seen: Mutex::new(Vec::new()),
        });
        vm.set_eval_frame_hook(Some(hook));
        vm.set_eval_hook_mode(EvalHookMode::Active);
        exec_in(vm, &scope, "exec(src, ns)", "driver.py").unwrap();
        vm.set_eval_hook_mode(EvalHookMode::Disabled);
        assert_eq!(eval_repr(vm, &scope, "ns['y']"), "1");
    });
    assert!(!logged("eval_hook", "scope flags").is_empty());
}

/// Counts `on_frame` and `lookup` calls; `lookup` answers with `alt` for `target`.
struct Counting {
    on_frame: AtomicUsize,
    lookups: AtomicUsize,
    alt: PyRef<PyCode>,
}

impl EvalFrameHook for Counting {
    fn on_frame(&self, _: &FrameView<'_>, _: &VirtualMachine) -> PyResult<FrameDecision> {
        self.on_frame.fetch_add(1, Ordering::Relaxed);
        Ok(FrameDecision::run_default())
    }
    fn lookup(&self, frame: &FrameView<'_>, _: &VirtualMachine) -> PyResult<Option<PyRef<PyCode>>> {
        self.lookups.fetch_add(1, Ordering::Relaxed);
        Ok((frame.code().qualname.as_str() == "target").then(|| self.alt.clone()))
    }
}

#[test]
fn run_only_mode_consults_only_the_lookup() {
    with_vm(|vm| {
        let scope = exec(vm, PROGRAM, "prog.py");
        let alt = target_code(vm, "def target(x):\n    return -x\n");
        let hook = Arc::new(Counting {
            on_frame: AtomicUsize::new(0),
            lookups: AtomicUsize::new(0),
            alt,
        });
        vm.set_eval_frame_hook(Some(hook.clone()));
        vm.set_eval_hook_mode(EvalHookMode::RunOnly);
        let got = eval_repr(vm, &scope, "caller()");
        vm.set_eval_hook_mode(EvalHookMode::Disabled);
        assert_eq!(got, "[0, -1, -2]");
        assert_eq!(hook.on_frame.load(Ordering::Relaxed), 0);
        // caller, target x3, and the frames of the test's own expression
        assert!(hook.lookups.load(Ordering::Relaxed) >= 4);
    });
}

#[test]
fn a_decision_sets_the_mode_of_the_callees() {
    with_vm(|vm| {
        let scope = exec(vm, PROGRAM, "prog.py");
        let hook = on_target("caller", |_, _| {
            Ok(FrameDecision::run_default().with_callees(CalleeMode::Set(EvalHookMode::Disabled)))
        });
        vm.set_eval_frame_hook(Some(hook.clone()));
        vm.set_eval_hook_mode(EvalHookMode::Active);
        exec_in(vm, &scope, "caller()\ntarget(1)\n", "driver.py").unwrap();
        assert_eq!(
            vm.eval_hook_mode(),
            EvalHookMode::Active,
            "restored after caller returns"
        );
        vm.set_eval_hook_mode(EvalHookMode::Disabled);
        // (run_string also runs linecache's frames, which are not of interest here)
        let seen: Vec<_> = hook
            .seen
            .lock()
            .unwrap()
            .iter()
            .filter(|n| ["caller", "target"].contains(&n.as_str()))
            .cloned()
            .collect();
        assert_eq!(
            seen,
            ["caller", "target"],
            "the three calls inside caller are not seen"
        );
    });
}

#[test]
fn skip_code_is_asked_once_per_code_object() {
    with_vm(|vm| {
        let scope = exec(vm, PROGRAM, "prog.py");
        let hook = on_target("target", |_, _| Ok(FrameDecision::skip_code()));
        vm.set_eval_frame_hook(Some(hook.clone()));
        vm.set_eval_hook_mode(EvalHookMode::Active);
        let got = eval_repr(vm, &scope, "(caller(), caller())");
        vm.set_eval_hook_mode(EvalHookMode::Disabled);
        assert_eq!(got, "([0, 2, 4], [0, 2, 4])");
        let seen = hook.seen.lock().unwrap().clone();
        assert_eq!(seen.iter().filter(|n| *n == "target").count(), 1);
        let code = eval(vm, &scope, "target.__code__")
            .unwrap()
            .downcast::<PyCode>()
            .unwrap();
        assert!(code.eval_hook_skipped());
    });
}

#[test]
fn generator_frames_run_as_is_and_are_reported_once() {
    with_vm(|vm| {
        let scope = exec(
            vm,
            "def gen(n):\n    for i in range(n):\n        yield i\n",
            "prog.py",
        );
        let kinds = Arc::new(Mutex::new(Vec::new()));
        let alt = target_code(vm, "def target(x):\n    return 0\n");
        struct GenHook(Arc<Mutex<Vec<(FrameEntry, String)>>>, PyRef<PyCode>);
        impl EvalFrameHook for GenHook {
            fn on_frame(&self, f: &FrameView<'_>, _: &VirtualMachine) -> PyResult<FrameDecision> {
                self.0
                    .lock()
                    .unwrap()
                    .push((f.entry(), f.code().qualname.as_str().to_owned()));
                // Asking to replace a generator frame is ignored (and logged).
                Ok(if f.entry() == FrameEntry::GeneratorStart {
                    FrameDecision::replace(self.1.clone())
                } else {
                    FrameDecision::run_default()
                })
            }
            fn wants_generator_events(&self) -> bool {
                true
            }
        }
        vm.set_eval_frame_hook(Some(Arc::new(GenHook(kinds.clone(), alt))));
        vm.set_eval_hook_mode(EvalHookMode::Active);
        let got = eval_repr(vm, &scope, "(list(gen(3)), sum(gen(4)))");
        vm.set_eval_hook_mode(EvalHookMode::Disabled);
        assert_eq!(got, "([0, 1, 2], 6)");
        let gens: Vec<_> = kinds
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, n)| n == "gen")
            .cloned()
            .collect();
        assert_eq!(
            gens,
            [
                (FrameEntry::GeneratorStart, "gen".to_owned()),
                (FrameEntry::GeneratorStart, "gen".to_owned())
            ]
        );
    });
}

#[test]
fn generators_a_warm_for_loop_starts_are_reported_each_time() {
    // The inner loop's site specializes (FOR_ITER_GEN, kept under the hook): each generator
    // it starts is still reported, and the sums are the plain ones.
    with_vm(|vm| {
        let scope = exec(
            vm,
            "def gen(n):\n    for i in range(n):\n        yield i\ndef total(k):\n    s = 0\n    for _ in range(k):\n        for v in gen(3):\n            s += v\n    return s\n",
            "prog.py",
        );
        let starts = Arc::new(Mutex::new(0usize));
        struct Count(Arc<Mutex<usize>>);
        impl EvalFrameHook for Count {
            fn on_frame(&self, f: &FrameView<'_>, _: &VirtualMachine) -> PyResult<FrameDecision> {
                if f.entry() == FrameEntry::GeneratorStart && f.code().qualname.as_str() == "gen" {
                    *self.0.lock().unwrap() += 1;
                }
                Ok(FrameDecision::run_default())
            }
            fn wants_generator_events(&self) -> bool {
                true
            }
        }
        vm.set_eval_frame_hook(Some(Arc::new(Count(starts.clone()))));
        vm.set_eval_hook_mode(EvalHookMode::Active);
        let got = eval_repr(vm, &scope, "(total(40), total(60))");
        vm.set_eval_hook_mode(EvalHookMode::Disabled);
        assert_eq!(got, "(120, 180)");
        assert_eq!(*starts.lock().unwrap(), 100);
    });
}

#[test]
fn threads_start_in_the_default_mode() {
    with_vm(|vm| {
        let scope = exec(
            vm,
            "import threading\ndef in_thread():\n    return 1\ndef run():\n    t = threading.Thread(target=in_thread)\n    t.start()\n    t.join()\n",
            "prog.py",
        );
        let hook = on_target("never", |_, _| Ok(FrameDecision::run_default()));
        vm.set_eval_frame_hook(Some(hook.clone()));
        vm.set_eval_hook_thread_default(EvalHookMode::Active);
        vm.set_eval_hook_mode(EvalHookMode::Active);
        exec_in(vm, &scope, "run()", "driver.py").unwrap();
        vm.set_eval_hook_mode(EvalHookMode::Disabled);
        vm.set_eval_hook_thread_default(EvalHookMode::Disabled);
        assert!(
            hook.seen.lock().unwrap().iter().any(|n| n == "in_thread"),
            "the new thread's frame was seen"
        );
    });
}

/// Each thread keeps a copy of the installed hook (so that a frame takes it without a lock):
/// a hook installed while another thread is between two calls is still the one its next
/// frame consults, and the previous hook is let go of, on the installing thread at once and
/// on the other when it ends.
/// The threads meet through native locks, whose acquire and release start no frame: with an
/// `Event` the worker's frames of `set` and `wait` raced the install and could consult the
/// first hook after the count was read.
#[test]
fn a_replaced_hook_is_consulted_from_the_next_frame_on_every_thread() {
    with_vm(|vm| {
        let scope = exec(
            vm,
            "import threading, _thread\n\
             def target():\n    return 1\n\
             go = _thread.allocate_lock()\n\
             called = _thread.allocate_lock()\n\
             go.acquire()\n\
             called.acquire()\n\
             def worker():\n    target()\n    called.release()\n    go.acquire()\n    target()\n",
            "prog.py",
        );
        let run = |_: &FrameView<'_>, _: &VirtualMachine| Ok(FrameDecision::run_default());
        let (first, second) = (on_target("never", run), on_target("never", run));
        let targets = |seen: &Mutex<Vec<String>>| {
            let seen = seen.lock().unwrap();
            seen.iter().filter(|n| *n == "target").count()
        };
        vm.set_eval_frame_hook(Some(first.clone()));
        vm.set_eval_hook_thread_default(EvalHookMode::Active);
        vm.set_eval_hook_mode(EvalHookMode::Active);
        exec_in(
            vm,
            &scope,
            "t = threading.Thread(target=worker)\nt.start()\ncalled.acquire()\n",
            "driver.py",
        )
        .unwrap();
        vm.set_eval_frame_hook(Some(second.clone()));
        let seen_by_first = first.seen.lock().unwrap().len();
        exec_in(vm, &scope, "go.release()\nt.join()\n", "driver.py").unwrap();
        vm.set_eval_hook_mode(EvalHookMode::Disabled);
        vm.set_eval_hook_thread_default(EvalHookMode::Disabled);
        assert_eq!(targets(&first.seen), 1, "the worker's first call");
        assert_eq!(targets(&second.seen), 1, "the worker's second call");
        assert_eq!(
            first.seen.lock().unwrap().len(),
            seen_by_first,
            "no frame consults the replaced hook"
        );
        assert_eq!(
            Arc::strong_count(&first),
            1,
            "the replaced hook is let go of"
        );
        vm.set_eval_frame_hook(None);
        assert_eq!(
            Arc::strong_count(&second),
            1,
            "the removed hook is let go of"
        );
    });
}

#[test]
fn frame_view_reads_arguments_cells_and_free_variables_by_name() {
    with_vm(|vm| {
        let scope = exec(
            vm,
            "def outer(a):\n    k = 'free'\n    def target(x, *rest, key=None):\n        return k\n    return target\nt = outer(0)\n",
            "prog.py",
        );
        let seen = Arc::new(Mutex::new(String::new()));
        let sink = seen.clone();
        let hook = on_target("outer.<locals>.target", move |f, vm| {
            let show = |n: &str| {
                f.get(n)
                    .map(|v| v.repr(vm).unwrap().to_string_lossy().into_owned())
            };
            *sink.lock().unwrap() = format!(
                "{:?} {:?} {:?} {:?} fn={} lasti={}",
                show("x"),
                show("rest"),
                show("key"),
                show("k"),
                f.function()
                    .is_some_and(|func| func.class().name().to_string() == "function"),
                f.lasti()
            );
            Ok(FrameDecision::run_default())
        });
        vm.set_eval_frame_hook(Some(hook));
        vm.set_eval_hook_mode(EvalHookMode::Active);
        exec_in(vm, &scope, "t(1, 2, 3, key='v')", "driver.py").unwrap();
        vm.set_eval_hook_mode(EvalHookMode::Disabled);
        assert_eq!(
            *seen.lock().unwrap(),
            "Some(\"1\") Some(\"(2, 3)\") Some(\"'v'\") Some(\"'free'\") fn=true lasti=0"
        );
    });
}

#[test]
fn plugin_data_lives_on_the_code_object_and_dies_with_it() {
    use rustpython_vm::eval_hook::request_code_extra_index;
    struct DropFlag(Arc<AtomicUsize>);
    impl Drop for DropFlag {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let mine = request_code_extra_index();
    let other = request_code_extra_index();
    assert_ne!(mine, other, "each plugin gets its own index");
    let dropped = Arc::new(AtomicUsize::new(0));
    with_vm(|vm| {
        let scope = exec(vm, "def target(x):\n    return x\n", "prog.py");
        {
            let code = eval(vm, &scope, "target.__code__")
                .unwrap()
                .downcast::<PyCode>()
                .unwrap();
            code.set_hook_extra(mine, Some(Arc::new(DropFlag(dropped.clone()))));
            assert!(code.hook_extra(other).is_none());
        }
        let code = eval(vm, &scope, "target.__code__")
            .unwrap()
            .downcast::<PyCode>()
            .unwrap();
        let data = code.hook_extra(mine).expect("stored on the code object");
        assert!(data.downcast_ref::<DropFlag>().is_some());
        drop((data, code));
        assert_eq!(dropped.load(Ordering::SeqCst), 0);
        exec_in(
            vm,
            &scope,
            "del target\n__test_result__ = None\n",
            "driver.py",
        )
        .unwrap();
        assert_eq!(
            dropped.load(Ordering::SeqCst),
            1,
            "released with the code object"
        );
    });
}

#[test]
fn python_code_run_by_a_plugin_is_not_hooked() {
    // The plugin calls a Python function for every frame it sees: without the suspension this
    // would recurse forever; with it, the helper's frames are never shown to the plugin.
    with_vm(|vm| {
        let scope = exec(
            vm,
            "seen_by_helper = []\ndef helper(name):\n    seen_by_helper.append(name)\n    return len(name)\n",
            "prog.py",
        );
        exec_in(vm, &scope, PROGRAM, "prog.py").unwrap();
        let helper = eval(vm, &scope, "helper").unwrap();
        let hook = on_target("target", move |f, vm| {
            assert_eq!(
                vm.eval_hook_mode(),
                EvalHookMode::Disabled,
                "suspended while the plugin runs"
            );
            helper.call((f.code().qualname.as_str().to_owned(),), vm)?;
            Ok(FrameDecision::run_default())
        });
        vm.set_eval_frame_hook(Some(hook.clone()));
        vm.set_eval_hook_mode(EvalHookMode::Active);
        let got = eval_repr(vm, &scope, "caller()");
        vm.set_eval_hook_mode(EvalHookMode::Disabled);
        assert_eq!(got, "[0, 2, 4]");
        assert_eq!(
            eval_repr(vm, &scope, "seen_by_helper"),
            "['target', 'target', 'target']"
        );
        assert!(
            !hook.seen.lock().unwrap().iter().any(|n| n == "helper"),
            "helper's frames were hooked"
        );
    });
}
