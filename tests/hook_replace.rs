//! A plugin replaces a function's code with another code object: the new frame gets the
//! arguments, locals, cells and free variables of the original by name, and the result changes
//! accordingly.

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use rustpython_vm::builtins::PyCode;
use rustpython_vm::eval_hook::{EvalFrameHook, EvalHookMode, FrameDecision, FrameView};
use rustpython_vm::{AsObject, PyRef, PyResult, VirtualMachine, scope::Scope};

/// Replaces frames of the code objects in its table.
#[derive(Default)]
struct Replacer {
    table: Mutex<Vec<(PyRef<PyCode>, PyRef<PyCode>)>>,
}

impl EvalFrameHook for Replacer {
    fn on_frame(&self, frame: &FrameView<'_>, _vm: &VirtualMachine) -> PyResult<FrameDecision> {
        let table = self.table.lock().unwrap();
        Ok(match table.iter().find(|(orig, _)| orig.is(frame.code())) {
            Some((_, alt)) => FrameDecision::replace(alt.clone()),
            None => FrameDecision::run_default(),
        })
    }
}

fn code_of(vm: &VirtualMachine, scope: &Scope, expr: &str) -> PyRef<PyCode> {
    eval(vm, scope, expr).unwrap().downcast::<PyCode>().unwrap()
}

/// Install a [`Replacer`] that runs `replacement` for `original`, active on this thread.
fn activate_replacement(vm: &VirtualMachine, original: PyRef<PyCode>, replacement: PyRef<PyCode>) {
    let hook = Arc::new(Replacer::default());
    hook.table.lock().unwrap().push((original, replacement));
    vm.set_eval_frame_hook(Some(hook));
    vm.set_eval_hook_mode(EvalHookMode::Active);
}

/// Run ORIGINAL (file "orig.py") and ALTERNATIVE (file "orig.py" too, so that positions match)
/// in two scopes; make every code object `orig.EXPR` run as `alt.EXPR` for each EXPR in
/// `replaced`; then evaluate `expr` in the original scope with the hook active.
fn with_replacement(original: &str, alternative: &str, replaced: &[&str], expr: &str) -> String {
    with_vm(|vm| {
        let orig = exec(vm, original, "orig.py");
        let alt = exec(vm, alternative, "orig.py");
        let hook = Arc::new(Replacer::default());
        for e in replaced {
            hook.table
                .lock()
                .unwrap()
                .push((code_of(vm, &orig, e), code_of(vm, &alt, e)));
        }
        let plain = eval_repr(vm, &orig, expr);
        vm.set_eval_frame_hook(Some(hook));
        vm.set_eval_hook_mode(EvalHookMode::Active);
        let replaced = eval_repr(vm, &orig, expr);
        vm.set_eval_hook_mode(EvalHookMode::Disabled);
        assert_ne!(plain, replaced, "the replacement must change the result");
        replaced
    })
}

#[test]
fn defaults_are_bound_before_the_replacement_runs() {
    let got = with_replacement(
        "def f(a, b=10):\n    return a + b\n",
        "def f(a, b=10):\n    return (a, b, 'alt')\n",
        &["f.__code__"],
        "f(1)",
    );
    assert_eq!(got, "(1, 10, 'alt')");
}

#[test]
fn keyword_only_arguments() {
    let got = with_replacement(
        "def f(a, *, c, d=4):\n    return a + c + d\n",
        "def f(a, *, c, d=4):\n    return (a, c, d)\n",
        &["f.__code__"],
        "[f(1, c=3), f(1, d=7, c=2)]",
    );
    assert_eq!(got, "[(1, 3, 4), (1, 2, 7)]");
}

#[test]
fn star_args_and_star_kwargs() {
    let got = with_replacement(
        "def f(x, *args, **kwargs):\n    return len(args)\n",
        "def f(x, *args, **kwargs):\n    return (x, args, sorted(kwargs.items()))\n",
        &["f.__code__"],
        "f(0, 1, 2, z=3, y=4)",
    );
    assert_eq!(got, "(0, (1, 2), [('y', 4), ('z', 3)])");
}

#[test]
fn locals_laid_out_in_another_order() {
    // The replacement declares the arguments in the other order and has locals of its own
    // before them: values still land by name.
    let got = with_replacement(
        "def f(a, b):\n    t = a - b\n    return t\n",
        "def f(b, a):\n    u = 'alt'\n    v = [a, b]\n    t = a - b\n    return (t, u, v)\n",
        &["f.__code__"],
        "f(10, 3)",
    );
    assert_eq!(got, "(7, 'alt', [10, 3])");
}

#[test]
fn cells_of_the_replaced_frame() {
    // `outer`'s argument x and local y are cells captured by `inner`; the replacement's
    // prologue makes its own cells from the values copied by name.
    let got = with_replacement(
        "def outer(x):\n    y = 2\n    def inner(z):\n        return x + y + z\n    return inner(1)\n",
        "def outer(x):\n    y = 20\n    def inner(z):\n        return (x, y, z)\n    return inner(1)\n",
        &["outer.__code__"],
        "outer(5)",
    );
    assert_eq!(got, "(5, 20, 1)");
}

