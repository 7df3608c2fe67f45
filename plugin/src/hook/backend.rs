//! What symtrace does with a frame's code: a backend turns a code object into the code that
//! runs in its place. Whatever a backend produces passes the verifier before the VM sees it.

use rustpython_vm::builtins::PyCode;
use rustpython_vm::{Py, PyRef, VirtualMachine};

use crate::bytecode::{RebuildError, rebuild};

/// Produces replacement code for a code object.
pub trait Backend: Send + Sync {
    /// The name `--plugin-opt backend=NAME` selects it by.
    fn name(&self) -> &'static str;
    /// The code to run instead of `code`; `Ok(None)` runs the original as is.
    fn rewrite(
        &self,
        code: &Py<PyCode>,
        vm: &VirtualMachine,
    ) -> Result<Option<PyRef<PyCode>>, RebuildError>;
}

/// Runs every frame as written (the translator comes with later work).
pub struct Passthrough;

impl Backend for Passthrough {
    fn name(&self) -> &'static str {
        "none"
    }
    fn rewrite(
        &self,
        _code: &Py<PyCode>,
        _vm: &VirtualMachine,
    ) -> Result<Option<PyRef<PyCode>>, RebuildError> {
        Ok(None)
    }
}

/// Replaces every frame's code by its own decoded and re-assembled copy: the end-to-end check
/// of the bytecode toolkit and of the hook's replace path (TorchDynamo's "eager" backend plays
/// the same role for its code generator).
pub struct Roundtrip;

impl Backend for Roundtrip {
    fn name(&self) -> &'static str {
        "roundtrip"
    }
    fn rewrite(
        &self,
        code: &Py<PyCode>,
        vm: &VirtualMachine,
    ) -> Result<Option<PyRef<PyCode>>, RebuildError> {
        rebuild(code, vm).map(Some)
    }
}

/// The backends `--plugin-opt backend=` accepts.
pub fn backend_named(name: &str) -> Option<Box<dyn Backend>> {
    match name {
        "none" => Some(Box::new(Passthrough)),
        "roundtrip" => Some(Box::new(Roundtrip)),
        _ => None,
    }
}

pub const BACKEND_NAMES: &str = "none, roundtrip";
