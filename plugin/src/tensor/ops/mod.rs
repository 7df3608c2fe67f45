//! symtrace's own ops, registered in [`crate::tensor::registry()`].

pub mod checks;
pub mod conv;
pub mod elementwise;
pub mod factories;
pub mod factorize;
pub mod float64_math;
pub mod index_dims;
mod lane_sums;
pub mod linalg;
pub mod lineup;
pub mod pad;
pub mod parallel;
pub mod pool;
pub mod product;
pub mod recurrence;
pub mod reduce;
pub mod running;
pub mod sampling;
pub mod scan;
pub mod scatter;
pub mod select;
pub mod shape_ops;
pub mod softmax;
pub mod sort;
pub mod special_functions;
pub mod spectral;
pub(crate) mod transpose;
pub mod unary;
pub mod vector_math;

use super::registry::OpDef;

pub fn builtin_ops() -> Vec<OpDef> {
    let mut ops = elementwise::ops();
    ops.extend(reduce::ops());
    ops.extend(linalg::ops());
    ops.extend(shape_ops::ops());
    ops.extend(select::ops());
    ops.extend(factories::ops());
    ops.extend(scan::ops());
    ops.extend(running::ops());
    ops.extend(recurrence::ops());
    ops.extend(scatter::ops());
    ops.extend(sort::ops());
    ops.extend(conv::ops());
    ops.extend(pool::ops());
    ops.extend(pad::ops());
    ops.extend(index_dims::ops());
    ops.extend(sampling::ops());
    ops.extend(checks::ops());
    ops.extend(factorize::ops());
    ops.extend(spectral::ops());
    for op in &mut ops {
        op.size_free = elementwise::Binary::named(&op.name).is_some()
            || elementwise::Unary::named(&op.name).is_some()
            || SIZE_FREE.contains(&op.name.as_str());
    }
    ops
}

/// Ops whose attributes are dims, dtypes or constants, never sizes (besides the elementwise
/// families): what a graph recorded at one size may run at another.
const SIZE_FREE: &[&str] = &[
    "clamp",
    "multinomial",
    "standard_gamma",
    "poisson",
    "binomial",
    "where",
    "to",
    "sum",
    "mean",
    "max",
    "min",
    "argmax",
    "argmin",
    "var",
    "softmax",
    "log_softmax",
    "matmul",
    "dot",
    "linear",
    "transpose",
    "permute",
    "unsqueeze",
    "cat",
    "stack",
    "index_take",
    "gather",
    "index_select",
    "masked_fill",
    "tril",
    "triu",
    "clone",
    "cumsum",
    "cumprod",
    "cummax_values",
    "cummax_indices",
    "cummin_values",
    "cummin_indices",
    "logcumsumexp",
    "recurrence",
    "prod",
    "scatter",
    "scatter_add",
    "put",
    "element_positions",
    "index_add",
    "index_copy",
    "argsort",
    "index_dims",
    "index_dims_put",
    "conv2d",
    "max_pool2d",
    "avg_pool2d",
    "adaptive_avg_pool2d",
    "pad",
    // Holds only the truth it expects; its one-element input is re-inferred per call.
    "assert_truth",
];
