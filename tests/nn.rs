//! symtrace.nn: every module and functional op of tests/nn/cases.py against the values PyTorch
//! computes for it (tests/nn/reference.json, made by make_reference.py on CPython), eagerly
//! and traced; state_dict round trips; and the GPT of demos/gpt.py captured as one graph.

mod common;

use std::path::Path;

use common::*;

fn nn_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("nn")
}

fn compare_with_pytorch(mode: &str) {
    let ours = std::env::temp_dir().join(format!(
        "symtrace-nn-cases-{mode}-{}.json",
        std::process::id()
    ));
    run_ok(
        rustpython()
            .arg(nn_dir().join("run_cases.py"))
            .arg(&ours)
            .arg(mode),
    );
    let out = run_ok(
        rustpython()
            .arg(nn_dir().join("compare.py"))
            .arg(nn_dir().join("reference.json"))
            .arg(&ours),
    );
    let _ = std::fs::remove_file(&ours);
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}");
    // Every case of the reference passes (the count grows with the cases; it never shrinks
    // below those there are now).
    let counts: Vec<usize> = text
        .lines()
        .last()
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert!(
        counts.len() == 2 && counts[0] == counts[1] && counts[1] >= 144,
        "{mode}: {text}"
    );
}

#[test]
fn every_module_and_functional_op_matches_pytorch_eagerly() {
    compare_with_pytorch("eager");
}

#[test]
fn every_module_and_functional_op_matches_pytorch_traced() {
    compare_with_pytorch("traced");
}

#[test]
fn state_dict_round_trips_and_reports_what_does_not_fit() {
    let out = run_ok(rustpython().arg(nn_dir().join("state_dict.py")));
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}");
    for line in [
        "differ before: True",
        "keys: ['0.weight', '0.bias', '2.weight', '2.bias', '3.weight', '3.bias']",
        "<All keys matched successfully>",
        "equal after: True",
        "a copy, not a view: True",
        "Missing key(s) in state_dict: \"3.bias\".",
        "Unexpected key(s) in state_dict: \"extra\".",
        "size mismatch for 0.weight: copying a param with shape [2, 2] from checkpoint, the shape in current model is [8, 4].",
        "_IncompatibleKeys(missing_keys=['3.bias'], unexpected_keys=[])",
        "Linear(in_features=2, out_features=2, bias=True)",
        "training: False [False, False, False, False]",
        "kept its tensors: True",
        "the dict unchanged: 0 [0.0, 0.0, 0.0]",
        "loaded again: 0 [0.0, 0.0, 0.0]",
        "assign takes the dict's: True",
    ] {
        assert!(text.contains(line), "missing {line:?} in:\n{text}");
    }
}

#[test]
fn sequential_and_module_list_edit_like_lists_as_pytorch_numbers_them() {
    prints_what_pytorch_printed(&nn_dir(), "containers.py", "containers.expected");
}

#[test]
fn grid_sampling_prints_what_pytorch_printed() {
    prints_what_pytorch_printed(&nn_dir(), "grid_sampling.py", "grid_sampling.expected");
}

#[test]
fn fold_prints_what_pytorch_printed() {
    prints_what_pytorch_printed(&nn_dir(), "fold.py", "fold.expected");
}

/// `weight_norm`, `spectral_norm` and their removal, `get_submodule`/`get_parameter`/
/// `get_buffer`, the `upsample_*` aliases and `threshold_` (tests/nn/weight_norms.py).
#[test]
fn weight_reparametrizations_print_what_pytorch_printed() {
    prints_what_pytorch_printed(&nn_dir(), "weight_norms.py", "weight_norms.expected");
}

/// Packed sequences and the recurrent layers run on them (tests/nn/packed_sequences.py).
#[test]
fn packed_sequences_print_what_pytorch_printed() {
    prints_what_pytorch_printed(
        &nn_dir(),
        "packed_sequences.py",
        "packed_sequences.expected",
    );
}

/// Alpha dropout, `LazyLinear` and `special.ndtr`/`entr`/`xlog1py` (tests/nn/more_layers.py).
#[test]
fn alpha_dropout_lazy_linear_and_special_functions_print_what_pytorch_printed() {
    prints_what_pytorch_printed(&nn_dir(), "more_layers.py", "more_layers.expected");
}

#[test]
fn embedding_bags_print_what_pytorch_printed() {
    prints_what_pytorch_printed(&nn_dir(), "embedding_bag.py", "embedding_bag.expected");
}