#[test]
fn free_variables_by_name_also_a_subset_in_another_order() {
    // `inner` closes over x and y; one replacement uses both, the other only y, so its
    // closure differs from the function's and the cells are found by name.
    let original = "def outer(x, y):\n    def inner(z):\n        return x + y + z\n    return inner\ng = outer(1, 2)\n";
    let got = with_replacement(
        original,
        "def outer(x, y):\n    def inner(z):\n        return (y, x, z)\n    return inner\ng = outer(1, 2)\n",
        &["g.__code__"],
        "g(3)",
    );
    assert_eq!(got, "(2, 1, 3)");
    let got = with_replacement(
        original,
        "def outer(x, y):\n    def inner(z):\n        return ('only y', y, z)\n    return inner\ng = outer(1, 2)\n",
        &["g.__code__"],
        "g(3)",
    );
    assert_eq!(got, "('only y', 2, 3)");
}

#[test]
fn closure_cell_stores_are_seen_by_the_other_closures() {
    // The replacement writes a free variable: the write goes to the original's cell.
    let got = with_replacement(
        "def make():\n    n = 0\n    def bump():\n        nonlocal n\n        n += 1\n        return n\n    def peek():\n        return n\n    return bump, peek\nbump, peek = make()\n",
        "def make():\n    n = 0\n    def bump():\n        nonlocal n\n        n += 100\n        return n\n    def peek():\n        return n\n    return bump, peek\nbump, peek = make()\n",
        &["bump.__code__"],
        "(bump(), bump(), peek())",
    );
    // The plain run (made first by with_replacement) left n at 2 in the shared cell.
    assert_eq!(got, "(102, 202, 202)");
}

#[test]
fn exception_in_a_replacement_shows_the_original_position() {
    // The replacement carries the original's file, name and line numbers (as symtrace's
    // generated code will): the traceback points at them.
    with_vm(|vm| {
        let orig = exec(vm, "def f(x):\n    return x\n", "orig.py");
        let alt = exec(vm, "def f(x):\n    return 1 / (x - x)\n", "orig.py");
        activate_replacement(
            vm,
            code_of(vm, &orig, "f.__code__"),
            code_of(vm, &alt, "f.__code__"),
        );
        exec_in(
            vm,
            &orig,
            "import sys, traceback\ntry:\n    f(3)\nexcept ZeroDivisionError as e:\n    last = traceback.extract_tb(e.__traceback__)[-1]\n    where = (last.filename, last.lineno, last.name)\n",
            "driver.py",
        )
        .unwrap();
        vm.set_eval_hook_mode(EvalHookMode::Disabled);
        assert_eq!(eval_repr(vm, &orig, "where"), "('orig.py', 2, 'f')");
    });
}

#[test]
fn module_level_code_can_be_replaced() {
    // A non-NEWLOCALS frame: the replacement shares the module's namespace.
    with_vm(|vm| {
        let scope = vm.new_scope_with_builtins();
        exec_in(vm, &scope, "src_a = 'x = 1'\nsrc_b = 'x = 2\\ny = 3'\nca = compile(src_a, 'm.py', 'exec')\ncb = compile(src_b, 'm.py', 'exec')\nns = {}\n", "setup.py").unwrap();
        activate_replacement(vm, code_of(vm, &scope, "ca"), code_of(vm, &scope, "cb"));
        exec_in(vm, &scope, "exec(ca, ns)", "driver.py").unwrap();
        vm.set_eval_hook_mode(EvalHookMode::Disabled);
        assert_eq!(eval_repr(vm, &scope, "(ns['x'], ns['y'])"), "(2, 3)");
    });
}

#[test]
fn replaced_after_warm_up_and_through_native_callers() {
    // 10,000 calls specialize the call sites first; then the hook is installed, and calls
    // from sorted(key=) and map() are replaced as well.
    with_vm(|vm| {
        let orig = exec(
            vm,
            "def key(v):\n    return v\ndef loop():\n    t = 0\n    for i in range(10000):\n        t += key(i)\n    return t\nloop()\n",
            "orig.py",
        );
        let alt = exec(vm, "def key(v):\n    return -v\n", "orig.py");
        activate_replacement(
            vm,
            code_of(vm, &orig, "key.__code__"),
            code_of(vm, &alt, "key.__code__"),
        );
        let got = eval_repr(
            vm,
            &orig,
            "(loop(), sorted([1, 3, 2], key=key), list(map(key, [1, 2])))",
        );
        vm.set_eval_hook_mode(EvalHookMode::Disabled);
        assert_eq!(got, "(-49995000, [3, 2, 1], [-1, -2])");
    });
}

#[test]
fn replacement_while_a_profiler_runs_uses_heap_frames() {
    // With sys.setprofile active the VM runs calls in heap frame objects (run_frame): the
    // replacement path for those, with a closure, and the profiler sees the replacement run.
    with_vm(|vm| {
        let src = "import sys\ncalls = []\ndef prof(frame, event, arg):\n    if event == 'call':\n        calls.append(frame.f_code.co_name)\ndef outer(k):\n    def f(a, b=2):\n        return a + b + k\n    return f\nf = outer(100)\n";
        let orig = exec(vm, src, "orig.py");
        let alt = exec(
            vm,
            &src.replace("return a + b + k", "return (a, b, k, 'alt')"),
            "orig.py",
        );
        activate_replacement(
            vm,
            code_of(vm, &orig, "f.__code__"),
            code_of(vm, &alt, "f.__code__"),
        );
        exec_in(
            vm,
            &orig,
            "sys.setprofile(prof)\nr = f(1)\nsys.setprofile(None)\n",
            "driver.py",
        )
        .unwrap();
        vm.set_eval_hook_mode(EvalHookMode::Disabled);
        assert_eq!(eval_repr(vm, &orig, "r"), "(1, 2, 100, 'alt')");
        assert_eq!(eval_repr(vm, &orig, "'f' in calls"), "True");
    });
}
