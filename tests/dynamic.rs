//! Recompiles and what they cost (issue 21): the stances of `set_stance`, the recompile limit
//! said once, recompile reasons that name the guard with the value it saw.

mod common;

use common::{output_of, python_dir, run_ok, rustpython};

fn run(script: &str, env: &[(&str, &str)]) -> (String, String) {
    let path = python_dir().join("dynamic").join(script);
    output_of(&[path.as_os_str()], env)
}

#[test]
fn each_stance_does_what_torch_s_does() {
    let (out, _) = run("stances.py", &[]);
    println!("{out}");
    assert!(out.contains("STANCES OK"), "{out}");
    // The error names the entry, its guard and the value the call gave.
    assert!(
        out.contains("would translate again (stance fail_on_recompile): entry 1: guard failed: L['n'] == 2 (saw 3)"),
        "{out}"
    );
}

#[test]
fn the_recompile_limit_is_said_once_and_entries_keep_serving() {
    let (out, err) = run(
        "recompile_limit.py",
        &[("RUST_LOG", "symtrace::recompiles=info")],
    );
    println!("{out}\n{err}");
    assert!(out.contains("LIMIT OK"), "{out}");
    // Said once for `f`, and once for `label`, whose failed translations count to it.
    assert_eq!(
        err.matches("recompile limit (8) reached").count(),
        2,
        "{err}"
    );
    // Each recompile lists every entry tried, each with the value it saw.
    assert!(
        err.contains("recompiling (entry 3 of 8): entry 1: guard failed: L['mode'] == \"\" (saw 'mm'); entry 2: guard failed: L['mode'] == \"m\" (saw 'mm')"),
        "{err}"
    );
    assert!(
        err.contains("G['w'].requires_grad is True (saw False)"),
        "{err}"
    );
    // An enum member by its name (read off the member, not by running its repr).
    assert!(err.contains("(saw Act.TANH)"), "{err}");
}

/// The count a script printed as `translations CASE N`.
fn translations(out: &str, case: &str) -> usize {
    translations_of(out, &format!("translations {case}"))
}

