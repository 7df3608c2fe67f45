//! `assert_truth`: the check of an `assert` on a tensor's value, kept in the graph as
//! TorchDynamo keeps it (`torch._assert_async`). It raises where the truth of its one
//! element (`bool(t)`: not zero, NaN true) is not the one the program asserted (`expect`);
//! the graph then fails, and the frame runs as written, raising the program's own
//! `AssertionError` with its message from its own line.

use crate::tensor::data::TensorData;
use crate::tensor::dtype::DType;
use crate::tensor::error::TensorError;
use crate::tensor::error::shape_str;
use crate::tensor::registry::{Arity, Attrs, Meta, OpDef};

pub fn ops() -> Vec<OpDef> {
    vec![
        OpDef::new(
            "assert_truth",
            Arity::Exactly(1),
            |m: &[Meta], _: &Attrs| {
                if m[0].shape.iter().product::<usize>() != 1 {
                    return Err(TensorError::runtime(format!(
                        "the truth value of a tensor of shape {} is ambiguous",
                        shape_str(&m[0].shape)
                    )));
                }
                Ok(Meta {
                    shape: Vec::new(),
                    dtype: DType::Bool,
                })
            },
            |t: &[&TensorData], a: &Attrs| {
                if t[0].item()?.as_bool() != a.flag("expect") {
                    return Err(TensorError::runtime("an asserted truth does not hold"));
                }
                Ok(TensorData::scalar(crate::tensor::Scalar::Bool(true)))
            },
        )
        .checks(),
    ]
}
