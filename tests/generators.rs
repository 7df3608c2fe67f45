//! Generators under `--plugin symtrace` (tests/python/generators.py): a user generator
//! consumed inside a traced function is simulated with its consumer, item by item (its side
//! effects interleave with the loop body's as when run), so the function is one graph; a
//! generator function that runs as written says so, once, on `symtrace::graph_breaks`.

mod common;

use common::*;

#[test]
fn generators_consumed_in_a_traced_function_are_simulated_with_it() {
    let (_, stderr) = case_script_passes(
        "generators.py",
        &[
            "a for loop over a user generator",
            "sum() of a generator expression",
            "list() of a user generator",
            "yield from, with the inner generator's return value",
            "a generator function that runs as written",
        ],
    );
    let said = stderr
        .lines()
        .filter(|l| {
            l.contains("counter (")
                && l.contains("[GB-GENERATOR] a generator function runs as written")
        })
        .count();
    assert_eq!(said, 1, "said once per code object:\n{stderr}");
}
