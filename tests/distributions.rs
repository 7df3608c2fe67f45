//! symtrace.distributions: the families' densities, moments, entropies, KL divergences,
//! transforms and validation errors against what PyTorch printed for the same script, plain
//! and under the plugin; and model code built on them (policies, a VAE's KL, a Gaussian
//! process) compiled into one graph each with eager's values.

mod common;

use std::path::{Path, PathBuf};

use common::*;

fn distributions_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("distributions")
}

#[test]
fn distributions_print_what_pytorch_printed() {
    prints_what_pytorch_printed(&distributions_dir(), "cases.py", "cases.expected");
}

#[test]
fn model_code_on_distributions_is_one_graph_with_eager_values() {
    prints_the_expected_output(&distributions_dir(), "policies.py", "policies.expected");
}