#[test]
fn numbers_that_change_per_call_cause_no_recompile() {
    let (out, _) = run("numbers.py", &[]);
    println!("{out}");
    assert!(out.contains("NUMBERS OK"), "{out}");
    // Five functions of a float over 100 calls: one translation each, the fourth's once
    // per dtype of its tensor (`where`, `clamp`, `masked_fill` of the float), the fifth's
    // (`full_like`, `new_full`, `full` of it, `lerp` by it) twice per dtype: `lerp`'s
    // `abs(weight) < 0.5` changes once, its outcome guarded.
    assert_eq!(translations(&out, "floats"), 9, "{out}");
    // A position counter compared with, added to and multiplied into int64 tensors over 12
    // calls: specialized once, then a 0-d int64 input.
    assert_eq!(translations(&out, "int_positions"), 2, "{out}");
    // The first call fixes the step; from the second, every item is read per call.
    assert_eq!(translations(&out, "indexed_items"), 2, "{out}");
    // A position both a slice store's bound and compared with `arange(16)`, over 10 steps.
    assert_eq!(translations(&out, "cache_positions"), 2, "{out}");
    // `x.mul(t)`, `div`, `add`, `sub`, `multiply`, `true_divide` of a float over 50 values,
    // and `st.add(x, t)`... (the function form was specialized per value).
    assert_eq!(translations(&out, "method_operators"), 1, "{out}");
    // Over 100 calls: `lr > 0.05` true, then false (its condition is guarded); `step == 0`
    // recompiles once on the int, which is then compared by condition too.
    assert!(translations(&out, "branches") <= 4, "{out}");
    // A global, an attribute and a dict item incremented over 100 calls: one translation.
    assert_eq!(translations(&out, "counters"), 1, "{out}");
    assert_eq!(translations(&out, "counter_returned"), 1, "{out}");
    // Counters scaling a tensor: specialized once, then graph inputs (automatic dynamic).
    assert_eq!(translations(&out, "counter_scales"), 2, "{out}");
    // A counter and a length changing together: one recompile makes both dynamic.
    assert_eq!(translations(&out, "counter_and_length"), 2, "{out}");
    // The frame, its loop body (once more when the counter first changes), the resume
    // after the break: not one per iteration of 30.
    assert!(translations(&out, "split_loop") <= 4, "{out}");
    // Branches on `step % 3 == 0`, `step > 4` and `step // 2 >= 10` over 100 steps: the
    // first step specialized, then one translation per combination of outcomes met (6),
    // not one per step.
    assert!(translations(&out, "schedule") <= 7, "{out}");
    assert!(out.contains("fallbacks schedule 0"), "{out}");
    // Ints in slices (`x[:, -n:]`, `x[:, pos:pos + w]`), narrow and a slice store, over 8 values: specialized
    // once, then one dynamic graph.
    assert_eq!(translations(&out, "windows"), 2, "{out}");
    // `step / warmup`, `beta ** step` over 100 steps: specialized once, then graph inputs;
    // then `1 / d` down to a zero divisor: specialized once, deferred, then the call that
    // raises runs as the program does.
    assert!(translations(&out, "powers_and_quotients") <= 4, "{out}");
    // A cosine schedule (`float`, `math.cos`, `math.exp`, `math.sqrt` of the step, warm-ups taken
    // with `min`) over 100 steps: specialized once, then graph inputs, once more where the
    // warm-up's `min` changes sides (3); then `math.log` down to a domain error, raised
    // where the program raises it. Specialized on the step, it was a translation per step.
    assert!(translations(&out, "math_of_counters") <= 5, "{out}");
    // The epoch in the milestones, a decay from the epoch compared with a constant, the
    // truth of `(epoch + 1) % 4`, `alpha=` of a float from it, over 10 epochs: specialized
    // once, then once per combination of outcomes met (6 here). Forced, each epoch
    // translated again (the limit of 8, then the frame as written).
    assert!(translations(&out, "conditions_of_counters") <= 7, "{out}");
    // A counter as the index of a tensor store (`buf[pos % n] = v`) and in `min(pos, n)` as a
    // slice bound, over 10 pushes: specialized once, then resolved per call, once more where
    // `min` changes sides. Forced, each push translated again.
    assert!(translations(&out, "ring_buffer") <= 4, "{out}");
    // An EMA whose decay is `min(self.decay, (1 + n) / (10 + n))` of a counter, over 12
    // updates: specialized once, then the counter an input and the attribute a constant
    // (the comparison's outcome guarded); once more for the decay the program changes.
    // Both compared by value, each update translated again.
    assert_eq!(translations(&out, "weight_averages"), 3, "{out}");
    // `st.tensor(step)`, of a list of them, `as_tensor`, `new_tensor` over 12 calls:
    // specialized once, then 0-d inputs (each call was translated again).
    assert_eq!(translations(&out, "tensors_of_numbers"), 2, "{out}");
    // `st.tensor(lengths)` of a caller's list of ints over 8 calls: specialized once.
    assert_eq!(translations(&out, "tensors_of_caller_lists"), 2, "{out}");
    // A Noam schedule's `min` of two numbers that both change with the step, and a counter
    // against a limit the program moves, over 30 steps: specialized once, once more when
    // the limit first moves, then each comparison's outcome guarded on both of its sides:
    // one translation per combination of outcomes met (4). Forced, each step was translated
    // again (the limit of 8, then as written).
    assert!(translations(&out, "noam_schedule") <= 6, "{out}");
    // Lists a call appends to, their lengths read (returned, scaling a tensor, in a branch,
    // through another name of the list, before an append through the other), two classes
    // over 20 calls each: specialized once, then the lengths read per call (once more per
    // combination of outcomes met: 4 and 2). By value, each call was a translation (the
    // limit of 8, then as written).
    assert!(translations(&out, "list_lengths") <= 6, "{out}");
    // `int`, `round`, `floor`, `ceil`, `trunc`, `log2` of a float, bitwise operators,
    // shifts, `** 2`, `pow`, `divmod` and a `min` of three of an int, over 24 values:
    // specialized once, then once per outcome of the `min` (2); then an int too large for
    // int64 next to a tensor over 5 values: specialized once, dynamic, and the call that
    // overflows runs as written (3). Forced, each value was a translation (the limit of 8).
    assert!(translations(&out, "int_functions") <= 6, "{out}");
    // A global count tested for being nonzero over 14 calls (0, then 1 to 10, then 0):
    // specialized once, then its truth guarded, not its value.
    assert_eq!(translations(&out, "truth_of_counters"), 2, "{out}");
    // `n ** -1` and `(2 * n) ** -2` over 13 values: specialized once, then computed again
    // by the replacement (by value, a translation per value up to the limit of 8); at 0
    // a guard fails and the frame raises as written.
    assert_eq!(translations(&out, "inverse_powers"), 2, "{out}");
    // A counter and a float stored into int64 and float tensors (item stores, `fill_`) over
    // 12 calls: specialized once, then 0-d inputs (by value, each call was a translation).
    assert_eq!(translations(&out, "stored_counters"), 2, "{out}");
    // Floats of sizes and counters together (`rows / calls`, `T * lr`, `B / k`) over 10
    // calls of changing sizes: specialized once, then the counters graph inputs; where the
    // divisor reaches zero its guard fails and the call raises as written (a translation
    // that breaks there, and its resume). By value, each call was a translation (the limit
    // of 8, then as written).
    assert!(translations(&out, "sizes_over_counters") <= 5, "{out}");
}

