//! Side effects under `--plugin symtrace` (tests/python/side_effects.py): list, dict and
//! attribute mutations, global stores and deletes and closure cell stores made by a traced
//! function are replayed by its replacement code, so that results and state equal eager's,
//! also when a graph break follows them. A caller's list the call changes is followed by a
//! shadow of its items, which later reads see, and written back whole; a value read before
//! an effect changed where it was read from is loaded before the effects are replayed. A
//! caller's dict read whole after the call stored into its keys is read with the stores.

mod common;

use common::*;

/// Run `tests/python/<script>` under the plugin with the side effects logged: stdout, stderr.
fn traced_with_effects_logged(script: &str) -> (String, String) {
    let script = python_dir().join(script);
    let out = run_ok(
        rustpython()
            .args(["--plugin", "symtrace", script.to_str().unwrap()])
            .env("RUST_LOG", "symtrace::side_effects=debug"),
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn mutations_are_replayed_in_order_and_equal_eager() {
    let (stdout, stderr) = traced_with_effects_logged("side_effects.py");
    println!("{stdout}");
    assert!(stdout.contains("ALL OK 0"), "{stdout}");
    assert_cases_ok(
        &stdout,
        &[
            "list.append, extend and insert",
            "dict and list item stores",
            "attribute stores",
            "global stores and deletes",
            "another module's globals stored by its functions, read as its attributes",
            "stores into a module's attributes, read by its functions",
            "a closure cell store",
            "effects, then a graph break",
            "a read of a mutated list",
            "a value read before its store",
            "two arguments that are one list",
            "item and attribute deletes, dict.update and dict.pop",
            "a caller's dict updated, then read by key",
            "slice stores and deletes",
            "a delete of a missing key raises when replayed",
            "a caller's list changed, then read",
            "list methods on a caller's list",
            "a caller's list sorted in place",
            "a caller's list appended to while iterated",
            "values read before the effects that change them",
            "a list changed after its name was rebound",
            "two lists (two dicts) that are one on a later call",
            "a caller's dict stored into, then read whole",
            "a key deleted and stored again goes last",
            "a dict stored into, then iterated across a graph break",
            "a dict's keys stored while its keys are iterated",
            "a dict's entries stored while its items are iterated",
            "a later entry stored while the items are iterated",
            "a dict's keys stored while iterated across a graph break",
            "a store over a value whose drop changes the dict",
            "a function's attributes stored and read",
        ],
    );
    // The print after the effects ran once per call (eager, explain, two traced calls), and
    // saw the appended tensor: the append was replayed before it.
    assert_eq!(
        stdout.matches("effects_then_break sees [tensor(").count(),
        4,
        "{stdout}"
    );
    for effect in [
        "Method { target: Local(\"log\"), method: \"append\"",
        "following L['log'] by a shadow of its items",
        "SetItem { target: Local(\"table\")",
        "SetAttr { target: Local(\"m\"), name: \"last\"",
        "DelItem { target: Local(\"table\")",
        "DelAttr { target: Local(\"m\"), name: \"steps\"",
        // dict.update: a store of each key.
        "SetItem { target: Local(\"table\"), key: Obj([PyObject PyStr { value: \"n\"",
    ] {
        assert!(stderr.contains(effect), "{effect} not recorded:\n{stderr}");
    }
}

/// In-place updates of the caller's tensors (tests/python/tensor_writes.py): simulated on the
/// tensor's stand-in, copied back into the caller's tensor after the graph, which stays the
/// object the caller holds. A KV cache written at a moving position is one dynamic graph after
/// one recompile; one tensor under two names is told apart by the guards.
#[test]
fn updates_of_the_callers_tensors_are_written_back() {
    let (stdout, stderr) = traced_with_effects_logged("tensor_writes.py");
    assert!(stdout.contains("ALL OK 0"), "{stdout}");
    assert_eq!(stdout.matches("\nok ").count() + 1, 14, "{stdout}");
    assert!(!stderr.contains("plugin panicked"), "{stderr}");
    // A buffer is written back through the module's `_buffers` dict; an argument, itself.
    for target in [
        "WriteBack { target: Key(Key(InstanceDict(Local(\"self\"))",
        "WriteBack { target: Local(\"a\")",
        "WriteBack { target: Item(Local(\"ts\")",
    ] {
        assert!(stderr.contains(target), "{target} not recorded:\n{stderr}");
    }
}

/// Stores into the closure cells of the caller's functions (tests/python/caller_cells.py): a
/// factory's counter stored twice and read through another function holding the cell, two
/// counters whose functions share a cell on some calls only, a store on both sides of a
/// break, in a loop, and a decorator counting the calls of a module's forward: replayed into
/// the same cells, equal to eager over five calls, in one graph per frame (the call no longer
/// breaks), and recorded as stores into a closure cell.
#[test]
fn stores_into_the_callers_closure_cells_are_replayed() {
    let (stdout, stderr) = traced_with_effects_logged("caller_cells.py");
    println!("{stdout}");
    assert!(stdout.contains("ALL OK 0"), "{stdout}");
    assert_cases_ok(
        &stdout,
        &[
            "a factory's counter, stored twice, read through another function",
            "two counters' functions, sharing a cell on some calls",
            "a counter stored on both sides of a break",
            "a counter stored in a loop",
            "a decorator counting the calls of a module's forward",
        ],
    );
    assert!(
        stderr.contains("StoreClosureCell {"),
        "no store into a closure cell recorded:\n{stderr}"
    );
}

/// Sets of the caller's (tests/python/caller_sets.py): read by membership (a name in a global
/// set that changes between calls, a layer index in a growing skip set, a counter in a set of
/// milestones, guarded by its membership rather than its value), length, iteration in the
/// set's order and set methods; changed by add, update, discard and clear, replayed on the
/// same set (an int that changes per call computed by the replay). Equal to eager, with the
/// translation counts each case allows; a read after a change, an in-place operator and a
/// user's `__eq__` among the elements run as written. (Before sets were read, the captured
/// cases ran as written: 0 translations.)
#[test]
fn callers_sets_are_read_and_their_changes_replayed() {
    let (stdout, stderr) = traced_with_effects_logged("caller_sets.py");
    println!("{stdout}");
    assert!(stdout.contains("ALL OK 0"), "{stdout}");
    for case in [
        "a global set of names, changed between calls",
        "a skip set read in an unrolled loop, growing between calls (1 translations)",
        "a counter in a set of milestones (3 translations)",
        "a number computed from a changing one in a set (3 translations)",
        "sizes recorded in a set (add, update, discard)",
        "a changing int added and discarded (2 translations)",
        "iteration, set methods, a frozenset of tuples (2 translations)",
        "sets compared (2 translations)",
        "a set read after the call changed it (runs as written)",
        "an in-place operator on a caller's set (runs as written)",
        "a set cleared then added to (1 translations)",
        "a set holding an element with a user's __eq__",
        "a bool and floats looked up",
        "a set that becomes a subclass's instance with a __contains__ of its own",
    ] {
        assert!(stdout.contains(&format!("ok {case}")), "{case}:\n{stdout}");
    }
    for method in ["add", "update", "discard", "clear"] {
        assert!(
            stderr.contains(&format!(
                "target: Attr(Global(\"state\"), \"seen\"), method: \"{method}\""
            )),
            "no {method} of a caller's set recorded:\n{stderr}"
        );
    }
}

/// Stores into the caller's classes (tests/python/class_stores.py): a counter on a module's
/// class, `type(self).count += 1`, a tensor kept on a class, `cls.seen += k` in a class
/// method, a float on a class, replayed and followed, equal to eager over six calls, in one
/// graph and at most two or three translations (not one per call: the class is guarded entry
/// by entry, not by its version, which the replay changes). What the class guard must still
/// catch (a method replaced between calls, a value the caller changes, a new attribute) makes
/// the call translate again.
#[test]
fn stores_into_classes_are_replayed_without_a_translation_per_call() {
    let (stdout, stderr) = traced_with_effects_logged("class_stores.py");
    println!("{stdout}");
    assert!(stdout.contains("ALL OK 0"), "{stdout}");
    assert_cases_ok(
        &stdout,
        &[
            "a counter on the module's class",
            "type(self).count += 1, on a subclass",
            "a tensor kept on a class",
            "cls.seen += k in a class method",
            "a float on a class",
            "a class attribute the caller changes",
            "a method replaced between calls",
            "a function stored into a class, called through an instance",
            "a special name stored into a class",
            "one frame writes a class, another reads it",
        ],
    );
    assert!(
        stderr.contains("name: \"calls\"") && stderr.contains("on_class: true"),
        "no store into a class recorded:\n{stderr}"
    );
    // A class the call does not write, met where another class was (one `Module.__call__`
    // for every module class), keeps its version guard: comparing its namespace entry by
    // entry on every call cost two_blocks of benches/modules.sh 14% of its call.
    let script = python_dir().join("class_stores.py");
    let (_, guards) = output_of(
        &["--plugin".as_ref(), "symtrace".as_ref(), script.as_os_str()],
        &[("RUST_LOG", "symtrace::guards=debug")],
    );
    assert!(
        guards.contains("type(L['self']) unchanged (version"),
        "{guards}"
    );
    for class in ["Sequential", "Linear"] {
        assert!(
            !guards.contains(&format!("{class} with its")),
            "{class} guarded entry by entry:\n{guards}"
        );
    }
    assert!(guards.contains("Counter with its"), "{guards}");
}

/// `warnings.warn` in traced code (tests/python/deferred_warnings.py) is replayed after the
/// graph, as TorchDynamo replays a constant warning: the warnings made (text, category, file,
/// line) and the text written to stderr are eager's under every filter, with stacklevel
/// naming the caller or, from an inlined call, the translated frame, and a warning naming an
/// inlined function's own frame (of this module or another, whose registry it fills) named
/// explicitly. One from a generator's frame, under a handler, or with `showwarning` replaced
/// breaks.
#[test]
fn warnings_are_replayed_naming_the_lines_the_program_names() {
    let (stdout, stderr) = traced_with_effects_logged("deferred_warnings.py");
    println!("{stdout}");
    assert!(stdout.contains("ALL OK 0"), "{stdout}");
    assert_cases_ok(
        &stdout,
        &[
            "a forward pass warning under a flag, with a category",
            "a warning naming the caller's line (stacklevel=2)",
            "a warning naming the caller's line, traced alone",
            "a warning in an inlined call naming the translated frame's line",
            "the 'default' filter acts as when run",
            "the 'once' filter acts as when run",
            "the 'module' filter acts as when run",
            "the 'ignore' filter acts as when run",
            "the 'error' filter acts as when run",
            "a warning naming an inlined function's own frame, named explicitly",
            "warnings of another module's inlined functions under 'always'",
            "warnings of another module's inlined functions under 'default'",
            "warnings of another module's inlined functions under 'once'",
            "warnings of another module's inlined functions under 'module'",
            "warnings of another module's inlined functions under 'ignore'",
            "warnings of another module's inlined functions under 'error'",
            "a module's forward that warns, in one graph",
            "a warning from a generator's frame breaks",
            "a warning after a graph break naming the caller's line",
            "a warning under a handler breaks",
            "an error filter raises from the replay, the effects before it made",
            "a warning with showwarning replaced breaks",
        ],
    );
    assert!(
        stderr.contains("recorded Output { call: Located"),
        "{stderr}"
    );
}

/// Log records in traced code (tests/python/deferred_logs.py) are replayed after the graph
/// through the standard library's `Logger._log`, at the position of the call: the text each
/// handler writes (level, function, line, message) is eager's, with a tensor's value as it
/// was at the call, stacklevel=2 from an inlined helper, the root logger, a record after a
/// graph break, and levels changed between calls; a logger's first check of a level (its
/// cache empty) filled ahead instead of breaking; a record naming an inlined function's own
/// frame (one or two calls deep) named explicitly. A record of a logger with its own
/// `findCaller` naming an inlined frame, under a handler or with exc_info runs as written.
#[test]
fn log_records_are_replayed_naming_the_lines_the_program_names() {
    let (stdout, stderr) = traced_with_effects_logged("deferred_logs.py");
    println!("{stdout}");
    assert!(stdout.contains("ALL OK 0"), "{stdout}");
    assert_cases_ok(
        &stdout,
        &[
            "logger.info and warning with a tensor's value, debug disabled",
            "a helper logging its caller's line (stacklevel=2), the root logger",
            "a record after a graph break names the program's function",
            "levels changed between calls",
            "a logger's first check of a level, debug disabled and info enabled",
            "a record naming an inlined function's own line, named explicitly",
            "records naming inlined frames one and two calls deep",
            "a record of a logger with its own findCaller, from an inlined frame (runs as written)",
            "a record under a handler (runs as written)",
            "a record with exc_info (runs as written)",
        ],
    );
    assert!(
        stderr.contains("a log record deferred to the replacement"),
        "{stderr}"
    );
}

/// `print` in traced code (tests/python/deferred_prints.py) is replayed after the graph, in
/// program order with the other effects, with what it would have printed there: no graph
/// break, and the text equal to eager's. f-strings of changing numbers are formatted again
/// on each call, so a printed counter translates no more than once more. A stream written
/// in Python, a print under a handler and a rebound `sys.stdout` still break.
#[test]
fn prints_are_replayed_with_what_they_would_have_printed() {
    let (stdout, stderr) = traced_with_effects_logged("deferred_prints.py");
    println!("{stdout}");
    assert!(stdout.contains("ALL OK 0"), "{stdout}");
    assert_cases_ok(
        &stdout,
        &[
            "a forward pass printing a counter, a list, a tensor",
            "a tensor printed, then updated in place",
            "a caller's list printed, then appended to",
            "a print in an inlined call",
            "a print in a generator consumed by a comprehension",
            "prints on both sides of a break",
            "named tuples and collections' dicts print as their class",
            "f-strings of changing numbers, returned",
            "print(file=sys.stderr, flush=True)",
            "a stream written in Python breaks",
            "a print under a handler breaks",
            "a print after random draws breaks",
            "a print after sys.stdout is rebound breaks",
            "a print to a closed stream raises when replayed",
        ],
    );
    assert!(stderr.contains("recorded Output { call: Print"), "{stderr}");
}
