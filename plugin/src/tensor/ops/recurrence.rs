//! `recurrence`: every step of one layer and direction of a recurrent layer (`nn.RNN`,
//! `nn.GRU`, `nn.LSTM`) over a time-major sequence, as one op. A Python loop over the steps
//! is unrolled where it is traced, one graph per sequence length; one op is one graph for
//! every length, as torch's own `_VF.lstm` is one op.
//!
//! Inputs: the input's projection for all steps `xs` (T, B, gates·H, its bias added), the
//! first state `h0` (B, H), the first cell `c0` (B, H; read by an LSTM only), the recurrent
//! weight `w_hh` (gates·H, H) and, optionally, its bias `b_hh`. Attributes: `mode` (0 `tanh`,
//! 1 `relu`, 2 GRU, 3 LSTM) and `reverse` (the steps from the last). The result holds each
//! step's state (T, B, H); an LSTM's holds each step's cell after it (T, B, 2H).
//!
//! Each step is computed as symtrace's Python step functions compute it, op by op, each
//! result rounded to the input's type (the same bits): the recurrent product as the op
//! `linear` computes it, the gates by torch's formulas (an LSTM's i, f, g, o; a GRU's r, z, n
//! with `b_hh` inside `r * (...)`).

use ndarray::{ArrayD, IxDyn};

use crate::tensor::data::{FloatData, TensorData};
use crate::tensor::error::{TResult, TensorError};
use crate::tensor::ops::linalg::{SMALL_PRODUCT, add_bias, linear_into, small_product_into};
use crate::tensor::ops::product::Product;
use crate::tensor::ops::transpose::transpose_into;
use crate::tensor::ops::unary::Unary;
use crate::tensor::ops::vector_math::wide_fn;
use crate::tensor::registry::{Arity, Attrs, Meta, OpDef};

/// Which recurrence.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Tanh,
    Relu,
    Gru,
    Lstm,
}

impl Mode {
    fn of(attrs: &Attrs) -> TResult<Mode> {
        Ok(match attrs.int("mode")? {
            0 => Mode::Tanh,
            1 => Mode::Relu,
            2 => Mode::Gru,
            3 => Mode::Lstm,
            other => {
                return Err(TensorError::value(format!(
                    "recurrence: unknown mode {other:?}"
                )));
            }
        })
    }

    fn gates(self) -> usize {
        match self {
            Mode::Tanh | Mode::Relu => 1,
            Mode::Gru => 3,
            Mode::Lstm => 4,
        }
    }
}

pub fn ops() -> Vec<OpDef> {
    vec![OpDef::new(
        "recurrence",
        Arity::AtLeast(4),
        |m: &[Meta], a: &Attrs| infer(m, Mode::of(a)?),
        |t: &[&TensorData], a: &Attrs| run(t, Mode::of(a)?, a.flag("reverse")),
    )]
}

fn infer(m: &[Meta], mode: Mode) -> TResult<Meta> {
    let bad = |what: &str| Err(TensorError::runtime(format!("recurrence: {what}")));
    if m.len() > 5 {
        return bad("at most five inputs");
    }
    let (xs, h0, c0, w) = (&m[0].shape, &m[1].shape, &m[2].shape, &m[3].shape);
    let dtype = m[0].dtype;
    if !dtype.is_float() || m.iter().any(|x| x.dtype != dtype) {
        return bad("inputs of one float type");
    }
    let [steps, batch, width] = xs[..] else {
        return bad("a (steps, batch, gates * hidden) input");
    };
    let [b, hidden] = h0[..] else {
        return bad("a (batch, hidden) state");
    };
    let gates = mode.gates() * hidden;
    if b != batch || width != gates || c0[..] != h0[..] || w[..] != [gates, hidden] {
        return bad("sizes that do not fit one another");
    }
    if m.get(4).is_some_and(|bias| bias.shape[..] != [gates]) {
        return bad("a bias of gates * hidden elements");
    }
    let out = if mode == Mode::Lstm {
        2 * hidden
    } else {
        hidden
    };
    Ok(Meta {
        shape: vec![steps, batch, out],
        dtype,
    })
}

/// The element types a recurrence computes in, each op rounded as its kernel rounds it.
trait Element: Product + Default + FloatData {
    fn unary(op: Unary, x: Self) -> Self;
}

impl Element for f32 {
    fn unary(op: Unary, x: f32) -> f32 {
        op.float32(x)
    }
}

impl Element for f64 {
    fn unary(op: Unary, x: f64) -> f64 {
        op.float(x)
    }
}

fn run(t: &[&TensorData], mode: Mode, reverse: bool) -> TResult<TensorData> {
    match t[0] {
        TensorData::Float32(_) => steps::<f32>(t, mode, reverse),
        _ => steps::<f64>(t, mode, reverse),
    }
}

