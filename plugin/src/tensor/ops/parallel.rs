//! Work over large tensors split among rayon's threads, by whole lanes: each lane (a softmax
//! row, or one element of a map) is computed by the same code as on one thread, so a result
//! never depends on the thread count.

use std::mem::MaybeUninit;
use std::sync::Once;

use rayon::prelude::*;
use smallvec::SmallVec;

/// The number of threads large work is split among (rayon's pool). The first call sets the
/// pool up: on the process's main thread (where `rustpython` runs the program), with that
/// thread as one of the pool's, so that an op called from Python does its share of the work
/// instead of handing all of it to the pool's threads and sleeping until they finish. Each
/// such hand-off is two thread wake-ups, 15-50 µs under a hypervisor: as much as a 128×128
/// product. The pool has as many threads as rayon would give it (`RAYON_NUM_THREADS`, else
/// one per core). On any other thread, or when the application has set rayon's pool up
/// itself, the pool is rayon's default one.
pub fn threads() -> usize {
    static POOL: Once = Once::new();
    POOL.call_once(|| {
        let on_main = std::thread::current().name() == Some("main");
        if on_main && configured_threads() > 1 {
            // An error means the pool exists already (the application made it): it stays.
            let _ = rayon::ThreadPoolBuilder::new()
                .use_current_thread()
                .build_global();
        }
    });
    rayon::current_num_threads()
}

/// The thread count rayon gives its default pool: `RAYON_NUM_THREADS` when a positive
/// number, else the available parallelism.
fn configured_threads() -> usize {
    std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Tensors of at least this many elements are split: below it, waking the threads costs more
/// than they save (a float64 `exp` over 2^15 elements takes about 150 µs on one thread).
pub const PARALLEL_ELEMENTS: usize = 1 << 15;

/// Elements per piece of work: enough to amortize the hand-over, few enough that both threads
/// get several pieces.
pub const PIECE: usize = 1 << 13;

/// `f(xs_part, out_part)` over matching parts of `xs` and `out` (of equal lengths), each part
/// whole lanes of `lane` elements: the whole at once below [`PARALLEL_ELEMENTS`], else parts on
/// rayon's threads.
pub fn by_lanes<T: Sync, U: Send>(
    xs: &[T],
    out: &mut [U],
    lane: usize,
    f: impl Fn(&[T], &mut [U]) + Sync,
) {
    debug_assert_eq!(xs.len(), out.len());
    let lane = lane.max(1);
    if xs.len() < PARALLEL_ELEMENTS || threads() < 2 {
        return f(xs, out);
    }
    let part = (PIECE / lane).max(1) * lane;
    xs.par_chunks(part)
        .zip(out.par_chunks_mut(part))
        .for_each(|(x, o)| f(x, o));
}

/// `f(offset, parts)` over matching parts of the equal-length slices of `data` (the same
/// elements of each), in place, given with the index of their first element: the whole at
/// once below [`PARALLEL_ELEMENTS`], else parts on rayon's threads. For work whose every
/// element is computed alike wherever the parts fall.
pub fn by_parts_mut<T: Send>(
    mut data: SmallVec<[&mut [T]; 2]>,
    f: impl Fn(usize, &mut [&mut [T]]) + Sync,
) {
    let len = data.first().map_or(0, |d| d.len());
    debug_assert!(data.iter().all(|d| d.len() == len));
    if len < PARALLEL_ELEMENTS || threads() < 2 {
        return f(0, &mut data);
    }
    let mut pieces: Vec<SmallVec<[&mut [T]; 2]>> =
        (0..len.div_ceil(PIECE)).map(|_| SmallVec::new()).collect();
    for d in data {
        for (piece, chunk) in pieces.iter_mut().zip(d.chunks_mut(PIECE)) {
            piece.push(chunk);
        }
    }
    pieces
        .into_par_iter()
        .enumerate()
        .for_each(|(k, mut p)| f(k * PIECE, &mut p));
}

/// `out` holding a copy of `xs` (of equal length), as the initialized slice it then is.
pub fn copied<'a, T: Copy>(xs: &[T], out: &'a mut [MaybeUninit<T>]) -> &'a mut [T] {
    debug_assert_eq!(xs.len(), out.len());
    for (o, &x) in out.iter_mut().zip(xs) {
        o.write(x);
    }
    // SAFETY: `MaybeUninit<T>` has `T`'s layout, and every element was just written.
    unsafe { &mut *(out as *mut [MaybeUninit<T>] as *mut [T]) }
}
