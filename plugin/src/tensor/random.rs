//! Seeded random numbers for `rand` / `randn` (`symtrace.manual_seed(n)`): SplitMix64, and
//! Box-Muller for normals. Reproducible across runs and platforms; not NumPy's stream.

use std::sync::Mutex;

const DEFAULT_SEED: u64 = 0x853c_49e6_748f_ea9b;

static STATE: Mutex<u64> = Mutex::new(DEFAULT_SEED);

/// The seed last given to `manual_seed` (torch's `initial_seed`).
static INITIAL_SEED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(DEFAULT_SEED);

pub fn manual_seed(seed: u64) {
    INITIAL_SEED.store(seed, std::sync::atomic::Ordering::Relaxed);
    *STATE.lock().unwrap_or_else(|e| e.into_inner()) = seed;
}

pub fn initial_seed() -> u64 {
    INITIAL_SEED.load(std::sync::atomic::Ordering::Relaxed)
}

/// The generator's state, to put back with [`restore`] (a compiled graph that drew and then
/// raised: the frame runs again as written and draws as the program does).
pub fn state() -> u64 {
    *STATE.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn restore(state: u64) {
    *STATE.lock().unwrap_or_else(|e| e.into_inner()) = state;
}

fn next_u64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `n` numbers uniform in [0, 1).
pub fn uniform(n: usize) -> Vec<f64> {
    let mut s = STATE.lock().unwrap_or_else(|e| e.into_inner());
    (0..n)
        .map(|_| (next_u64(&mut s) >> 11) as f64 / (1u64 << 53) as f64)
        .collect()
}

/// `n` standard normal numbers.
pub fn normal(n: usize) -> Vec<f64> {
    let u = uniform(n.div_ceil(2) * 2);
    let mut out = Vec::with_capacity(n);
    for pair in u.chunks(2) {
        let r = (-2.0 * (1.0 - pair[0]).ln()).sqrt();
        let theta = 2.0 * std::f64::consts::PI * pair[1];
        out.push(r * theta.cos());
        out.push(r * theta.sin());
    }
    out.truncate(n);
    out
}
