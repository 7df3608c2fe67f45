//! Constructs that gave wrong answers when traced (issue 19): `tests/python/wrong_answers.py`
//! prints what each computes, and every mode of the plugin must print what the plain
//! interpreter prints. One test per defect, each comparing the lines of its cases.

mod common;

use std::sync::OnceLock;

use common::*;

/// The script's output plain and in each mode, run once.
fn outputs() -> &'static [(String, String)] {
    static OUT: OnceLock<Vec<(String, String)>> = OnceLock::new();
    OUT.get_or_init(|| {
        let script = python_dir().join("wrong_answers.py");
        let modes: &[(&str, &[&str])] = &[
            ("plain", &[]),
            ("--plugin symtrace", &["--plugin", "symtrace"]),
            (
                "trace_all=1",
                &["--plugin", "symtrace", "--plugin-opt", "trace_all=1"],
            ),
            (
                "backend=roundtrip",
                &["--plugin", "symtrace", "--plugin-opt", "backend=roundtrip"],
            ),
        ];
        modes
            .iter()
            .map(|(name, args)| {
                let out = rustpython()
                    .args(*args)
                    .arg(&script)
                    .env_remove("RUST_LOG")
                    .output()
                    .expect("rustpython runs");
                let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert!(out.status.success(), "{name}: {stdout}\n{stderr}");
                (name.to_string(), stdout)
            })
            .collect()
    })
}

/// Every mode prints, for the cases whose label starts with one of `labels`, the lines the
/// plain run prints (and there are some).
fn same_as_plain(labels: &[&str]) {
    let outs = outputs();
    let pick = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| labels.iter().any(|p| l.starts_with(p)))
            .map(str::to_owned)
            .collect()
    };
    let plain = pick(&outs[0].1);
    assert!(!plain.is_empty(), "no line starts with {labels:?}");
    for (mode, out) in &outs[1..] {
        assert_eq!(pick(out), plain, "{mode} differs from plain");
    }
}

#[test]
fn where_with_a_traced_condition() {
    same_as_plain(&["where "]);
}

#[test]
fn a_split_loop_inside_a_loop() {
    same_as_plain(&["nested split loops"]);
}

#[test]
fn in_on_strings_is_a_substring_test() {
    same_as_plain(&["substrings"]);
}

#[test]
fn dict_views_are_live() {
    same_as_plain(&["live views"]);
}

#[test]
fn methods_rebound_or_shadowed_are_seen() {
    same_as_plain(&["method", "function on Tensor"]);
}

#[test]
fn a_property_on_tensor_runs_as_often_as_eagerly() {
    same_as_plain(&["property"]);
}

#[test]
fn deletes_raise_where_they_raise() {
    same_as_plain(&["deletes", "del of a local"]);
}

#[test]
fn in_place_operators_after_specialization() {
    same_as_plain(&[
        "in-place after specialization",
        "str += after specialization",
    ]);
}

#[test]
fn a_local_read_unbound_after_a_break_raises() {
    same_as_plain(&["unbound after a break"]);
}

#[test]
fn translation_reads_no_name_of_a_user_callable() {
    same_as_plain(&["names of callables"]);
}

#[test]
fn a_descriptor_rebound_on_its_class_is_seen() {
    same_as_plain(&["descriptor rebound"]);
}

#[test]
fn keys_read_after_stores_see_the_stores_and_aliases() {
    same_as_plain(&["keys after stores"]);
}

#[test]
fn the_tracers_own_state_is_read_and_changed_at_run_time() {
    same_as_plain(&["tracer state"]);
}

#[test]
fn a_method_that_changes_its_tensor_changes_the_real_one() {
    same_as_plain(&["in-place method"]);
}

#[test]
fn a_dict_read_after_an_attribute_store_sees_the_store() {
    same_as_plain(&["dict after attribute"]);
}

#[test]
fn requires_grad_is_each_tensors_own() {
    same_as_plain(&["requires_grad"]);
}

#[test]
fn item_stores_into_graph_tensors_are_in_the_graph_and_seen_by_every_name() {
    same_as_plain(&["tensor stores"]);
    assert!(
        outputs()[0].1.contains("tensor stores, graphs: (1, 0)"),
        "{}",
        outputs()[0].1
    );
}

#[test]
fn isinstance_runs_a_metaclass_check_as_often_as_eagerly_in_one_graph() {
    same_as_plain(&["class tests"]);
    assert!(
        outputs()[0].1.contains("class tests, graphs: (1, 0)"),
        "{}",
        outputs()[0].1
    );
}