#[test]
fn stores_at_a_changing_index_or_key_cause_no_recompile() {
    let (out, _) = run("indexed_stores.py", &[]);
    println!("{out}");
    assert!(out.contains("INDEXED STORES OK"), "{out}");
    // A ring of 12 slots over 30 pushes, the position advanced after the store (and its
    // length read after it), or before it: specialized once, then the store replayed at
    // the index computed per call. By value, each position was a translation (the limit
    // of 8, then as written).
    assert_eq!(translations(&out, "ring"), 2, "{out}");
    assert_eq!(translations(&out, "ring_ahead"), 2, "{out}");
    // `buf[pos] += x` and `hits[pos] = hits[pos] + 1` over 30 calls: the items read per call
    // at the index, then stored back at it.
    assert_eq!(translations(&out, "accumulate"), 2, "{out}");
    // A table filled at an argument's index, 16 calls.
    assert_eq!(translations(&out, "argument_index"), 2, "{out}");
    // Outputs kept in a dict by step and a memo by the step modulo 5, another dict read by
    // a str key after the stores, over 20 calls: the keys computed per call.
    assert_eq!(translations(&out, "step_outputs"), 2, "{out}");
}

#[test]
fn dynamic_false_specializes_every_number_again() {
    let mut cmd = rustpython();
    cmd.args(["--plugin", "symtrace", "--plugin-opt", "dynamic=false"])
        .arg(python_dir().join("dynamic").join("numbers.py"));
    let out = String::from_utf8_lossy(&run_ok(&mut cmd).stdout).into_owned();
    assert!(out.contains("NUMBERS OK"), "{out}");
    // Each new value translates again, up to the limit (8 per code object).
    assert!(translations(&out, "floats") >= 20, "{out}");
    assert!(translations(&out, "counters") >= 8, "{out}");
}

#[test]
fn a_model_called_with_every_batch_size_translates_twice() {
    let (out, err) = run("batch_sizes.py", &[("RUST_LOG", "symtrace::guards=debug")]);
    println!("{out}\n{err}");
    assert!(out.contains("BATCH SIZES OK"), "{out}");
    // The guard of the dynamic entry leaves the batch size open.
    assert!(
        err.contains("is a float64 tensor of shape [≥2, 8]"),
        "{err}"
    );
}

