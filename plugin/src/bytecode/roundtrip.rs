//! Take a code object apart and put it back together: decode, assemble, verify. This is the
//! `backend=roundtrip` of the plugin and the check that the toolkit loses nothing.

use rustpython_vm::builtins::PyCode;
use rustpython_vm::{PyRef, VirtualMachine};

use super::{AssembleError, CodeLayout, DecodeError, VerifyError, assemble, decode, verify};

/// Where a rebuild failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RebuildError {
    Decode(DecodeError),
    Assemble(AssembleError),
    Verify(VerifyError),
}

impl std::fmt::Display for RebuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Decode(e) => write!(f, "cannot decode: {e}"),
            Self::Assemble(e) => write!(f, "cannot assemble: {e}"),
            Self::Verify(e) => write!(f, "rejected by the verifier: {e}"),
        }
    }
}

impl std::error::Error for RebuildError {}

/// A new code object with the same instructions, exception table, positions and layout.
pub fn rebuild(code: &PyCode, vm: &VirtualMachine) -> Result<PyRef<PyCode>, RebuildError> {
    let decoded = decode(code).map_err(RebuildError::Decode)?;
    let rebuilt =
        assemble(&CodeLayout::of(code), &decoded.instrs, vm).map_err(RebuildError::Assemble)?;
    verify(&rebuilt).map_err(RebuildError::Verify)?;
    Ok(rebuilt)
}

/// How `rebuilt` differs from `original`, instruction by instruction (jump encoding and
/// EXTENDED_ARG aside) and in everything else a code object holds. Empty when they agree.
pub fn differences(original: &PyCode, rebuilt: &PyCode) -> Vec<String> {
    let mut out = Vec::new();
    let (a, b) = match (decode(original), decode(rebuilt)) {
        (Ok(a), Ok(b)) => (a, b),
        (a, b) => return vec![format!("decode: {:?} / {:?}", a.err(), b.err())],
    };
    let (x, y) = (&original.code, &rebuilt.code);
    let mut field = |name: &str, l: String, r: String| {
        if l != r {
            out.push(format!("{name}: {l} != {r}"));
        }
    };
    field("flags", format!("{:?}", x.flags), format!("{:?}", y.flags));
    field(
        "argcounts",
        format!(
            "{} {} {}",
            x.arg_count, x.posonlyarg_count, x.kwonlyarg_count
        ),
        format!(
            "{} {} {}",
            y.arg_count, y.posonlyarg_count, y.kwonlyarg_count
        ),
    );
    field(
        "stacksize",
        x.max_stackdepth.to_string(),
        y.max_stackdepth.to_string(),
    );
    field(
        "localspluskinds",
        format!("{:?}", x.localspluskinds),
        format!("{:?}", y.localspluskinds),
    );
    let names = |v: &[&'static rustpython_vm::builtins::PyStrInterned]| {
        v.iter().map(|n| n.as_str()).collect::<Vec<_>>().join(",")
    };
    field("cellvars", names(&x.cellvars), names(&y.cellvars));
    field("freevars", names(&x.freevars), names(&y.freevars));
    let strip = |i: &super::Instr| {
        (
            i.op,
            if i.target.is_some() {
                None
            } else {
                Some(i.arg)
            },
            i.target,
            i.handler,
            i.position,
        )
    };
    let listing = |d: &super::DecodedCode| {
        (
            d.prologue.iter().map(strip).collect::<Vec<_>>(),
            d.instrs.iter().map(strip).collect::<Vec<_>>(),
        )
    };
    let ((pa, ia), (pb, ib)) = (listing(&a), listing(&b));
    if pa != pb {
        out.push(format!("prologue: {pa:?} != {pb:?}"));
    }
    if ia.len() != ib.len() {
        out.push(format!("{} instructions != {}", ia.len(), ib.len()));
    }
    if let Some(i) = (0..ia.len().min(ib.len())).find(|&i| ia[i] != ib[i]) {
        out.push(format!("instruction {i}: {:?} != {:?}", ia[i], ib[i]));
    }
    out
}