#[test]
fn enum_members_compare_by_identity_in_one_graph() {
    same_as_plain(&["enums"]);
    assert!(
        outputs()[0].1.contains("enums, graphs: (1, 0)"),
        "{}",
        outputs()[0].1
    );
    assert!(
        outputs()[0].1.contains("int enums, graphs: (1, 0)"),
        "{}",
        outputs()[0].1
    );
    assert!(
        outputs()[0]
            .1
            .contains("int enums, value and name, graphs: (1, 0)"),
        "{}",
        outputs()[0].1
    );
}

#[test]
fn a_dict_iterated_while_an_attribute_store_adds_to_it_raises() {
    same_as_plain(&["dict iterated while changed"]);
    assert!(
        outputs()[0]
            .1
            .contains("dict iterated while changed, argument raised"),
        "{}",
        outputs()[0].1
    );
}

#[test]
fn a_tuple_plus_a_list_raises_and_sequences_add_and_repeat_in_the_graph() {
    same_as_plain(&["sequence operators"]);
    let plain = &outputs()[0].1;
    assert!(
        plain.contains("sequence operators, concatenated: TypeError"),
        "{plain}"
    );
    assert!(
        plain.contains("sequence operators, graphs: (1, 0)"),
        "{plain}"
    );
}

#[test]
fn a_list_changed_around_a_raising_delete_keeps_only_the_changes_before_it() {
    same_as_plain(&["list changed around a raising delete"]);
    let plain = &outputs()[0].1;
    assert!(
        plain.contains("list changed around a raising delete, list: ([7, 7, 8, 8, 1, 2], {})"),
        "{plain}"
    );
}

#[test]
fn a_zero_d_tensor_as_masked_fill_value_is_a_graph_operand() {
    same_as_plain(&["masked_fill with a 0-d tensor"]);
    let plain = &outputs()[0].1;
    assert!(
        plain.contains(
            "masked_fill with a 0-d tensor: ([7.0, 7.0, 2.0, 3.0, 4.0], [0.0, 1.0, 2.0, 7.0, 7.0])"
        ),
        "{plain}"
    );
}

#[test]
fn an_instance_with_a_finalizer_is_made_and_finalized() {
    same_as_plain(&["finalizers", "finalized"]);
    let plain = &outputs()[0].1;
    assert!(
        plain.contains("finalized [6.0, 6.0]")
            && plain.contains("finalizers, live and made: (0, 3)"),
        "{plain}"
    );
}

#[test]
fn values_that_hold_themselves_run_as_written() {
    same_as_plain(&["values that hold themselves"]);
    let plain = &outputs()[0].1;
    assert!(
        plain.contains("values that hold themselves: ([6.0, 6.0], True, True, True)")
            && plain.contains("values that hold themselves, partial: ([4.0, 4.0], 1, True)")
            && plain
                .contains("values that hold themselves, read: ([[9.0], [9.0]], True, ', [...]]')"),
        "{plain}"
    );
}

#[test]
fn metaclass_data_descriptors_come_before_class_entries() {
    same_as_plain(&["metaclass data descriptors"]);
    let plain = &outputs()[0].1;
    assert!(
        plain.contains("metaclass data descriptors, type's: (True, 'Shadowed')")
            && plain.contains("metaclass data descriptors, user's: (\"the class's\",)")
            && plain.contains("metaclass data descriptors, user's: (\"the descriptor's\",)"),
        "{plain}"
    );
}

#[test]
fn a_failing_deletion_after_a_draw_leaves_the_generator_as_the_program_does() {
    same_as_plain(&["draws after a failing deletion"]);
    let plain = &outputs()[0].1;
    assert_eq!(
        plain
            .lines()
            .filter(|l| l.starts_with("draws after a failing deletion, raised"))
            .count(),
        2,
        "{plain}"
    );
}

#[test]
fn a_write_after_a_failing_deletion_is_not_written_back() {
    same_as_plain(&["a write after a failing deletion"]);
    let plain = &outputs()[0].1;
    assert_eq!(
        plain
            .lines()
            .filter(|l| l.starts_with("a write after a failing deletion, raised"))
            .count(),
        2,
        "{plain}"
    );
}

#[test]
fn a_value_held_twice_is_one_object() {
    same_as_plain(&["values held twice"]);
    let plain = &outputs()[0].1;
    assert!(
        plain.contains("values held twice: (True, True, True, True, True, True, [2.0, 2.0])"),
        "{plain}"
    );
}

