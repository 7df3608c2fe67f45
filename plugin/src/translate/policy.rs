//! What the translator does on a recompile, and which sizes it treats as dynamic: the stance
//! (torch.compiler.set_stance's four) and the `dynamic` option.

use std::sync::atomic::{AtomicU8, Ordering};

use crate::translate::source::Source;

/// What a frame does when the translator would translate it again (a guard of every cached
/// entry failed), or always.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stance {
    /// Translate again, up to the recompile limit.
    Default,
    /// Raise RuntimeError with the guard that failed instead of translating again.
    FailOnRecompile,
    /// Run as written instead of translating again (entries still serve what they fit).
    EagerOnRecompile,
    /// Run every frame as written: no lookup, no translation.
    ForceEager,
}

impl Stance {
    pub const ALL: [Stance; 4] = [
        Stance::Default,
        Stance::FailOnRecompile,
        Stance::EagerOnRecompile,
        Stance::ForceEager,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Stance::Default => "default",
            Stance::FailOnRecompile => "fail_on_recompile",
            Stance::EagerOnRecompile => "eager_on_recompile",
            Stance::ForceEager => "force_eager",
        }
    }

    pub fn named(name: &str) -> Option<Stance> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// The stance, shared by the threads of an interpreter (as torch's is global).
#[derive(Debug, Default)]
pub struct StanceCell(AtomicU8);

impl StanceCell {
    pub fn get(&self) -> Stance {
        Stance::ALL[self.0.load(Ordering::Relaxed) as usize]
    }

    /// Set the stance; the one it replaces.
    pub fn set(&self, s: Stance) -> Stance {
        let code = Stance::ALL.iter().position(|x| *x == s).unwrap_or(0) as u8;
        Stance::ALL[self.0.swap(code, Ordering::Relaxed) as usize]
    }
}

/// Which tensor sizes a translation treats as dynamic (symbolic), as torch.compile's
/// `dynamic=None|True|False`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dynamic {
    /// Static at first; a size whose change made a code object translate again is dynamic
    /// from then on ("automatic dynamic shapes").
    Auto,
    /// Every size of a tensor argument is dynamic from the first translation (sizes 0 and 1
    /// stay specialized, as in torch).
    Always,
    /// Every size is static: each new one translates again.
    Never,
}

impl Dynamic {
    pub fn named(name: &str) -> Option<Dynamic> {
        match name {
            "auto" => Some(Dynamic::Auto),
            "true" | "1" => Some(Dynamic::Always),
            "false" | "0" => Some(Dynamic::Never),
            _ => None,
        }
    }
}

impl Default for Dynamic {
    fn default() -> Self {
        Dynamic::Auto
    }
}

/// What one translation may leave unspecialized: the policy, and the sources whose value
/// made an earlier entry of the code object miss (under `Auto`, they are dynamic now).
#[derive(Clone, Debug, Default)]
pub struct Specialization {
    pub dynamic: Dynamic,
    pub changed: Vec<Source>,
    /// Dimensions of input tensors whose size made an entry miss: dynamic from then on.
    pub dims: Vec<(Source, usize)>,
    /// `print` breaks instead of being replayed (`values::deferred_print`): a translation
    /// where a replayed print could fail after random draws or a write-back is made again so.
    pub prints_break: bool,
    /// Draws from Python's `random` module break instead of being made first by the
    /// replacement (`values::python_draws`): a translation where they could be draws the
    /// program never makes is made again so.
    pub python_draws_break: bool,
    /// The frame's code is a function made for a break: it runs below the replacement of
    /// the frame it continues, so a frame counted out from it (a warning's `stacklevel`) is
    /// further away than in the program, by `frames_between` (a resume function or a
    /// handler; `None`: a loop's body or driver, not counted).
    pub frames_between: Option<usize>,
}

impl Specialization {
    /// Whether a number read from `source`, an operand of tensor arithmetic, becomes an
    /// input of the graph instead of a constant guarded by value: floats at once (as
    /// TorchDynamo treats them), ints once their value has caused a recompile.
    pub fn number_is_input(&self, source: &Source, is_float: bool) -> bool {
        // A drawn number is known only when the replacement runs.
        if source.has_draw() {
            return true;
        }
        match self.dynamic {
            Dynamic::Never => false,
            Dynamic::Always => true,
            // An item at an index that changes per call changes with it.
            Dynamic::Auto => {
                is_float
                    || self.changed.contains(source)
                    || matches!(source, Source::At(_, index) if self.computed_from_input(index))
            }
        }
    }

    /// Whether an int computed from the frame's numbers (`self.step + 1`) changes per call:
    /// one of them does.
    fn computed_from_input(&self, source: &Source) -> bool {
        match source {
            Source::Arith(_, a, b) => self.computed_from_input(a) || self.computed_from_input(b),
            Source::Math(_, a) => self.computed_from_input(a),
            Source::Object(_) => false,
            other => self.number_is_input(other, false),
        }
    }

    /// The sizes a tensor read from `source` is guarded by: `None` for a dynamic dimension.
    /// Sizes 0 and 1 stay specialized (a dimension of 1 broadcasts), as in torch.
    /// `marks`: how the tensor's dimensions are marked (`mark_dynamic`: `Some(true)`,
    /// `mark_static`: `Some(false)`), which overrides the policy.
    pub fn dims_of(
        &self,
        source: &Source,
        shape: &[usize],
        marks: impl Fn(usize) -> Option<bool>,
    ) -> Vec<Option<usize>> {
        shape
            .iter()
            .enumerate()
            .map(|(axis, &n)| {
                let dynamic = n >= 2
                    && match (marks(axis), self.dynamic) {
                        (Some(marked), _) => marked,
                        (None, Dynamic::Never) => false,
                        (None, Dynamic::Always) => true,
                        (None, Dynamic::Auto) => {
                            self.dims.iter().any(|(s, a)| s == source && *a == axis)
                        }
                    };
                (!dynamic).then_some(n)
            })
            .collect()
    }

    /// An entry missed on the sizes of the tensor at `source`: under `Auto`, the dimensions
    /// that changed (to a size of 2 or more) are dynamic from now on.
    pub fn sizes_changed(&mut self, source: &Source, was: &[usize], now: &[usize]) {
        if was.len() != now.len() {
            return;
        }
        for (axis, (a, b)) in was.iter().zip(now).enumerate() {
            if a != b && *b >= 2 && !self.dims.iter().any(|(s, x)| s == source && *x == axis) {
                self.dims.push((source.clone(), axis));
            }
        }
    }

    /// An entry missed on `source`'s value: under `Auto`, it is dynamic from now on.
    pub fn value_changed(&mut self, source: &Source) {
        if !self.changed.contains(source) {
            self.changed.push(source.clone());
        }
    }
}
