"""Chains of elementwise ops at sizes that run op by op: a transformer's feed-forward block
(`linear`, exact `gelu`, `linear`), a normalization written out by hand, a chain of costly
ops, and a residual sum read again after its group (a group with two results). Eager runs
each op over the whole tensor into a fresh array; a traced graph fuses each chain of ops that read the
previous op's result once into one pass over one buffer (plugin/src/graph/fuse.rs).

    rustpython benches/fusion.py DTYPE                       (eager)
    rustpython --plugin symtrace benches/fusion.py DTYPE     (traced)

Prints `case seconds=S` lines, the best of several timed runs per call."""
import math
import sys
import time

import symtrace as st
import symtrace.nn.functional as F

DTYPE = sys.argv[1]
st.set_default_dtype(getattr(st, DTYPE))


def feed_forward(x, w1, b1, w2, b2):
    return F.gelu(x @ w1 + b1) @ w2 + b2


def normalize(x, m, s, g, b):
    # Cheap ops, bound by memory: a chain of four after the subtraction.
    return st.relu((x - m) / s * g + b)


def squash(x, m, s):
    # Costly ops (tanh, sigmoid), bound by arithmetic: a chain of seven after the subtraction.
    return st.sigmoid(st.tanh((x - m) / s) * 0.5 + 0.25) * 2.0 - 1.0


def residual(x, y, g, b):
    # A residual stream: the sum is read again after the group (an output of it, as the
    # residual a transformer block passes on), so the group writes two results.
    h = x + y
    return h, h * g + b


def per_call(fn, args, seconds=0.3, repeats=7):
    for _ in range(3):
        fn(*args)
    best = None
    for _ in range(repeats):
        n, t0 = 0, time.perf_counter()
        while True:
            fn(*args)
            n += 1
            t = time.perf_counter() - t0
            if t > seconds and n >= 3:
                break
        best = t / n if best is None else min(best, t / n)
    return best


st.manual_seed(0)
d, h = 256, 1024
x = st.randn(256, d)
w1, b1 = st.randn(d, h) * (1.0 / math.sqrt(d)), st.randn(h) * 0.1
w2, b2 = st.randn(h, d) * (1.0 / math.sqrt(h)), st.randn(d) * 0.1
print(f"feed_forward seconds={per_call(feed_forward, (x, w1, b1, w2, b2)):.9f}", flush=True)
y = st.randn(256, 1024)
m, s = st.randn(256, 1) * 0.1, st.randn(1024).abs() + 0.5
g, b = st.randn(1024), st.randn(1024)
print(f"normalize seconds={per_call(normalize, (y, m, s, g, b)):.9f}", flush=True)
print(f"squash seconds={per_call(squash, (y, m, s)):.9f}", flush=True)
print(f"residual seconds={per_call(residual, (y, y * 0.5, g, b)):.9f}", flush=True)
