//! Errors of tensor operations: the Python exception class they become and a message that
//! names the shapes or values involved. Kernels never panic on bad input.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    Value,
    Type,
    Index,
    ZeroDivision,
    Runtime,
    /// An op torch defines but not for this dtype (`floor` of a bool tensor): Python's
    /// `NotImplementedError`, a `RuntimeError`, as torch raises.
    NotImplemented,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorError {
    pub kind: ErrorKind,
    pub message: String,
}

impl TensorError {
    pub fn value(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Value,
            message: message.into(),
        }
    }
    pub fn type_error(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Type,
            message: message.into(),
        }
    }
    pub fn index(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Index,
            message: message.into(),
        }
    }
    pub fn runtime(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Runtime,
            message: message.into(),
        }
    }
    pub fn not_implemented(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::NotImplemented,
            message: message.into(),
        }
    }
}

impl fmt::Display for TensorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TensorError {}

pub type TResult<T> = Result<T, TensorError>;

/// `(2, 3)`, `(4,)`, `()`: shapes as Python prints tuples.
pub fn shape_str(shape: &[usize]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

impl TensorError {
    /// The Python exception this error raises.
    pub fn into_exception(
        self,
        vm: &rustpython_vm::VirtualMachine,
    ) -> rustpython_vm::builtins::PyBaseExceptionRef {
        match self.kind {
            ErrorKind::Value => vm.new_value_error(self.message),
            ErrorKind::Type => vm.new_type_error(self.message),
            ErrorKind::Index => vm.new_index_error(self.message),
            ErrorKind::ZeroDivision => vm.new_zero_division_error(self.message),
            ErrorKind::Runtime => vm.new_runtime_error(self.message),
            ErrorKind::NotImplemented => vm.new_exception_msg(
                vm.ctx.exceptions.not_implemented_error.to_owned(),
                self.message.into(),
            ),
        }
    }
}
