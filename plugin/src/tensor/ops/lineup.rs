//! How the elements of a binary op's row-major operands line up with its row-major result,
//! and the one loop over lined-up operands that eager kernels (`elementwise`) and lowered
//! graphs (`graph::lowering`) both run, so that they compute the same elements alike.

use std::mem::MaybeUninit;

/// How an operand's elements line up with the result's, when both are row-major: whole, one
/// element for all, repeated row after row (a trailing-dimensions operand such as a bias), or
/// each element repeated over a run (a leading-dimensions operand such as a kept-dims mean).
#[derive(Clone, Copy)]
pub enum Lineup<'a, T> {
    Whole(&'a [T]),
    One(T),
    Rows(&'a [T]),
    Lanes(&'a [T]),
}

/// How an operand of `operand` shape lines up with a result of `out` shape, decided from the
/// shapes alone (so that a lowered graph decides it once, when it is built).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fit {
    Whole,
    One,
    Rows,
    Lanes,
}

pub fn fit(operand: &[usize], out: &[usize]) -> Option<Fit> {
    if operand == out {
        return Some(Fit::Whole);
    }
    let numel: usize = operand.iter().product();
    if numel == 1 {
        return Some(Fit::One);
    }
    // Leading ones aside, the operand's dimensions are the result's last ones.
    let first = operand
        .iter()
        .position(|&d| d != 1)
        .unwrap_or(operand.len());
    let tail = &operand[first..];
    if numel > 0 && out.len() >= tail.len() && out.ends_with(tail) {
        return Some(Fit::Rows);
    }
    // The operand's dimensions are the result's first ones, then ones (leading ones too).
    let pad = out.len().checked_sub(operand.len())?;
    let padded = |d: usize| if d < pad { 1 } else { operand[d - pad] };
    let split = (0..out.len()).find(|&d| padded(d) != out[d])?;
    let lanes = (0..split).all(|d| padded(d) == out[d])
        && (split..out.len()).all(|d| padded(d) == 1)
        && numel > 0
        && out.iter().product::<usize>() > 0;
    lanes.then_some(Fit::Lanes)
}

impl<'a, T: Copy> Lineup<'a, T> {
    /// The row-major elements `s` of an operand that fits as `fit`.
    pub fn new(fit: Fit, s: &'a [T]) -> Self {
        match fit {
            Fit::Whole => Lineup::Whole(s),
            Fit::One => Lineup::One(s[0]),
            Fit::Rows => Lineup::Rows(s),
            Fit::Lanes => Lineup::Lanes(s),
        }
    }
}

impl<T: Copy> Lineup<'_, T> {
    /// Whether this operand lines up with a result of `n` elements.
    fn covers(&self, n: usize) -> bool {
        match self {
            Lineup::Whole(x) => x.len() == n,
            Lineup::One(_) => true,
            Lineup::Rows(y) | Lineup::Lanes(y) => !y.is_empty() && n % y.len() == 0,
        }
    }
}

impl<'a, T: Copy> Lineup<'a, T> {
    /// The elements of a result of `n` elements in which this operand's pattern repeats: a
    /// part of the result that starts and ends at multiples of it lines up as a whole.
    pub fn unit(&self, n: usize) -> usize {
        match self {
            Lineup::Whole(_) | Lineup::One(_) => 1,
            Lineup::Rows(y) => y.len(),
            Lineup::Lanes(x) => n / x.len(),
        }
    }

    /// This operand for the `len` elements of the result (of `n`) from `start`, both
    /// multiples of [`Lineup::unit`].
    pub fn part(&self, start: usize, len: usize, n: usize) -> Self {
        match *self {
            Lineup::Whole(x) => Lineup::Whole(&x[start..start + len]),
            Lineup::Lanes(x) => {
                let run = n / x.len();
                Lineup::Lanes(&x[start / run..(start + len) / run])
            }
            whole_or_repeated => whole_or_repeated,
        }
    }
}

/// Whether [`zip_into`] handles these operands over a result of `n` elements: one of them
/// whole, the other anything lined up.
pub fn pairs<T: Copy>(a: &Lineup<'_, T>, b: &Lineup<'_, T>, n: usize) -> bool {
    let handled = matches!(
        (a, b),
        (Lineup::Whole(_), _)
            | (
                Lineup::One(_) | Lineup::Rows(_) | Lineup::Lanes(_),
                Lineup::Whole(_)
            )
    );
    handled && a.covers(n) && b.covers(n)
}

/// `out[i] = f(a[i], b[i])` over operands lined up with `out` ([`pairs`] checked).
pub fn zip_into<T: Copy, U>(
    a: Lineup<'_, T>,
    b: Lineup<'_, T>,
    out: &mut [MaybeUninit<U>],
    f: &impl Fn(T, T) -> U,
) {
    match (a, b) {
        (Lineup::Whole(x), Lineup::Whole(y)) => out
            .iter_mut()
            .zip(x.iter().zip(y))
            .for_each(|(o, (&p, &q))| _ = o.write(f(p, q))),
        (Lineup::Whole(x), Lineup::One(q)) => out
            .iter_mut()
            .zip(x)
            .for_each(|(o, &p)| _ = o.write(f(p, q))),
        (Lineup::One(p), Lineup::Whole(y)) => out
            .iter_mut()
            .zip(y)
            .for_each(|(o, &q)| _ = o.write(f(p, q))),
        (Lineup::Whole(x), Lineup::Rows(y)) => out
            .chunks_exact_mut(y.len())
            .zip(x.chunks_exact(y.len()))
            .for_each(|(o, row)| {
                o.iter_mut()
                    .zip(row.iter().zip(y))
                    .for_each(|(o, (&p, &q))| _ = o.write(f(p, q)))
            }),
        (Lineup::Rows(x), Lineup::Whole(y)) => out
            .chunks_exact_mut(x.len())
            .zip(y.chunks_exact(x.len()))
            .for_each(|(o, row)| {
                o.iter_mut()
                    .zip(x.iter().zip(row))
                    .for_each(|(o, (&p, &q))| _ = o.write(f(p, q)))
            }),
        (Lineup::Whole(x), Lineup::Lanes(y)) => {
            let run = out.len() / y.len();
            out.chunks_exact_mut(run)
                .zip(x.chunks_exact(run).zip(y))
                .for_each(|(o, (run, &q))| {
                    o.iter_mut()
                        .zip(run)
                        .for_each(|(o, &p)| _ = o.write(f(p, q)))
                })
        }
        (Lineup::Lanes(x), Lineup::Whole(y)) => {
            let run = out.len() / x.len();
            out.chunks_exact_mut(run)
                .zip(x.iter().zip(y.chunks_exact(run)))
                .for_each(|(o, (&p, run))| {
                    o.iter_mut()
                        .zip(run)
                        .for_each(|(o, &q)| _ = o.write(f(p, q)))
                })
        }
        _ => unreachable!("pairings are checked by `pairs`"),
    }
}

/// [`zip_into`] over an initialized `out`, whose elements it overwrites.
pub fn zip_over<T: Copy>(
    a: Lineup<'_, T>,
    b: Lineup<'_, T>,
    out: &mut [T],
    f: &impl Fn(T, T) -> T,
) {
    // SAFETY: `MaybeUninit<T>` has `T`'s layout, and `zip_into` only writes initialized
    // values, so `out` stays initialized.
    let out = unsafe { &mut *(out as *mut [T] as *mut [MaybeUninit<T>]) };
    zip_into(a, b, out, f)
}
