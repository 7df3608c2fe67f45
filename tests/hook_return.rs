//! A plugin computes a frame's result itself (`FrameAction::Return`): the caller gets that
//! value and the frame does not run, except that the call counts toward the recursion limit
//! as entering the frame would, and a generator's frame always runs as is.

mod common;

use std::sync::Arc;

use common::*;
use rustpython_vm::eval_hook::{EvalFrameHook, EvalHookMode, FrameDecision, FrameView};
use rustpython_vm::{PyObjectRef, PyResult, VirtualMachine};

/// Returns `x * 10` for every frame of a code object named `tenfold` (whose body would
/// return `x * 2` and append to `ran`), and runs every other frame as is.
struct Tenfold;

impl EvalFrameHook for Tenfold {
    fn on_frame(&self, frame: &FrameView<'_>, vm: &VirtualMachine) -> PyResult<FrameDecision> {
        if frame.code().obj_name.as_str() != "tenfold" {
            return Ok(FrameDecision::run_default());
        }
        let x = frame
            .get("x")
            .expect("the argument is bound before the hook runs");
        let ten: PyObjectRef = vm.ctx.new_int(10).into();
        Ok(FrameDecision::returns(vm._mul(&x, &ten)?))
    }

    fn wants_generator_events(&self) -> bool {
        true
    }
}

const SOURCE: &str = "\
ran = []
def tenfold(x):
    ran.append(x)
    return x * 2
def depth_reached(limit):
    import sys
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(limit)
    try:
        def down(k):
            try:
                return down(k + 1)
            except RecursionError:
                pass
            try:
                tenfold(1)
                return k
            except RecursionError:
                return -k
        return down(0)
    finally:
        sys.setrecursionlimit(old)
";

fn with_tenfold<R>(f: impl FnOnce(&VirtualMachine, &rustpython_vm::scope::Scope) -> R) -> R {
    with_vm(|vm| {
        let scope = exec(vm, SOURCE, "returns.py");
        vm.set_eval_frame_hook(Some(Arc::new(Tenfold)));
        vm.set_eval_hook_mode(EvalHookMode::Active);
        let r = f(vm, &scope);
        vm.set_eval_hook_mode(EvalHookMode::Disabled);
        r
    })
}

#[test]
fn the_returned_value_stands_for_the_frame_which_does_not_run() {
    with_tenfold(|vm, scope| {
        assert_eq!(eval_repr(vm, scope, "tenfold(4)"), "40");
        // Through a native caller too.
        assert_eq!(
            eval_repr(vm, scope, "list(map(tenfold, [1, 2]))"),
            "[10, 20]"
        );
        assert_eq!(eval_repr(vm, scope, "ran"), "[]");
    });
}

#[test]
fn at_the_recursion_limit_the_call_raises_as_entering_the_frame_would() {
    // The deepest frame catches the RecursionError of its own call and calls `tenfold` at the
    // same depth: that call must fail as the frame's would (a negative depth), in both cases.
    let plain = with_vm(|vm| {
        let scope = exec(vm, SOURCE, "returns.py");
        eval_repr(vm, &scope, "depth_reached(120)")
    });
    let returned = with_tenfold(|vm, scope| eval_repr(vm, scope, "depth_reached(120)"));
    assert!(plain.starts_with('-'), "without a hook: {plain}");
    assert_eq!(plain, returned);
}

#[test]
fn a_generator_frame_runs_as_is() {
    with_tenfold(|vm, scope| {
        exec_in(
            vm,
            scope,
            "def tenfold_gen(x):\n    yield x * 2\ntenfold_gen.__code__ = tenfold_gen.__code__.replace(co_name='tenfold')\n",
            "returns.py",
        )
        .unwrap();
        assert_eq!(eval_repr(vm, scope, "list(tenfold_gen(3))"), "[6]");
    });
}