#[test]
fn conv3d_prints_what_pytorch_printed() {
    prints_what_pytorch_printed(&nn_dir(), "conv3d.py", "conv3d.expected");
}

#[test]
fn vmap_and_channel_shuffle_print_what_pytorch_printed() {
    prints_what_pytorch_printed(
        &nn_dir(),
        "vmap_and_shuffle.py",
        "vmap_and_shuffle.expected",
    );
}

/// The output of `script` run plain, then under `--plugin symtrace`.
fn without_and_with_the_plugin(script: &Path) -> Vec<(bool, String)> {
    [false, true]
        .into_iter()
        .map(|plugin| {
            let mut cmd = rustpython();
            if plugin {
                cmd.args(["--plugin", "symtrace"]);
            }
            let text = String::from_utf8_lossy(&run_ok(cmd.arg(script)).stdout).into_owned();
            println!("plugin {plugin}:\n{text}");
            (plugin, text)
        })
        .collect()
}

/// The whole forward pass with its loss is one graph, with and without the plugin; traced
/// equals eager bit for bit; a second call translates nothing; under the plugin a plain
/// call of the model is traced too.
#[test]
fn the_gpt_forward_is_one_graph_equal_to_eager() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/gpt_capture.py");
    for (plugin, text) in without_and_with_the_plugin(&script) {
        // 119: each attention's `transpose(1, 2).contiguous()` is a copy (a clone node), as
        // torch's of a non-contiguous view is.
        assert!(text.contains("graphs: 1 breaks: 0 ops: 119"), "{text}");
        assert!(text.contains("fullgraph equal: True True"), "{text}");
        assert!(text.contains("translations: 1 1 hits: 1"), "{text}");
        let plain = if plugin {
            "plain call equal: True translations: 1"
        } else {
            "plain call equal: True translations: 0"
        };
        assert!(text.contains(plain), "{text}");
    }
}

/// demos/cnn.py: a residual CNN in training mode (BatchNorm2d updating its running statistics)
/// over three batch sizes, then in eval: equal to eager, one graph, two translations.
#[test]
fn the_cnn_demo_is_one_graph_equal_to_eager() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("demos/cnn.py");
    for (_, text) in without_and_with_the_plugin(&script) {
        assert_eq!(
            text.matches("traced equals eager: True").count(),
            3,
            "{text}"
        );
        assert!(text.contains("running means equal: True"), "{text}");
        assert!(
            text.contains("translations for three batch sizes: 2"),
            "{text}"
        );
        assert!(
            text.contains("captured: 1 graph, 71 ops, 0 graph breaks"),
            "{text}"
        );
    }
}

/// `symtrace.nn` runs its source on first use; a traced first call that reads `F.gelu` loads
/// it and finds it (it once found the module still unloaded and ran as written for good).
#[test]
fn a_first_traced_call_finds_the_functional_ops() {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/functional_first_call.py");
    let out = run_ok(rustpython().args(["--plugin", "symtrace"]).arg(&script));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("equal: True"), "{text}");
    assert!(text.contains("translations: 1 hits: 1"), "{text}");
}

/// Model code as users write it: a residual block of submodules is one graph, equal to eager
/// (its norm layer reaches `layer_norm` through more than 256 instructions of calls: the
/// frame holds a tensor, so its translation does not give up for want of tensor work); and a
/// function whose calls of one kind translate and of another fail translates the failing
/// kind once, not on every call (it was retranslated on each, four times slower than eager).
#[test]
fn model_code_is_one_graph_and_failures_are_remembered() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/module_calls.py");
    let out = run_ok(rustpython().args(["--plugin", "symtrace"]).arg(&script));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("block graphs: 1 breaks: 0 ops: 32"), "{text}");
    assert!(text.contains("block equal: True"), "{text}");
    assert!(
        text.contains("failing kind: recompiles 1 translations 0"),
        "{text}"
    );
    assert!(
        text.contains("failing kind equal: True captured kind equal: True"),
        "{text}"
    );
}

/// A forward that keeps state on its module (a call counter, its last output, both stored
/// through `Module.__setattr__` and its `isinstance(value, Parameter)`; one read back through
/// `__dict__`) is one graph, and its hot calls neither fall back nor translate again.
#[test]
fn module_state_set_in_forward_is_captured() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/module_calls.py");
    let out = run_ok(rustpython().args(["--plugin", "symtrace"]).arg(&script));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("state graphs: 1 breaks: 0"), "{text}");
    assert!(
        text.contains("state hot calls: fallbacks 0 translations 0"),
        "{text}"
    );
    assert!(text.contains("state equal: True True True"), "{text}");
}