#[test]
fn a_chunk_along_a_changing_size_is_checked_per_call() {
    same_as_plain(&["chunk along a changing size"]);
    let plain = &outputs()[0].1;
    assert!(
        plain.contains("chunk along a changing size: (6, [[16.0, 18.0], [20.0, 22.0]], 3)"),
        "{plain}"
    );
}

#[test]
fn the_callers_lists_are_compared_as_objects() {
    same_as_plain(&["identity of the caller's lists"]);
    let plain = &outputs()[0].1;
    assert!(
        plain.contains("identity of the caller's lists: (True, True, True, False, 1)"),
        "{plain}"
    );
}

#[test]
fn an_inlined_function_s_defaults_are_guarded() {
    same_as_plain(&["defaults of an inlined function"]);
    let plain = &outputs()[0].1;
    assert!(
        plain.contains("defaults of an inlined function: [[2.0, 2.0], [3.0, 3.0], [4.0, 4.0]]"),
        "{plain}"
    );
}

#[test]
fn a_constant_tensor_held_twice_at_a_break_is_one_object() {
    same_as_plain(&["a constant tensor held twice at a break"]);
    let plain = &outputs()[0].1;
    assert!(
        plain.contains(
            "a constant tensor held twice at a break: ([13.0, 13.0, 13.0], [3.0, 3.0, 3.0], True)"
        ),
        "{plain}"
    );
}

#[test]
fn an_inlined_closure_reads_the_frame_s_store_into_their_shared_cell() {
    same_as_plain(&["a cell shared with an inlined closure"]);
    let plain = &outputs()[0].1;
    assert!(
        plain.contains(
            "a cell shared with an inlined closure: [[5.0, 5.0], [10.0, 10.0], [15.0, 15.0]]"
        ),
        "{plain}"
    );
}

#[test]
fn a_caller_s_deque_read_after_appends_sees_them() {
    same_as_plain(&["histories"]);
    let plain = &outputs()[0].1;
    assert!(
        plain.contains("histories: (tensor([10., 10.]), 2, tensor([6., 6.]))"),
        "{plain}"
    );
}

#[test]
fn a_read_from_a_container_is_not_loaded_after_a_change_of_the_same_one() {
    same_as_plain(&["aliased"]);
    let plain = &outputs()[0].1;
    assert!(
        plain.contains("aliased: (tensor([10., 10.]), tensor([14., 14.]), tensor([4., 4.]))"),
        "{plain}"
    );
}

#[test]
fn a_break_at_a_super_method_load_resumes_without_passing_its_null() {
    same_as_plain(&["super new", "super method"]);
    let plain = &outputs()[0].1;
    assert!(plain.contains("super new: [5.0, 5.0]"), "{plain}");
    assert!(
        plain.contains("super method list: [[1.0, 1.0], [4.0, 4.0], [7.0, 7.0]]"),
        "{plain}"
    );
}

#[test]
fn iterators_are_read_as_far_as_python_reads_them() {
    same_as_plain(&["islice", "in iterator", "in generator"]);
    let plain = &outputs()[0].1;
    assert!(plain.contains("islice (2, 2): ([], 2)"), "{plain}");
    assert!(plain.contains("in iterator 2: (True, [3, 4])"), "{plain}");
}

#[test]
fn a_mapping_made_in_the_call_is_read_as_a_mapping() {
    same_as_plain(&["mappings"]);
    let plain = &outputs()[0].1;
    assert!(
        plain.contains("mappings: ({(0, 1): 1}, {(0, 1): 1}, {(0, 1): 1})"),
        "{plain}"
    );
    assert!(
        plain.contains("mappings by methods: ({'a': 10}, {'only': 'own'}, {'only': 'own'})"),
        "{plain}"
    );
}

/// `dict(m)` of a caller's object with `keys` (case 42): the interpreter steps what `keys()`
/// gives between the reads of the entries, so a generator's steps and the reads alternate,
/// a list the reads extend is read to its end, and a view of a dict the reads change raises.
#[test]
fn a_callers_mapping_is_read_as_the_interpreter_steps_it() {
    same_as_plain(&["caller mappings"]);
    let plain = &outputs()[0].1;
    assert!(
        plain.contains("caller mappings: [({'a': 2, 'b': 4}, ['key a', 'get a', 'key b', 'get b']), ({'a': 2, 'ax': 3, 'axx': 3}, None), 'RuntimeError: dictionary changed size during iteration']"),
        "{plain}"
    );
}

