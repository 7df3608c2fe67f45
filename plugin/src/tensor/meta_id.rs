//! Small numbers for tensor metas (dtype and shape), so that a guard can ask whether a tensor
//! still has the meta it was translated for without taking the tensor's lock: a tensor
//! remembers the number of the meta it was last found to have, and forgets it when its data
//! is replaced (`PyTensor::write`). A lock is two atomic read-modify-writes, and a guard set
//! checks every input tensor on every call; a remembered number is one plain load.

use std::sync::{Mutex, OnceLock};

use hashbrown::HashMap;

use super::Meta;

/// The number of `meta`, the same for equal metas for the life of the process; never 0
/// (which a tensor holds while it remembers none).
pub fn intern(meta: &Meta) -> u32 {
    static TABLE: OnceLock<Mutex<HashMap<Meta, u32>>> = OnceLock::new();
    let mut table = TABLE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let next = u32::try_from(table.len() + 1).unwrap_or(u32::MAX);
    *table.entry(meta.clone()).or_insert(next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::PyTensor;
    use crate::tensor::{DType, Scalar, TensorData};

    fn data(shape: &[usize], dtype: DType) -> TensorData {
        let n = shape.iter().product();
        TensorData::from_scalars(shape, &vec![Scalar::Float(1.0); n], dtype).unwrap()
    }

    #[test]
    fn equal_metas_share_a_number_and_a_replaced_tensor_forgets_its_own() {
        let m23 = Meta {
            shape: vec![2, 3],
            dtype: DType::Float64,
        };
        let m32 = Meta {
            shape: vec![3, 2],
            dtype: DType::Float64,
        };
        let (a, b) = (intern(&m23), intern(&m32));
        assert_eq!(a, intern(&m23.clone()));
        assert!(a != b && a != 0 && b != 0);
        let t = PyTensor::new(data(&[2, 3], DType::Float64));
        assert!(
            t.has_meta(a, &m23) && t.has_meta(a, &m23),
            "found, then remembered"
        );
        assert!(!t.has_meta(b, &m32));
        // Replacing the data forgets the remembered number: the next answer is read again.
        *t.write() = data(&[3, 2], DType::Float64);
        assert!(!t.has_meta(a, &m23));
        assert!(t.has_meta(b, &m32));
        *t.write() = data(&[3, 2], DType::Float32);
        assert!(!t.has_meta(b, &m32));
    }
}
