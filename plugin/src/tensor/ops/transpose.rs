//! A row-major matrix transposed into a buffer: a small linear layer's weight on every call
//! (`linalg::linear_into`), an attention's keys in a lowered graph. Square tiles go through
//! registers, read as whole rows and written as whole columns by unpack steps (AVX's for
//! 8-byte elements where the CPU has it, SSE2's otherwise, which every x86-64 CPU has):
//! element by element, the three 16×16 float64 weights of a tiny `nn.Sequential`'s linear
//! layers took about 3,400 instructions a call, in 2×2 tiles (SSE2) 2,900, in 4×4 tiles (AVX)
//! 1,400 (callgrind).

/// An element type whose values are their bits and nothing else (no padding, no pointers):
/// a tile moves them through vector registers as raw bits.
///
/// # Safety
/// The type has no padding bytes.
pub(crate) unsafe trait PlainBits: Copy {}

// SAFETY: plain numbers, every byte part of the value.
unsafe impl PlainBits for f64 {}
// SAFETY: as above.
unsafe impl PlainBits for f32 {}
// SAFETY: as above.
unsafe impl PlainBits for i64 {}
// SAFETY: as above.
unsafe impl PlainBits for u32 {}

/// The `rows × cols` row-major matrix `m`, transposed (row-major `cols × rows`), written into
/// `out` (`rows * cols` elements).
pub(crate) fn transpose_into<T: PlainBits>(m: &[T], rows: usize, cols: usize, out: &mut [T]) {
    let len = rows * cols;
    assert!(
        m.len() >= len && out.len() >= len,
        "a transpose's buffers hold the matrix"
    );
    if len == 0 {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    {
        // The tiles move bits and never look at them: any element of the size will do.
        let (whole_rows, whole_cols) = match std::mem::size_of::<T>() {
            // SAFETY: the tiles lie within the first `len` elements of both buffers (checked
            // above): rows `r..r + 4` of `m` and columns `c..c + 4`, with r + 4 <= rows and
            // c + 4 <= cols, and the same block of `out`, transposed; the CPU has AVX.
            8 if std::arch::is_x86_feature_detected!("avx") => unsafe {
                tiles_4x4_of_8_bytes(m, rows, cols, out)
            },
            // SAFETY: as above, with tiles of two.
            8 => unsafe {
                tiles::<T, 2>(m, rows, cols, out, |s, c, d, r| {
                    tile_2x2_of_8_bytes(s, c, d, r)
                })
            },
            // SAFETY: as above, with tiles of four.
            4 => unsafe {
                tiles::<T, 4>(m, rows, cols, out, |s, c, d, r| {
                    tile_4x4_of_4_bytes(s, c, d, r)
                })
            },
            _ => (0, 0),
        };
        leftovers(m, rows, cols, out, whole_rows, whole_cols);
    }
    #[cfg(not(target_arch = "x86_64"))]
    leftovers(m, rows, cols, out, 0, 0);
}

/// Every element of `m` outside the block of its first `whole_rows` rows and `whole_cols`
/// columns, moved one by one.
fn leftovers<T: Copy>(
    m: &[T],
    rows: usize,
    cols: usize,
    out: &mut [T],
    whole_rows: usize,
    whole_cols: usize,
) {
    let rows_of_m = m[..rows * cols].chunks_exact(cols).enumerate();
    if whole_cols < cols {
        for (r, row) in rows_of_m.clone().take(whole_rows) {
            for (c, &v) in row.iter().enumerate().skip(whole_cols) {
                out[c * rows + r] = v;
            }
        }
    }
    for (r, row) in rows_of_m.skip(whole_rows) {
        for (c, &v) in row.iter().enumerate() {
            out[c * rows + r] = v;
        }
    }
}

/// The block of `m`'s first rows and columns that whole `S × S` tiles cover, each moved by
/// `tile` (a closure, inlined: through a function pointer, each tile was a call); returns how
/// many rows and columns that block has.
///
/// # Safety
/// `m` and `out` hold at least `rows * cols` elements; `tile(src, cols, dst, rows)` reads `S`
/// elements at each of `src`, `src + cols`, ... and writes `S` at each of `dst`, `dst + rows`,
/// ... (`S` of each).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn tiles<T, const S: usize>(
    m: &[T],
    rows: usize,
    cols: usize,
    out: &mut [T],
    tile: impl Fn(*const T, usize, *mut T, usize),
) -> (usize, usize) {
    let (whole_rows, whole_cols) = (rows - rows % S, cols - cols % S);
    let (src, dst) = (m.as_ptr(), out.as_mut_ptr());
    // Plain loops: `step_by`'s bookkeeping cost as much as a tile's moves.
    let mut r = 0;
    while r < whole_rows {
        let mut c = 0;
        while c < whole_cols {
            // SAFETY: element (r, c) of `m` and (c, r) of `out`, whose tiles end within
            // `rows * cols` elements (see `transpose_into`).
            let (from, to) = unsafe { (src.add(r * cols + c), dst.add(c * rows + r)) };
            tile(from, cols, to, rows);
            c += S;
        }
        r += S;
    }
    (whole_rows, whole_cols)
}