/// A `__getattr__` that is a native method (`dict.__getitem__`) is called: its entry is
/// found, and its KeyError is what a handler sees.
#[test]
fn a_native_getattr_hook_is_called() {
    same_as_plain(&["native __getattr__"]);
    let plain = &outputs()[0].1;
    assert!(
        plain.contains("native __getattr__: ([1002.0, 1002.0], [('calls', 2), ('scale', 2.0)])"),
        "{plain}"
    );
}

/// Case 44: the referent of a caller's weak reference, whose last other strong reference a
/// side effect of the call drops, is the one the frame's variable keeps alive.
#[test]
fn a_weak_referent_is_kept_alive_by_the_frame() {
    same_as_plain(&["weak referent"]);
    let plain = &outputs()[0].1;
    assert!(plain.contains("weak referent: [3.0, 3.0]"), "{plain}");
}

/// Case 45: a class on tuple that defines its own `__contains__` or `__eq__` is not tested as
/// tuple tests its items.
#[test]
fn a_tuple_subclass_keeps_its_own_protocols() {
    same_as_plain(&["tuple protocols"]);
    let plain = &outputs()[0].1;
    assert!(
        plain.contains("tuple protocols: (True, True, True, True)"),
        "{plain}"
    );
}

/// Case 46: a dict keyed by enum members, read by a member, follows its values and keys as
/// they change between calls.
#[test]
fn an_enum_keyed_dict_follows_its_changes() {
    same_as_plain(&["enum table"]);
    let plain = &outputs()[0].1;
    assert!(plain.contains("enum table: ([-1.0], False, 2)"), "{plain}");
}

/// Case 47: a str or float argument, or a str key of a caller's dict, that a later call
/// passes as an instance of a subclass with the same value, is that subclass's instance.
#[test]
fn a_subclass_instance_equal_to_a_constant_is_not_the_constant() {
    same_as_plain(&["same value, other class"]);
    let plain = &outputs()[0].1;
    for line in [
        "same value, other class: (True, False, ['str'])",
        "same value, other class: (False, True, ['str'])",
        "same value, other class: (False, False, ['Color'])",
    ] {
        assert!(plain.contains(line), "{plain}");
    }
}

/// Case 48: a float argument compared with itself is not equal to itself when it is a NaN.
#[test]
fn a_nan_compared_with_itself_is_not_equal() {
    same_as_plain(&["nan test"]);
    let plain = &outputs()[0].1;
    assert!(plain.contains("nan test: ([0.0], 'nan')"), "{plain}");
}

/// Case 49: an attribute stored and then stored again through the instance's `__dict__`
/// is read as the second store left it.
#[test]
fn an_attribute_stored_through_its_dict_is_read_back() {
    same_as_plain(&["an attribute stored through __dict__"]);
    let plain = &outputs()[0].1;
    assert!(
        plain
            .contains("an attribute stored through __dict__: ([2.0], 2, [13.0], {'v': 3, 'w': 5})"),
        "{plain}"
    );
}

/// Case 50: a module's namespace changed as globals and read as a dict, or changed as a
/// dict and read as globals, gives what the last change left.
#[test]
fn a_namespace_changed_one_way_and_read_the_other() {
    same_as_plain(&["one namespace, two channels"]);
    let plain = &outputs()[0].1;
    assert!(
        plain.contains("one namespace, two channels: ([1.0], [6.0], [7.0], 7)"),
        "{plain}"
    );
}

/// Case 51: a builtin the call replaces through the builtins module is the one it calls.
#[test]
fn a_builtin_replaced_through_the_builtins_module_is_called() {
    same_as_plain(&["a builtin replaced"]);
    let plain = &outputs()[0].1;
    assert!(
        plain.contains("a builtin replaced: ([200.0], 1)"),
        "{plain}"
    );
}

/// Case 52: views share their base's elements (an item store through `m[i][j]`, an update of
/// a view seen in its base and the reverse, views returned by a graph and written later), as
/// torch's do; the function that makes and updates views is one graph.
#[test]
fn views_share_their_base_s_elements() {
    same_as_plain(&["views share their base's elements"]);
    let plain = &outputs()[0].1;
    assert!(
        plain.contains(
            "views share their base's elements: [[[0.0, 5.0, -1.0], [0.0, 0.0, -1.0]], \
             [[1.0, 2.0, 3.0], [3.5, 101.0, 6.5], [0.0, 0.0, 0.0]], [1.0, 2.0, 3.0], \
             [2.0, 101.0, 0.0], [31.0, 41.0, 101.0], \
             [[10.0, 31.0, 60.0], [20.0, 41.0, 70.0], [60.0, 101.0, 160.0]], \
             [[10.0, 20.0, 60.0], [31.0, 41.0, 101.0], [60.0, 70.0, 160.0]], \
             [[10.0, 11.0, 12.0], [3.0, 4.0, 5.0]]]"
        ),
        "{plain}"
    );
    assert!(
        plain.contains("views share their base's elements, graphs: (1, 0)"),
        "{plain}"
    );
}