fn steps<E: Element>(t: &[&TensorData], mode: Mode, reverse: bool) -> TResult<TensorData> {
    let wrong = || TensorError::runtime("recurrence: inputs of one float type");
    let row_major = |i: usize| -> TResult<Vec<E>> {
        let a = E::array(t[i]).ok_or_else(wrong)?;
        Ok(a.as_standard_layout().iter().copied().collect())
    };
    let xs = row_major(0)?;
    let (steps, batch, width) = (t[0].shape()[0], t[0].shape()[1], t[0].shape()[2]);
    let hidden = width / mode.gates();
    let (mut h, mut c) = (row_major(1)?, row_major(2)?);
    let recurrent = Recurrent::new(
        row_major(3)?,
        t.get(4).map(|_| row_major(4)).transpose()?,
        hidden,
    );
    let out_width = if mode == Mode::Lstm {
        2 * hidden
    } else {
        hidden
    };
    let mut out = vec![E::default(); steps * batch * out_width];
    let mut g = vec![E::zero(); batch * width];
    for k in 0..steps {
        let step = if reverse { steps - 1 - k } else { k };
        recurrent.product(&h, batch, &mut g);
        let rows = Rows {
            x: &xs[step * batch * width..][..batch * width],
            g: &g,
            hidden,
        };
        let out = &mut out[step * batch * out_width..][..batch * out_width];
        match mode {
            Mode::Tanh | Mode::Relu => simple_cells(rows, &mut h, out, mode == Mode::Tanh),
            Mode::Gru => gru_cells(rows, &mut h, out),
            Mode::Lstm => lstm_cells(rows, &mut h, &mut c, out),
        }
    }
    Ok(E::wrap(
        ArrayD::from_shape_vec(IxDyn(&[steps, batch, out_width]), out).expect("sized"),
    ))
}

/// The recurrent product `h @ w_hh.T + b_hh`, as the op `linear` computes it (`linear_into`,
/// `add_bias`), with the transpose a small product reads made once for all steps.
struct Recurrent<E> {
    w: Vec<E>,
    w_t: Vec<E>,
    bias: Option<Vec<E>>,
    hidden: usize,
}

impl<E: Element> Recurrent<E> {
    fn new(w: Vec<E>, bias: Option<Vec<E>>, hidden: usize) -> Self {
        let gates = w.len() / hidden.max(1);
        let mut w_t = vec![E::zero(); w.len()];
        transpose_into(&w, gates, hidden, &mut w_t);
        Self {
            w,
            w_t,
            bias,
            hidden,
        }
    }

    fn product(&self, h: &[E], rows: usize, out: &mut [E]) {
        let (k, n) = (self.hidden, self.w.len() / self.hidden.max(1));
        out.fill(E::zero());
        if rows * k * n <= SMALL_PRODUCT {
            small_product_into(h, &self.w_t, k, n, out);
        } else {
            linear_into(h, &self.w, (rows, k, n), out, &mut Vec::new());
        }
        if let Some(b) = &self.bias {
            add_bias(out, b);
        }
    }
}

/// One step's rows: the input's projection `x` and the recurrent product `g` (batch rows of
/// gates · `hidden`).
struct Rows<'a, E> {
    x: &'a [E],
    g: &'a [E],
    hidden: usize,
}

// Each step's cells in one vectorized pass (`wide_fn!`): the sigmoids and tanhs take fused
// multiply-adds, library calls in code not compiled for FMA.
wide_fn! {
    /// A plain recurrence's step: `tanh(x + g)` (or `relu`).
    fn simple_cells<E: Element>(rows: Rows<'_, E>, h: &mut [E], out: &mut [E], tanh: bool) {
        let op = if tanh { Unary::Tanh } else { Unary::Relu };
        for ((h, o), (x, g)) in h.iter_mut().zip(out.iter_mut()).zip(rows.x.iter().zip(rows.g)) {
            *h = E::unary(op, *x + *g);
            *o = *h;
        }
    }
}

wide_fn! {
    /// A GRU's step: `r = σ(x_r + g_r)`, `z = σ(x_z + g_z)`, `n = tanh(x_n + r * g_n)`,
    /// `h = (1 - z) * n + z * h`.
    fn gru_cells<E: Element>(rows: Rows<'_, E>, h: &mut [E], out: &mut [E]) {
        let n = rows.hidden;
        for (b, (h, o)) in h.chunks_mut(n).zip(out.chunks_mut(n)).enumerate() {
            let (x, g) = (&rows.x[b * 3 * n..][..3 * n], &rows.g[b * 3 * n..][..3 * n]);
            for j in 0..n {
                let r = E::unary(Unary::Sigmoid, x[j] + g[j]);
                let z = E::unary(Unary::Sigmoid, x[n + j] + g[n + j]);
                let c = E::unary(Unary::Tanh, x[2 * n + j] + r * g[2 * n + j]);
                h[j] = (E::one() - z) * c + z * h[j];
                o[j] = h[j];
            }
        }
    }
}

wide_fn! {
    /// An LSTM's step: gates i, f, g, o; `c = σ(f) * c + σ(i) * tanh(g)`,
    /// `h = σ(o) * tanh(c)`; each row of `out` holds `h`, then `c`.
    fn lstm_cells<E: Element>(rows: Rows<'_, E>, h: &mut [E], c: &mut [E], out: &mut [E]) {
        let n = rows.hidden;
        let states = h.chunks_mut(n).zip(c.chunks_mut(n));
        for (b, ((h, c), o)) in states.zip(out.chunks_mut(2 * n)).enumerate() {
            let (x, g) = (&rows.x[b * 4 * n..][..4 * n], &rows.g[b * 4 * n..][..4 * n]);
            for j in 0..n {
                let i = E::unary(Unary::Sigmoid, x[j] + g[j]);
                let f = E::unary(Unary::Sigmoid, x[n + j] + g[n + j]);
                let gg = E::unary(Unary::Tanh, x[2 * n + j] + g[2 * n + j]);
                let og = E::unary(Unary::Sigmoid, x[3 * n + j] + g[3 * n + j]);
                c[j] = f * c[j] + i * gg;
                h[j] = og * E::unary(Unary::Tanh, c[j]);
                o[j] = h[j];
                o[n + j] = c[j];
            }
        }
    }
}
