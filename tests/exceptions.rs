//! Exceptions in traced code under `--plugin symtrace` (tests/python/exceptions.py): `raise`
//! and the exception table's handlers are simulated, so a frame that raises and handles an
//! exception is one graph; an exception that leaves the frame is raised by the replacement
//! after its graph and side effects; one that leaves an inlined call goes to the handler of
//! its caller (or of a caller further out); what cannot be made again (a chained exception,
//! one raised out of an inlined call and then out of the frame) runs as written and says why.

mod common;

use common::*;

#[test]
fn raise_and_handlers_are_simulated() {
    let (_, stderr) = case_script_passes(
        "exceptions.py",
        &[
            "raise caught in the same frame (else, finally)",
            "raise caught in the same frame (except, finally)",
            "nested handlers: a clause that does not match, an inner finally",
            "raised and caught in a loop, unrolled",
            "an exception that leaves the frame after tensor work",
            "the same frame, not raising",
            "a bare raise in the handler",
            "an exception leaving an inlined call",
            "raised from None in an inlined call, caught by its caller's caller",
            "an exception from an inlined call that no clause matches",
            "an exception from an inlined call under no handler",
            "bool() of a __bool__ that returns itself",
            "bool() of a negative __len__",
            "an exception raised while another is handled runs as written",
            "code after a break names the program's function in tracebacks and logs",
            "a cell read unbound after a break raises UnboundLocalError",
        ],
    );
    assert!(
        stderr.contains("chained (") && stderr.contains("it would lose its __context__"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "ValueError raised out of helper_raises (an exception leaving an inlined call)"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("its traceback would lack the call"),
        "{stderr}"
    );
}
