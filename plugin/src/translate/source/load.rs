//! The instructions that load a source in generated code, as the frame reads it.

use rustpython_vm::bytecode::Opcode;

use super::Source;
use crate::bytecode::builder::Builder;
use crate::translate::state::{Kind, SimResult, Unsupported};

/// `BinaryOperator::Subscr`.
const SUBSCR: u32 = 26;

impl Source {
    /// The instructions that load this source in generated code, as the frame reads it.
    pub fn emit_load(&self, b: &mut Builder<'_>) -> SimResult<()> {
        let vm = b.vm();
        match self {
            Source::Draw(k) => {
                let name = crate::translate::values::python_draws::draw_slot(*k);
                let slot = b.slot(&name).ok_or_else(|| {
                    Unsupported::new(Kind::Internal, "code generation: no slot for a draw")
                })?;
                b.emit(Opcode::LoadFast, slot);
            }
            Source::Local(n) | Source::Free(n) => {
                let slot = b.slot(n).ok_or_else(|| {
                    Unsupported::new(Kind::Internal, format!("code generation: no slot {n}"))
                })?;
                let op = if b.is_cell(n) {
                    Opcode::LoadDeref
                } else {
                    Opcode::LoadFast
                };
                b.emit(op, slot);
            }
            Source::Global(n) | Source::Builtin(n) => {
                let i = b.name(n);
                b.emit(Opcode::LoadGlobal, i << 1);
            }
            // A class's scalar entry: no descriptor of the metaclass has its name (dunder
            // names are not read this way), so `LOAD_ATTR` finds the entry.
            Source::Attr(base, n) | Source::NativeAttr(base, n) | Source::ClassAttr(base, n) => {
                base.emit_load(b)?;
                let i = b.name(n);
                b.emit(Opcode::LoadAttr, i << 1);
            }
            Source::Item(base, i) => {
                base.emit_load(b)?;
                b.load_const(vm.ctx.new_int(*i).into());
                b.emit(Opcode::BinaryOp, SUBSCR);
            }
            Source::Key(base, k) => {
                base.emit_load(b)?;
                b.load_const(vm.ctx.new_str(k.as_str()).into());
                b.emit(Opcode::BinaryOp, SUBSCR);
            }
            Source::ConstKey(base, k) => {
                base.emit_load(b)?;
                b.load_const(k.object(vm));
                b.emit(Opcode::BinaryOp, SUBSCR);
            }
            Source::IdKey(base, k) | Source::At(base, k) => {
                base.emit_load(b)?;
                k.emit_load(b)?;
                b.emit(Opcode::BinaryOp, SUBSCR);
            }
            Source::FnGlobal(f, n) => {
                f.emit_load(b)?;
                let g = b.name("__globals__");
                b.emit(Opcode::LoadAttr, g << 1);
                b.load_const(vm.ctx.new_str(n.as_str()).into());
                b.emit(Opcode::BinaryOp, SUBSCR);
            }
            Source::Closure(f, i) => {
                f.emit_load(b)?;
                let c = b.name("__closure__");
                b.emit(Opcode::LoadAttr, c << 1);
                b.load_const(vm.ctx.new_int(*i).into());
                b.emit(Opcode::BinaryOp, SUBSCR);
                let cc = b.name("cell_contents");
                b.emit(Opcode::LoadAttr, cc << 1);
            }
            Source::CellOf(_) => {
                return Err(Unsupported::new(
                    Kind::Internal,
                    "a cell is compared by guards, never loaded",
                ));
            }
            Source::TypeOf(base) => {
                b.load_const(vm.ctx.types.type_type.to_owned().into());
                b.emit(Opcode::PushNull, 0);
                base.emit_load(b)?;
                b.emit(Opcode::Call, 1);
            }
            Source::Len(base) => {
                let len = vm
                    .builtins
                    .get_attr("len", vm)
                    .map_err(|_| Unsupported::new(Kind::Internal, "the builtins have no len"))?;
                b.load_const(len);
                b.emit(Opcode::PushNull, 0);
                base.emit_load(b)?;
                b.emit(Opcode::Call, 1);
            }
            Source::WeakTarget(base) => {
                base.emit_load(b)?;
                b.emit(Opcode::PushNull, 0);
                b.emit(Opcode::Call, 0);
            }
            Source::InstanceDict(base) => {
                base.emit_load(b)?;
                let d = b.name("__dict__");
                b.emit(Opcode::LoadAttr, d << 1);
            }
            Source::Object(o) => match o.0.get() {
                Some(o) => b.load_const(o),
                None => {
                    return Err(Unsupported::new(
                        Kind::Internal,
                        "an object a source names was collected",
                    ));
                }
            },
            Source::Arith(op, x, y) => {
                x.emit_load(b)?;
                y.emit_load(b)?;
                b.emit(Opcode::BinaryOp, op.operator() as u32);
            }
            Source::Compare(..) => {
                return Err(Unsupported::new(
                    Kind::Internal,
                    "code generation: a comparison of numbers is guarded, never loaded",
                ));
            }
            Source::Math(function, x) => {
                let f = function
                    .function(b.vm())
                    .ok_or_else(|| Unsupported::new(Kind::Internal, "math is not loaded"))?;
                b.load_const(f);
                b.emit(Opcode::PushNull, 0);
                x.emit_load(b)?;
                let constants = function.constants(b.vm());
                let argc = 1 + constants.len() as u32;
                for c in constants {
                    b.load_const(c);
                }
                b.emit(Opcode::Call, argc);
            }
            Source::DefaultDType => {
                return Err(Unsupported::new(
                    Kind::Internal,
                    "code generation: the default dtype is not a value to load",
                ));
            }
        }
        Ok(())
    }
}
