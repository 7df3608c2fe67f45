//! The bytecode toolkit: take any code object apart ([`decode`]), put an instruction list back
//! together with rustpython-codegen's assembler ([`assemble`]), check the result before the VM
//! may run it ([`verify`]), and show it dis-style ([`dis`]).

pub(crate) mod analysis;
pub(crate) mod assemble;
pub(crate) mod builder;
pub mod corpus;
pub(crate) mod decode;
pub mod dis;
pub mod linetable;
pub(crate) mod opcodes;
pub(crate) mod roundtrip;
pub(crate) mod verify;

pub use assemble::{AssembleError, CodeLayout, VmCodeObject, assemble};
pub use decode::{DecodeError, DecodedCode, Handler, Instr, decode, decode_bytes};
pub use linetable::Position;
pub use verify::{CodeFacts, VerifyError, verify, verify_parts};

pub use roundtrip::{RebuildError, differences, rebuild};