/// Parameters made inside a traced call (`nn.Parameter(data)`, whose class's `__new__`
/// returns a marked copy of a tensor; `requires_grad_()` of a tensor the graph makes; a
/// `Linear` built there) are one graph with no break, marked as eager marks them, with
/// eager's values (the same random initialisation).
#[test]
fn parameters_made_in_a_call_are_captured_and_marked() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/module_calls.py");
    let out = run_ok(rustpython().args(["--plugin", "symtrace"]).arg(&script));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("parameters graphs: 1 breaks: 0"), "{text}");
    assert!(
        text.contains("parameters equal: True [True, False, True, True, False]"),
        "{text}"
    );
}

/// What model code written for torch spells besides methods (`torch.flatten(x, 1)` and the
/// other shape functions, `nn.Flatten`, `with torch.no_grad():`, `@torch.inference_mode()`)
/// computes the same with and without the plugin, and a model using them is one graph that
/// stays one over five batch sizes (a flatten's sizes are worked out per call); the same for
/// torch's compositions written in Python and `view(*shape, ...)`.
#[test]
fn torch_spellings_run_the_same_and_stay_in_the_graph() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/torch_spellings.py");
    let plain = run_ok(rustpython().arg(&script));
    let traced = run_ok(rustpython().args(["--plugin", "symtrace"]).arg(&script));
    let (plain, traced) = (
        String::from_utf8_lossy(&plain.stdout).into_owned(),
        String::from_utf8_lossy(&traced.stdout).into_owned(),
    );
    let computed = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| !l.starts_with("model "))
            .map(str::to_owned)
            .collect()
    };
    assert!(
        plain.contains("flatten (24,) (2, 12) (6, 4) (2, 12) [3.0]"),
        "{plain}"
    );
    assert!(plain.contains("predict 6 "), "{plain}");
    assert_eq!(computed(&plain), computed(&traced));
    // Each model: one graph, dynamic after its second size (2 translations over 4 or 5).
    let one_dynamic_graph = |model: &str| {
        let label = if model.is_empty() {
            "model".to_owned()
        } else {
            format!("model {model}")
        };
        for line in [
            format!("{label} translations: 2"),
            format!("{label} graphs: 1 breaks: 0"),
        ] {
            assert!(traced.contains(&line), "{model}: {traced}");
        }
    };
    // The classifier; the class token expanded to a batch size that changes; torch's
    // compositions (`rsqrt`, `t`, `mm`, `logsumexp`...) and `view(*shape, ...)`;
    // `device=x.device`, `.to(device)`, `x.device.type`, `requires_grad_(False)` of a
    // buffer's slice; top-k routing, a sampler's
    // `v[:, [-1]]`, `logp[st.arange(B), targets]`; `nn.MultiheadAttention` in an encoder
    // layer; a residual CNN (Conv2d, BatchNorm2d training, pooling, F.pad, Conv1d); fake
    // quantization (`round`, `ParameterList`, `ParameterDict`, a call counter on the class);
    // `nn.TransformerEncoder`/`nn.TransformerDecoder` stacks with causal and padding masks; a
    // bidirectional two-layer `nn.LSTM` and a `nn.GRUCell` over changing batch sizes; a
    // Llama-style decoder layer (RMSNorm, rotary embeddings concatenated from a tuple,
    // grouped-query attention, `full(fill_value=)`, `softmax(dtype=)`) over changing lengths;
    // arguments given by keyword (`gather(dim=, index=)`, `narrow(dim=, start=, length=)`,
    // `view(size=)`, `squeeze(dim=)`...) over changing lengths; torch.linalg's norms
    // (clipping by the global norm, RMS normalisation, a matrix norm) over changing lengths.
    for model in [
        "",
        "tokens",
        "heads",
        "positions",
        "router",
        "encoder",
        "convnet",
        "quantized",
        "seq2seq",
        "tagger",
        "llama",
        "keywords",
        "norms",
    ] {
        one_dynamic_graph(model);
    }
    for line in [
        "expand [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]",
        "tokens 6 ",
        "heads 4 ",
        "router 5 ",
        "encoder 6 ",
        "convnet 5 ",
        "quantized 5 4 ",
        "seq2seq 6 ",
        "tagger 5 ",
        "norms 6 ",
        // Construction as torch code writes it: nn.init, apply, .data, to(dtype), zero_grad.
        "init: True True True True",
        "built: symtrace.float32 [0.0, 0.0] True",
        // Another device is refused with a clear error.
        "device refused: symtrace computes on the CPU only, not on 'cuda'",
        // `@st.compile` and `@st.disable` on methods bind to the instance.
        "decorated [7.0, 6.0, 5.0] [5.0, 4.0, 3.0]",
    ] {
        assert!(plain.contains(line), "{line}: {plain}");
    }
}