#[test]
fn sizes_the_program_reads_stay_static() {
    let (out, err) = run(
        "size_leaks.py",
        &[("RUST_LOG", "symtrace::recompiles=info")],
    );
    println!("{out}\n{err}");
    assert!(out.contains("LEAKS OK"), "{out}");
    // Sizes computed from a dynamic size and given to a slice, a reshape, a tensor made
    // in its shape or an identity (`st.eye(n)`) are worked out per call; a size used as a
    // plain number (`[1.0] * n`), or the number of rows iterated, fix the size (each says
    // so: a dynamic size used as a number).
    // A shape read from a value made from the input (`running += x.mean(0)` reads the mean's)
    // is checked per call: the same at every batch size, one dynamic graph.
    // A squeeze's dimensions are checked per call (`x @ w[:, :1]).squeeze(-1)`: one graph),
    // as is the fit of an update in place of a value made from the input (`out += x`).
    for case in [
        "half",
        "flat",
        "like",
        "eye_of",
        "fine",
        "cat",
        "stats",
        "head",
        "squeeze_all",
        "squeeze_batch",
        "residual",
    ] {
        assert!(translations_of(&out, case) <= 3, "{case}:\n{out}");
    }
    for case in ["numbered", "rows"] {
        assert!(translations_of(&out, case) >= 7, "{case}:\n{out}");
    }
    // A size fixed that way beside one that changes freely: the graph stays dynamic in the
    // free one, one entry per fixed size (3 sizes of x over 10 calls; keeping the whole graph
    // static made 8).
    assert!(translations_of(&out, "pinned_beside_free") <= 4, "{out}");
    assert!(
        err.contains(
            "sizes kept static: the program uses a dynamic size as a number (in0.size(0) == "
        ),
        "{err}"
    );
}

/// The count a script printed as `LABEL N`.
fn translations_of(out: &str, case: &str) -> usize {
    out.lines()
        .find_map(|l| l.strip_prefix(&format!("{case} ")))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no count for {case}:\n{out}"))
}

#[test]
fn mark_dynamic_and_mark_static_override_the_policy() {
    let (out, _) = run("marks.py", &[]);
    println!("{out}");
    assert!(out.contains("MARKS OK"), "{out}");
    assert!(out.contains("marked dynamic: 1"), "{out}");
    assert!(out.contains("marked static: 8"), "{out}");
}

#[test]
fn a_gpt_called_with_every_length_translates_twice() {
    let (out, err) = run("lengths.py", &[("RUST_LOG", "symtrace::guards=debug")]);
    println!("{out}\n{err}");
    assert!(out.contains("LENGTHS OK"), "{out}");
    // 61 calls: the first at its sizes, the second makes T dynamic, every later one hits.
    assert_eq!(translations_of(&out, "translations"), 2, "{out}");
    assert_eq!(translations_of(&out, "cache hits"), 59, "{out}");
    // The model's assert is a check of its outcome, not of T.
    assert!(err.contains("size check: in0.size(1) <= 64"), "{err}");
}

