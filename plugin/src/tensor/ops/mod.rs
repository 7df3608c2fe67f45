//! symtrace's own ops, registered in [`crate::tensor::registry()`].

pub mod elementwise;
pub mod linalg;
pub mod reduce;
pub mod select;
pub mod shape_ops;

use super::registry::OpDef;

pub fn builtin_ops() -> Vec<OpDef> {
    let mut ops = elementwise::ops();
    ops.extend(reduce::ops());
    ops.extend(linalg::ops());
    ops.extend(shape_ops::ops());
    ops.extend(select::ops());
    ops
}