/// The module tree walked in forward (`children()`, `named_children()`, `modules()`,
/// `parameters()`, `named_parameters()`, generators over sets that hold modules and
/// parameters by identity) is one graph equal to eager on every call; shared submodules and
/// tied weights are told apart from distinct ones by the guards, one translation for each
/// kind and not one per instance; a set of plain values and modules runs as written; a
/// `ModuleList` sliced by a depth that changes is a translation per depth, never the frame
/// as written.
#[test]
fn module_walks_in_forward_are_one_graph_and_shared_modules_are_told_apart() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/module_walks.py");
    let out = run_ok(rustpython().args(["--plugin", "symtrace"]).arg(&script));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("ALL OK 0"), "{text}");
    assert_eq!(text.matches("\nok ").count() + 1, 5, "{text}");
}

/// Layers compared with `==` (`layer == self.layer0`, `object`'s identity) are one graph,
/// and the relation is guarded: another layer made the first gives its own answer.
#[test]
fn modules_compared_by_equality_are_captured_and_guarded() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/module_calls.py");
    let out = run_ok(rustpython().args(["--plugin", "symtrace"]).arg(&script));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("compared graphs: 1 breaks: 0"), "{text}");
    assert!(
        text.contains("compared equal: [True, True, True, True]"),
        "{text}"
    );
}

/// Module classes called directly share `Module.__call__`'s code object: each class keeps
/// its own entries (the recompile limit counts per class of `self`), so the ninth class and
/// on are captured too (they ran as written), each at both ranks.
#[test]
fn each_module_class_called_directly_keeps_its_own_entries() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/module_calls.py");
    let out = run_ok(rustpython().args(["--plugin", "symtrace"]).arg(&script));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("classes translations: 24 fallbacks: 0"),
        "{text}"
    );
    assert!(text.contains("classes equal: True"), "{text}");
}

/// Recurrent layers (an LSTM of two bidirectional layers, batch first; a GRU; an RNN without
/// bias) over sequences of ten lengths: each layer and direction's steps are one op
/// (`recurrence`), so the layers take 4 translations and none runs as written (12 and 2 when
/// the steps were a Python loop, unrolled per length); the outputs are eager's.
#[test]
fn recurrent_layers_are_one_graph_for_every_length() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/module_calls.py");
    let out = run_ok(rustpython().args(["--plugin", "symtrace"]).arg(&script));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("recurrent translations: 4 fallbacks: 0"),
        "{text}"
    );
    assert!(text.contains("recurrent equal: True"), "{text}");
}

/// Outputs that view one tensor only the graph computes, at changing sizes (keys and values
/// unpacked from one projection and kept in a cache, `chunk` of a product returned,
/// overlapping slices of one product updated in place): the graph hands back that tensor too
/// and the outputs are made its views, so no call runs as written (14 did: "a view of the
/// elements another output views") and each update is seen through the other views as
/// eagerly.
#[test]
fn outputs_viewing_one_computed_tensor_are_its_views() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/module_calls.py");
    let out = run_ok(rustpython().args(["--plugin", "symtrace"]).arg(&script));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("shared views fallbacks: 0"), "{text}");
    assert!(text.contains("shared views equal: True"), "{text}");
}

/// A config whose class maps names in a `__getattribute__` written in Python (Hugging Face's
/// `PretrainedConfig`), read throughout a forward pass, and a subclass whose own
/// `__getattribute__` records each read and calls the base's through `super()`: the
/// functions are inlined and what they read guarded by value, so no call runs as written
/// (each read of the config ran its frame as written, "attribute n_head of a Config"), a
/// config changed between calls is seen, and the recorded reads are the program's.
#[test]
fn a_config_with_a_python_getattribute_is_read_in_the_graph() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/module_calls.py");
    let out = run_ok(rustpython().args(["--plugin", "symtrace"]).arg(&script));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("mapped config fallbacks, equal, reads: [(0, True, True), (0, True, True)]"),
        "{text}"
    );
}