#[test]
fn sizes_computed_from_a_dynamic_size_are_worked_out_per_call() {
    let (out, err) = run(
        "size_exprs.py",
        &[("RUST_LOG", "symtrace::recompiles=info")],
    );
    println!("{out}\n{err}");
    assert!(out.contains("SIZE EXPRS OK"), "{out}");
    // Slices, views, narrow, arange, zeros/ones/full (a fill of a size too), tril/triu by a diagonal of sizes, min/max (of shapes and generators too), math.prod, chunks, split sections, int indices, pad_sequence, pad
    // widths, repeat counts and linspace steps of sizes, sizes yielded by a generator, unbind
    // along a dimension that keeps its size, interpolate by a factor or to a size, `math.ceil`,
    // `math.floor` and `int` of a size divided by an int, ints of other floats computed from
    // a size (`int(T * 0.5)`, `round(T / 3)`, `math.floor(T ** 0.5)`), a size divided by a float of sizes (`n / (n * c / 1.5)`), a tensor compared
    // with a size (`arange(T) < T - 1`), an assert on a tensor's truth, lists of ints among them as indexes, a basic index that addresses only dimensions
    // of a fixed size or takes an int from the dynamic one: one graph for every
    // size (each result equal to eager's, the script checks).
    for case in [
        "slices",
        "views",
        "split_heads",
        "narrowed",
        "ranges",
        "factories",
        "constant_masks",
        "diagonal_masks",
        "running",
        "padded_sequences",
        "later_node",
        "chunks",
        "sections",
        "index_int",
        "padded",
        "repeated",
        "spaced",
        "floats",
        "float_divisors",
        "resized",
        "rounded",
        "rounded_floats",
        "rounded_returned",
        "extremes",
        "compared_to_sizes",
        "asserted",
        "basic_indexed",
        "listed_indexes",
    ] {
        assert_eq!(translations_of(&out, case), 1, "{case}:\n{out}");
    }
    // Int tensors among slices of the size that changes, read and stored: one translation at
    // the first size (2 rows, whose `x[1:]` is one row, which broadcasting tells apart) and
    // one for every other.
    assert_eq!(translations_of(&out, "mixed_indexes"), 2, "{out}");
    // Two branches on sizes: one translation per outcome, not per size.
    assert_eq!(translations_of(&out, "branches"), 4, "{out}");
    // The truth of sizes (`if k:` in `roll`, `if n % 4:`): one translation per outcome.
    assert_eq!(translations_of(&out, "rolled"), 2, "{out}");
    // chunk(2) and split(4) along the size that changes: one translation per number of
    // pieces of the split (1, 2, 3, 4 and 8 over the sizes called), not per size.
    assert_eq!(translations_of(&out, "chunked_rows"), 5, "{out}");
    // Shapes compared as tuples, item by item as Python does: one translation per outcome
    // (below 9 but not 4; 4 and 9, where a size equals a number, fixed; above 9), not per size.
    assert_eq!(translations_of(&out, "shapes_compared"), 4, "{out}");
    // A size as an operand of tensor arithmetic (`x * len(x)`, `x.sum(0) / x.shape[0]`): a
    // 0-d tensor made per call, one graph (and so a float computed from it, `floats` above);
    // a float of it used as a plain number (`round(len(x) / 3, 1)`): fixed, one translation
    // per size.
    assert_eq!(translations_of(&out, "number"), 1, "{out}");
    assert!(translations_of(&out, "forced") >= 7, "{out}");
    // A size returned (`len(x), x.shape`) or stored (`h.n = len(x)`, `self.seen += len(x)`):
    // read again from the tensor it is a dimension of (`t.shape[d]`, the arithmetic redone
    // with the numbers it was added to), one graph.
    for case in ["returned", "stored", "counted"] {
        assert_eq!(translations_of(&out, case), 1, "{case}:\n{out}");
    }
    // An int argument: its first change makes it an input the sizes are computed from.
    for case in ["int_slice", "int_view", "int_narrow", "int_arange_len"] {
        assert_eq!(translations_of(&out, case), 2, "{case}:\n{out}");
    }
    // One a squeeze's rank depends on: which dimensions are 1 is checked per call (the
    // recorded graph, where the slice of `n` rows is not 1 row, serves every `n` but 1).
    assert_eq!(translations_of(&out, "int_static"), 2, "{out}");
}

#[test]
fn a_dynamic_graph_called_at_the_same_sizes_again_runs_a_static_copy_made_for_them() {
    let (out, err) = run("copies.py", &[("RUST_LOG", "symtrace::graph=debug")]);
    println!("{out}\n{err}");
    assert!(out.contains("COPIES OK"), "{out}");
    // One translation for every size; a copy from the second call at a size on, none for
    // sizes called once (7), one per value of the int the window's sizes are worked out from.
    assert_eq!(translations_of(&out, "block"), 1, "{out}");
    let copies: Vec<&str> = err
        .lines()
        .filter_map(|l| l.split("gets a static copy for its inputs ").nth(1))
        .collect();
    assert_eq!(
        copies,
        [
            "[3, 16], [16, 16]",
            "[5, 16], [16, 16]",
            "[2, 16], [16, 16]",
            "2, [12, 4]",
            "3, [12, 4]",
            "5, [12, 4]"
        ],
        "{err}"
    );
}

#[test]
fn numbers_computed_from_the_two_before_keep_the_replacement_small() {
    let (out, err) = run(
        "paired_numbers.py",
        &[("RUST_LOG", "symtrace::bytecode=debug")],
    );
    assert!(out.contains("PAIRED OK"), "{out}\n{err}");
    // Every replacement, original beside it, of both functions over five calls: a few
    // dozen lines with an operator (4,870,846 before the bound counted operators).
    let operators = err.matches("BINARY_OP").count();
    assert!(operators < 500, "{operators} BINARY_OP lines");
}
