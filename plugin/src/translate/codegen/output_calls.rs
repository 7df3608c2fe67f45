//! The replay of a call the simulation deferred: a `print`, a warning, a cache lookup.

use rustpython_vm::bytecode::Opcode;

use super::Codegen;
use crate::translate::effect::OutputCall;
use crate::translate::state::{Kind, SimResult, Unsupported};
use crate::translate::templates::Template;

impl Codegen<'_> {
    /// `function(*args, **kwargs)`, its result dropped.
    pub(super) fn output(
        &mut self,
        call: &OutputCall,
        args: &[Template],
        kwargs: &[(String, Template)],
    ) -> SimResult<()> {
        let vm = self.b.vm();
        let (function, position) = match call {
            OutputCall::Print => {
                let print = vm
                    .builtins
                    .get_attr("print", vm)
                    .map_err(|_| Unsupported::new(Kind::Internal, "builtins.print is missing"))?;
                (print, self.b.position)
            }
            OutputCall::Located { function, position } => (function.clone(), *position),
            OutputCall::CacheLookup(wrapper) => (wrapper.clone(), self.b.position),
        };
        self.b.load_const(function);
        self.b.emit(Opcode::PushNull, 0);
        for a in args.iter().chain(kwargs.iter().map(|(_, v)| v)) {
            self.build(a)?;
        }
        let n = (args.len() + kwargs.len()) as u32;
        if !kwargs.is_empty() {
            let names = kwargs
                .iter()
                .map(|(k, _)| vm.ctx.new_str(k.as_str()).into())
                .collect();
            self.b.load_const(vm.ctx.new_tuple(names).into());
        }
        // The frame's line while the call runs is the line a warning names.
        let kept = std::mem::replace(&mut self.b.position, position);
        match kwargs.is_empty() {
            true => self.b.emit(Opcode::Call, n),
            false => self.b.emit(Opcode::CallKw, n),
        }
        self.b.position = kept;
        self.b.emit(Opcode::PopTop, 0);
        Ok(())
    }
}
