//! The `stacklevel` of a call that names a frame out from its caller (`warnings.warn`, a
//! logger's record), replayed by the translated frame's replacement in place of the program's
//! call: the inlined frames between the call and the translated frame do not exist then, and
//! in a function made for a break the replacements that call it stand above it.

use crate::translate::breaks::reason::Kind;
use crate::translate::state::{SimResult, State, unsupported};

impl State<'_> {
    /// The level to replay for the program's `level`, `inlined` frames of the program's
    /// standing between the call and the translated frame (`what` names the call in a
    /// refusal): a level naming one of them, or a frame above a loop's function, breaks.
    pub(super) fn replayed_stacklevel(
        &self,
        level: i64,
        inlined: i64,
        what: &str,
    ) -> SimResult<i64> {
        if level < 1 || level <= inlined {
            return unsupported(
                Kind::Call,
                format!(
                    "{what} naming the frame of an inlined call (stacklevel {level}, {inlined} \
                     inlined calls deep)"
                ),
            );
        }
        // Above the frame: in a function made for a break, the replacements that call it.
        let above = match (level - inlined >= 2, self.spec.frames_between) {
            (false, _) => 0,
            (true, Some(n)) => n as i64,
            (true, None) => {
                return unsupported(
                    Kind::Call,
                    format!("{what} naming a frame above a loop's function (made for a break)"),
                );
            }
        };
        Ok(level - inlined + above)
    }
}