/// `tiles` of 4×4 8-byte elements, in 256-bit registers.
///
/// # Safety
/// As `tiles`; the CPU has AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn tiles_4x4_of_8_bytes<T>(
    m: &[T],
    rows: usize,
    cols: usize,
    out: &mut [T],
) -> (usize, usize) {
    use std::arch::x86_64::*;
    let tile = |src: *const T, cols: usize, dst: *mut T, rows: usize| {
        // SAFETY: `tiles` passes the corners of tiles within both buffers; unaligned loads
        // and stores, and shuffles that move bits without looking at them.
        unsafe {
            let [a, b, c, d] = [0, 1, 2, 3].map(|i| _mm256_loadu_pd(src.add(i * cols).cast()));
            // (a0 b0 a2 b2), (a1 b1 a3 b3), (c0 d0 c2 d2), (c1 d1 c3 d3)
            let (ab_even, ab_odd) = (_mm256_unpacklo_pd(a, b), _mm256_unpackhi_pd(a, b));
            let (cd_even, cd_odd) = (_mm256_unpacklo_pd(c, d), _mm256_unpackhi_pd(c, d));
            let columns = [
                _mm256_permute2f128_pd::<0x20>(ab_even, cd_even),
                _mm256_permute2f128_pd::<0x20>(ab_odd, cd_odd),
                _mm256_permute2f128_pd::<0x31>(ab_even, cd_even),
                _mm256_permute2f128_pd::<0x31>(ab_odd, cd_odd),
            ];
            for (i, column) in columns.into_iter().enumerate() {
                _mm256_storeu_pd(dst.add(i * rows).cast(), column);
            }
        }
    };
    // SAFETY: the caller's promise.
    unsafe { tiles::<T, 4>(m, rows, cols, out, tile) }
}

/// A 2×2 tile of 8-byte elements: rows `src` and `src + cols` become rows `dst` and
/// `dst + rows`.
///
/// # Safety
/// Two elements are readable at `src` and at `src + cols`, writable at `dst` and `dst + rows`.
#[cfg(target_arch = "x86_64")]
unsafe fn tile_2x2_of_8_bytes<T>(src: *const T, cols: usize, dst: *mut T, rows: usize) {
    use std::arch::x86_64::*;
    // SAFETY: the caller's promise; unaligned loads and stores.
    unsafe {
        let a = _mm_loadu_si128(src.cast());
        let b = _mm_loadu_si128(src.add(cols).cast());
        _mm_storeu_si128(dst.cast(), _mm_unpacklo_epi64(a, b));
        _mm_storeu_si128(dst.add(rows).cast(), _mm_unpackhi_epi64(a, b));
    }
}

/// A 4×4 tile of 4-byte elements: rows `src + i * cols` become rows `dst + i * rows`.
///
/// # Safety
/// Four elements are readable at each `src + i * cols`, writable at each `dst + i * rows`
/// (`i` in 0..4).
#[cfg(target_arch = "x86_64")]
unsafe fn tile_4x4_of_4_bytes<T>(src: *const T, cols: usize, dst: *mut T, rows: usize) {
    use std::arch::x86_64::*;
    // SAFETY: the caller's promise; unaligned loads and stores.
    unsafe {
        let [a, b, c, d] = [0, 1, 2, 3].map(|i| _mm_loadu_si128(src.add(i * cols).cast()));
        // (a0 b0 a1 b1), (c0 d0 c1 d1), (a2 b2 a3 b3), (c2 d2 c3 d3)
        let (ab_low, cd_low) = (_mm_unpacklo_epi32(a, b), _mm_unpacklo_epi32(c, d));
        let (ab_high, cd_high) = (_mm_unpackhi_epi32(a, b), _mm_unpackhi_epi32(c, d));
        let columns = [
            _mm_unpacklo_epi64(ab_low, cd_low),
            _mm_unpackhi_epi64(ab_low, cd_low),
            _mm_unpacklo_epi64(ab_high, cd_high),
            _mm_unpackhi_epi64(ab_high, cd_high),
        ];
        for (i, column) in columns.into_iter().enumerate() {
            _mm_storeu_si128(dst.add(i * rows).cast(), column);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every element lands where its index says, in both tile sizes, whatever is left over
    /// from the tiles.
    #[test]
    fn transposes_move_each_element_to_its_place() {
        let shapes = [
            (1, 1),
            (2, 2),
            (4, 4),
            (16, 16),
            (3, 5),
            (7, 9),
            (8, 13),
            (13, 8),
            (1, 17),
            (17, 1),
        ];
        for (rows, cols) in shapes {
            let n = rows * cols;
            let wide: Vec<f64> = (0..n).map(|i| i as f64 + 0.5).collect();
            let narrow: Vec<f32> = (0..n).map(|i| i as f32 + 0.25).collect();
            let (mut wide_out, mut narrow_out) = (vec![-1.0; n], vec![-1.0f32; n]);
            transpose_into(&wide, rows, cols, &mut wide_out);
            transpose_into(&narrow, rows, cols, &mut narrow_out);
            // The 2×2 tiles, which `transpose_into` takes only where the CPU lacks AVX.
            #[cfg(target_arch = "x86_64")]
            let small_tiles = {
                let mut out = vec![-1.0; n];
                // SAFETY: both buffers hold the matrix.
                let (whole_rows, whole_cols) = unsafe {
                    tiles::<f64, 2>(&wide, rows, cols, &mut out, |s, c, d, r| {
                        tile_2x2_of_8_bytes(s, c, d, r)
                    })
                };
                leftovers(&wide, rows, cols, &mut out, whole_rows, whole_cols);
                out
            };
            #[cfg(not(target_arch = "x86_64"))]
            let small_tiles = wide_out.clone();
            assert_eq!(small_tiles, wide_out, "{rows}x{cols}, 2×2 tiles");
            for r in 0..rows {
                for c in 0..cols {
                    let at = format!("{rows}x{cols} at {r},{c}");
                    assert_eq!(wide_out[c * rows + r], wide[r * cols + c], "{at}");
                    assert_eq!(narrow_out[c * rows + r], narrow[r * cols + c], "{at}");
                }
            }
        }
    }
}