#[test]
fn an_update_of_a_view_made_by_any_ops_writes_through_in_the_graph() {
    same_as_plain(&["views made by any ops write through"]);
    let plain = &outputs()[0].1;
    // Worked out by hand from torch's semantics (the view ops share elements).
    assert!(
        plain.contains(
            "views made by any ops write through: [[[40.0, 50.0, 2.0], [3.0, 4.0, 5.0], \
             [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]], [[1.0, -1.0, 2.0], [4.0, 40.0, 50.0], \
             [7.0, 70.0, 80.0], [0.0, 0.0, 0.0]], [1.0, -1.0, 2.0]]"
        ),
        "{plain}"
    );
    assert!(
        plain.contains("views made by any ops write through, graphs: (1, 0)"),
        "{plain}"
    );
}

#[test]
fn a_view_where_a_changing_number_says_is_not_written_at_the_recorded_place() {
    same_as_plain(&["a view where a changing number says"]);
    let plain = &outputs()[0].1;
    // Slot i takes i + 1 in both caches: each later call wrote the recorded call's slot.
    assert!(
        plain.contains(
            "a view where a changing number says: ([2.0, 6.0, 12.0, 20.0, 30.0], \
             [[1.0, 2.0, 3.0, 4.0, 5.0, 0.0], [1.0, 2.0, 3.0, 4.0, 5.0, 0.0]], \
             [2.0, 6.0, 12.0, 20.0, 30.0]"
        ),
        "{plain}"
    );
    assert_eq!(
        plain
            .matches("a view where a changing number says, graphs: (1, 0)")
            .count(),
        2,
        "{plain}"
    );
}

#[test]
fn effects_before_an_int_too_large_for_a_graph_input_happen() {
    same_as_plain(&["effects before an overflow", "55 before the overflow"]);
    let plain = &outputs()[0].1;
    // Five calls printed and appended, the fourth's before it raised.
    assert_eq!(
        plain.matches("55 before the overflow,").count(),
        5,
        "{plain}"
    );
    assert!(plain.contains("[1, 2, 3, 1, 4])"), "{plain}");
}

#[test]
fn a_detached_output_the_program_keeps_is_a_view_in_one_graph() {
    same_as_plain(&["detached outputs"]);
    let plain = &outputs()[0].1;
    // The update through `last` is seen in `y`; explain() counts one graph and no break
    // for each (the frame ran as written: `(0, 1)`).
    assert!(
        plain.contains(
            "detached outputs: (([[1.0, 3.0], [5.0, 7.0], [9.0, 11.0]], \
             [[1.0, 3.0], [5.0, 7.0], [9.0, 11.0]])"
        ),
        "{plain}"
    );
    assert_eq!(
        plain.matches("detached outputs, graphs: (1, 0)").count(),
        3,
        "{plain}"
    );
}

#[test]
fn a_view_updated_in_place_and_handed_back_is_a_view_in_one_graph() {
    same_as_plain(&["updated views handed back"]);
    let plain = &outputs()[0].1;
    // The store through the returned transpose lands in `x`; explain() counts one graph and
    // no break for each (the frame ran as written: `(0, 1)`).
    assert!(
        plain.contains(
            "updated views handed back: ([[0.0, 100.0, 4.0, 3.0], [4.0, 10.0, 12.0, 7.0]], \
             [[100.0, 10.0], [4.0, 12.0]]"
        ),
        "{plain}"
    );
    assert_eq!(
        plain
            .matches("updated views handed back, graphs: (1, 0)")
            .count(),
        3,
        "{plain}"
    );
}

#[test]
fn one_tensor_under_two_names_is_one_fake() {
    same_as_plain(&["one tensor under two names"]);
    let plain = &outputs()[0].1;
    // The first call's weight, halved once the forward ran: seen by `m.weight.sum()`.
    assert!(
        plain.contains("one tensor under two names: [([[8.5, 11.5]], [[0.5, 1.0], [1.5, 2.0]])"),
        "{plain}"
    );
    // explain() counts one graph and no break (`(3, 6)` before: a break at each update).
    assert!(
        plain.contains("one tensor under two names, graphs: (1, 0)"),
        "{plain}"
    );
}
