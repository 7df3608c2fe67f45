//! Why the simulation stops: a typed reason, made one way (`Unsupported::new`, or its `Err`
//! form `unsupported`), with the kind of construct at fault, a message, where in the user's
//! code it happened (filled in by the executor), and a hint of what the user can do. After
//! TorchDynamo's `unimplemented_v2(gb_type, context, explanation, hints)`.

use std::fmt;

/// What kind of construct stopped the simulation; what a user can do about it follows from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A call the simulation does not follow: a builtin or native function it does not model,
    /// an opaque object.
    Call,
    /// Reads the values of a traced tensor (`item()`, a branch on a tensor, iteration).
    DataDependent,
    /// A mutation the replacement would not replay, or a read of what one changed.
    SideEffect,
    /// The operation raises (or may raise) a Python exception that is not simulated: it runs
    /// as written, so the exception is the one Python raises.
    Raises,
    /// A value or construct the simulation does not model (yet).
    Value,
    /// An instruction the executor does not simulate.
    Opcode,
    /// A bound of the translation: instructions, depth of inline calls, length of a loop.
    Limit,
    /// The replacement could not rebuild the frame's state or a value as the original made it.
    Rebuild,
    /// Nothing to capture.
    EmptyGraph,
    /// The program asked for a break (`symtrace.graph_break()`).
    Requested,
    /// A limitation or a fault of the translator itself (malformed code, generated code
    /// rejected, a translation under way on this thread).
    Internal,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Call => "call",
            Kind::DataDependent => "data-dependent",
            Kind::SideEffect => "side effect",
            Kind::Raises => "raises",
            Kind::Value => "value",
            Kind::Opcode => "opcode",
            Kind::Limit => "limit",
            Kind::Rebuild => "rebuild",
            Kind::EmptyGraph => "empty graph",
            Kind::Requested => "requested",
            Kind::Internal => "internal",
        }
    }

    pub fn hint(self) -> &'static str {
        match self {
            Kind::Call => {
                "the call runs as written; move it out of the hot path, or wrap it in \
                 symtrace.disable if it is yours"
            }
            Kind::DataDependent => {
                "a tensor's values are known only at run time; compute both branches with \
                 symtrace.where, or keep item() and the truth of tensors out of traced code"
            }
            Kind::SideEffect => {
                "the replacement replays mutations of lists, dicts, instances, classes, globals \
                 and closure cells it was passed; return the new value instead"
            }
            Kind::Raises => {
                "the operation raises when run: it runs as written, so the exception is Python's"
            }
            Kind::Value => {
                "this kind of value is not simulated yet; tensors, numbers, strings, tuples, \
                 lists, dicts and plain instances are"
            }
            Kind::Opcode => "this instruction is not simulated: it runs as written",
            Kind::Limit => {
                "the translation would be too large; split the function or shorten the loop"
            }
            Kind::Rebuild => "the replacement could not rebuild this value as the original made it",
            Kind::EmptyGraph => "no tensor work to capture: the frame runs as written",
            Kind::Requested => {
                "symtrace.graph_break() ends the graph here; remove it to capture on"
            }
            Kind::Internal => "a limitation of the translator: the frame runs as written",
        }
    }
}

/// Why a frame (or the rest of it) cannot be simulated, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    pub kind: Kind,
    pub message: String,
    /// The user's file:line and function; `None` until the executor fills it in.
    pub location: Option<Location>,
    pub hint: &'static str,
}

impl Unsupported {
    pub fn new(kind: Kind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            location: None,
            hint: kind.hint(),
        }
    }
}

/// `Err(Unsupported::new(kind, message))`.
pub fn unsupported<T>(kind: Kind, message: impl Into<String>) -> Result<T, Unsupported> {
    Err(Unsupported::new(kind, message))
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub line: u32,
    pub function: String,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{} in {}", self.file, self.line, self.function)
    }
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            Some(l) => write!(f, "{} ({l})", self.message),
            None => f.write_str(&self.message),
        }
    }
}
