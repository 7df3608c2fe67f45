//! The verifier rejects malformed code with a clear error, and symtrace's hook never hands
//! rejected code to the VM: a backend that produces malformed code leaves the program's
//! behaviour unchanged, and the rejection is logged.

mod common;

use std::sync::Arc;

use common::{collect_logs, eval_repr, exec, logged, with_vm};
use rustpython_vm::builtins::PyCode;
use rustpython_vm::bytecode::{
    CodeUnit, CodeUnits, Opcode, decode_exception_table, encode_exception_table,
};
use rustpython_vm::{Py, PyRef, VirtualMachine};
use symtrace::bytecode::{CodeFacts, RebuildError, VmCodeObject, rebuild, verify, verify_parts};
use symtrace::hook::backend::Backend;
use symtrace::{SymtraceHook, activate};

const SOURCE: &str = "\
def target(a, b):
    total = 0
    for i in range(a):
        try:
            total += b // (i - 2)
        except ZeroDivisionError:
            total -= 1
    return total
";

/// The malformations the issue names, each applied to a valid re-assembled `target`.
#[derive(Clone, Copy, Debug)]
enum Fault {
    JumpOutOfRange,
    StackUnderflow,
    BadLocalIndex,
    UnknownOpcode,
    BadExceptionRange,
}

const FAULTS: [Fault; 5] = [
    Fault::JumpOutOfRange,
    Fault::StackUnderflow,
    Fault::BadLocalIndex,
    Fault::UnknownOpcode,
    Fault::BadExceptionRange,
];

fn units(code: &PyCode) -> Vec<(Opcode, u8)> {
    let u = &code.code.instructions;
    (0..u.len())
        .map(|i| (u.read_op(i).as_opcode(), u8::from(u.read_arg(i))))
        .collect()
}

fn with_units(
    code: &PyCode,
    units: &[(Opcode, u8)],
    table: Option<Box<[u8]>>,
    vm: &VirtualMachine,
) -> PyRef<PyCode> {
    let mut c: VmCodeObject = code.code.clone();
    c.instructions = CodeUnits::from(
        units
            .iter()
            .map(|&(op, arg)| CodeUnit::try_from([u8::from(op), arg]).unwrap())
            .collect::<Vec<_>>(),
    );
    if let Some(t) = table {
        c.exceptiontable = t;
    }
    vm.ctx.new_code(c)
}

fn corrupt(code: &PyCode, fault: Fault, vm: &VirtualMachine) -> PyRef<PyCode> {
    let mut u = units(code);
    let first = |pred: &dyn Fn(Opcode) -> bool| u.iter().position(|(op, _)| pred(*op)).unwrap();
    match fault {
        Fault::JumpOutOfRange => {
            let i = first(&|op| {
                op == Opcode::JumpForward || op == Opcode::PopJumpIfFalse || op == Opcode::ForIter
            });
            u[i].1 = 0xff;
        }
        Fault::StackUnderflow => {
            // The first instruction after RESUME pushes onto an empty stack; make it pop.
            let i = first(&|op| op == Opcode::Resume) + 1;
            assert_eq!(u[i].0.cache_entries(), 0);
            u[i] = (Opcode::PopTop, 0);
        }
        Fault::BadLocalIndex => {
            let i = first(&|op| {
                matches!(
                    op,
                    Opcode::LoadFast | Opcode::LoadFastBorrow | Opcode::StoreFast
                )
            });
            u[i].1 = 200;
        }
        Fault::UnknownOpcode => {
            let i = first(&|op| op == Opcode::Nop || op == Opcode::PopTop);
            u[i].0 = Opcode::Reserved;
        }
        Fault::BadExceptionRange => {
            let mut entries = decode_exception_table(&code.code.exceptiontable);
            let last = entries.len() - 1;
            entries[last].end = u.len() as u32 + 10;
            return with_units(code, &u, Some(encode_exception_table(&entries)), vm);
        }
    }
    with_units(code, &u, None, vm)
}

fn target_code(vm: &VirtualMachine) -> PyRef<PyCode> {
    let scope = exec(vm, SOURCE, "verifier_probe.py");
    let f = scope.globals.get_item("target", vm).unwrap();
    f.get_attr("__code__", vm)
        .unwrap()
        .downcast::<PyCode>()
        .unwrap()
}

