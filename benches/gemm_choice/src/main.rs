//! GFLOP/s of three GEMM crates on the products of symtrace's benchmarks (benches/anchors.sh),
//! float64 and float32, on one thread and on rayon's (and matrixmultiply's) threads:
//!
//!     cargo run --release              # every core
//!     cargo run --release -- 1         # one thread
use std::time::Instant;

/// The best of 15 runs, in seconds.
fn best(mut f: impl FnMut()) -> f64 {
    f();
    (0..15)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::MAX, f64::min)
}

macro_rules! compare {
    ($t:ty, $mm:path, $m:expr, $k:expr, $n:expr, $threads:expr) => {{
        let (m, k, n, threads): (usize, usize, usize, usize) = ($m, $k, $n, $threads);
        let a: Vec<$t> = (0..m * k).map(|i| ((i as f64) * 0.37).sin() as $t).collect();
        let b: Vec<$t> = (0..k * n).map(|i| ((i as f64) * 0.11).cos() as $t).collect();
        let mut c: Vec<$t> = vec![0.0; m * n];
        let gflops = |seconds: f64| 2.0 * (m * k * n) as f64 / seconds / 1e9;
        let par = if threads == 1 { gemm::Parallelism::None } else { gemm::Parallelism::Rayon(threads) };
        // SAFETY: row-major m × k, k × n and m × n buffers that outlive each call.
        let g = best(|| unsafe {
            gemm::gemm(m, n, k, c.as_mut_ptr(), 1, n as isize, false, a.as_ptr(), 1, k as isize,
                b.as_ptr(), 1, n as isize, 0.0, 1.0, false, false, false, par)
        });
        let mm = best(|| unsafe {
            $mm(m, k, n, 1.0, a.as_ptr(), k as isize, 1, b.as_ptr(), n as isize, 1, 0.0,
                c.as_mut_ptr(), n as isize, 1)
        });
        let fpar = if threads == 1 { faer::Par::Seq } else { faer::Par::rayon(threads) };
        let f = best(|| {
            let x = faer::MatRef::from_row_major_slice(&a, m, k);
            let y = faer::MatRef::from_row_major_slice(&b, k, n);
            let z = faer::MatMut::from_row_major_slice_mut(&mut c, m, n);
            faer::linalg::matmul::matmul(z, faer::Accum::Replace, x, y, 1.0 as $t, fpar);
        });
        println!(
            "{:<4} {:>4}x{:<4}x{:<4} {:>12.1} {:>15.1} {:>8.1}",
            stringify!($t), m, k, n, gflops(g), gflops(mm), gflops(f)
        );
    }};
}

fn main() {
    let threads: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("a thread count"))
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    rayon::ThreadPoolBuilder::new().num_threads(threads).build_global().expect("one pool");
    // SAFETY: set before matrixmultiply's first product reads it, on the only thread.
    unsafe { std::env::set_var("MATMUL_NUM_THREADS", threads.to_string()) };
    println!("{threads} thread(s), GFLOP/s (best of 15)");
    println!("{:<4} {:>14} {:>12} {:>15} {:>8}", "", "m x k x n", "gemm", "matrixmultiply", "faer");
    // The MLP's layers (batch 256), attention's projections (8 × 128 tokens) and one head's
    // scores, a matrix-vector-like product.
    for (m, k, n) in [(256, 512, 1024), (256, 1024, 1024), (256, 1024, 10), (1024, 128, 128), (128, 128, 128), (8, 1024, 1024)] {
        compare!(f64, matrixmultiply::dgemm, m, k, n, threads);
        compare!(f32, matrixmultiply::sgemm, m, k, n, threads);
    }
}