#[test]
fn verifier_accepts_what_the_assembler_builds() {
    with_vm(|vm| {
        let code = target_code(vm);
        verify(&code).expect("the compiler's own code verifies");
        let rebuilt = rebuild(&code, vm).expect("round trip");
        verify(&rebuilt).expect("the re-assembled code verifies");
    });
}

#[test]
fn verifier_rejects_each_malformation_with_a_clear_error() {
    with_vm(|vm| {
        let good = rebuild(&target_code(vm), vm).unwrap();
        let expect = [
            (Fault::JumpOutOfRange, "lands outside the code"),
            (
                Fault::StackUnderflow,
                "stack underflow: pops 1 of a stack of 0",
            ),
            (
                Fault::BadLocalIndex,
                "local slot 200 out of range (4 slots)",
            ),
            (Fault::UnknownOpcode, "RESERVED at offset"),
            (
                Fault::BadExceptionRange,
                "range is empty or outside the code",
            ),
        ];
        for (fault, message) in expect {
            let bad = corrupt(&good, fault, vm);
            let err = verify(&bad).expect_err(&format!("{fault:?} must be rejected"));
            assert!(err.to_string().contains(message), "{fault:?}: {err}");
        }
    });
}

#[test]
fn verifier_rejects_bytes_that_are_no_opcode_at_all() {
    with_vm(|vm| {
        let good = rebuild(&target_code(vm), vm).unwrap();
        let mut bytes: Vec<u8> = units(&good)
            .iter()
            .flat_map(|&(op, arg)| [u8::from(op), arg])
            .collect();
        let facts = CodeFacts {
            nconsts: good.code.constants.len(),
            nnames: good.code.names.len(),
            localspluskinds: good.code.localspluskinds.to_vec(),
            nfreevars: 0,
            max_stackdepth: good.code.max_stackdepth,
        };
        verify_parts(&bytes, &good.code.exceptiontable, &facts).unwrap();
        bytes[2] = 220; // between the specialized and the instrumented opcodes: unassigned
        let err = verify_parts(&bytes, &good.code.exceptiontable, &facts).unwrap_err();
        assert_eq!(err.to_string(), "unknown opcode 220 at offset 1");
        // A truncated exception table.
        let table = &good.code.exceptiontable[..good.code.exceptiontable.len() - 1];
        let err = verify_parts(&bytes, table, &facts).unwrap_err();
        assert!(
            err.to_string().contains("exception table is malformed"),
            "{err}"
        );
        // A handler deeper than the stack can ever be.
        let mut entries = decode_exception_table(&good.code.exceptiontable);
        entries[0].depth = 50;
        let bytes: Vec<u8> = units(&good)
            .iter()
            .flat_map(|&(op, arg)| [u8::from(op), arg])
            .collect();
        let err = verify_parts(&bytes, &encode_exception_table(&entries), &facts).unwrap_err();
        assert!(err.to_string().contains("exceeds co_stacksize"), "{err}");
    });
}

/// A backend that re-assembles `target` and then breaks it.
struct Corrupting(Fault);

impl Backend for Corrupting {
    fn name(&self) -> &'static str {
        "corrupting"
    }
    fn rewrite(
        &self,
        code: &Py<PyCode>,
        vm: &VirtualMachine,
    ) -> Result<Option<PyRef<PyCode>>, RebuildError> {
        if code.code.obj_name.as_str() != "target" {
            return Ok(None);
        }
        let rebuilt = rebuild(code, vm)?;
        Ok(Some(corrupt(&rebuilt, self.0, vm)))
    }
}

#[test]
fn rejected_code_never_reaches_the_vm() {
    collect_logs();
    let program = format!("{SOURCE}\nresults = [target(5, 7), target(3, 1), target(6, 10)]\n");
    let expected = with_vm(|vm| eval_repr(vm, &exec(vm, &program, "verifier_probe.py"), "results"));
    assert_eq!(expected, "[-2, -3, 2]");
    for fault in FAULTS {
        with_vm(|vm| {
            activate(
                vm,
                Arc::new(SymtraceHook::new(Box::new(Corrupting(fault)), None)),
            );
            let scope = exec(vm, &program, "verifier_probe.py");
            // Computed by the original code: the malformed replacement never ran.
            assert_eq!(eval_repr(vm, &scope, "results"), expected, "{fault:?}");
            vm.set_eval_frame_hook(None);
        });
        let lines = logged(
            "symtrace::bytecode",
            "target (verifier_probe.py:1): rejected by the verifier",
        );
        assert!(!lines.is_empty(), "{fault:?} was not logged");
    }
}
