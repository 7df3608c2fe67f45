"""Functions wrapped by functools.lru_cache (or cache), called in traced code: the wrapped
function is simulated inline and the cache ignored, as TorchDynamo does, where that cannot
change the answer: arguments and result are values (numbers, sizes, strings, tuples), the
function reads no global or class data that may have changed since the cache was filled,
and the call changes nothing. Otherwise the call runs as written: a cache filled before a
global changed keeps its stale answer, a print in the function shows once per key. The
replacement calls the wrapper again where the program did, its result dropped, so that the
caches are left as the program leaves them. A tensor the function returns is one object
the cache shares, which the program may update in place: the replacement looks it up
before the graph, which takes it as an input (one graph); the traced call updating it in
place runs as written. For each
case: the results over six calls and each cache's hits, misses and size afterwards, eager
and traced, are equal, and explain() counts the expected graphs
and breaks. Prints one line per case; `FAIL` marks a failed one."""
import functools
import math
import sys

import symtrace as st
from case_report import eager_then_traced

failures = []
CALLS = 6


@functools.lru_cache(maxsize=None)
def head_dims(width, heads):
    return width // heads, heads


@functools.cache
def padding(kernel, stride=1, dilation=1):
    return ((stride - 1) + dilation * (kernel - 1)) // 2


@functools.lru_cache(maxsize=8)
def window(kernel, name):
    # One cached function calling another, a math function and a str method.
    pad = padding(kernel, dilation=1)
    return pad + len(name.upper()), math.sqrt(kernel)


def split_heads(x):
    hd, h = head_dims(x.shape[-1], 2)
    return x.reshape(x.shape[0], h, hd).softmax(-1)


def windowed(x, k):
    pad, scale = window(k, "conv")
    return x * pad + scale


SCALE = 2.0


@functools.lru_cache
def scaled(n):
    return n * SCALE


def stale_global(x, n):
    return x * scaled(n)


class Config:
    factor = 3


@functools.lru_cache
def configured(n):
    return n * Config.factor


def stale_class_data(x, n):
    return x + configured(n)


@functools.lru_cache
def announced(n):
    print("computing", n)
    return n + 1


def prints_once_per_key(x, n):
    return x * announced(n)


@functools.lru_cache
def from_default(n, table=[1, 2, 3]):
    return table[n % 3] * n


def mutable_default(x, n):
    return x * from_default(n)


@functools.lru_cache
def from_argv(n):
    return len(sys.argv) + n


def native_module_list(x, n):
    return x * from_argv(n)


@functools.lru_cache
def causal(n):
    return st.ones(n, n).tril()


def shared_tensor(x):
    return x @ causal(x.shape[0])


@functools.lru_cache(maxsize=2)
def positions(n, d):
    return st.arange(n * d).reshape(n, d) / (n * d)


def two_lookups_of_one_key(x):
    # Each call is a lookup (hits count them); the two results are one object.
    n, d = x.shape
    return x + positions(n, d) * 2 - positions(n, d) + causal(n).sum()


@functools.lru_cache(maxsize=4)
def block_mask(size):
    return st.tril(st.ones(size, size)).view(1, size, size)


def masked_attention(x):
    # nanoGPT's causal attention, its mask made once and sliced per length: the batch size
    # changes every call (a dynamic graph, the mask an input of the recorded size).
    B, T, C = x.shape
    att = (x @ x.transpose(1, 2)) * C ** -0.5
    att = att.masked_fill(block_mask(8)[:, :T, :T] == 0, float("-inf"))
    return att.softmax(-1) @ x


class Positions:
    @staticmethod
    @functools.lru_cache(maxsize=4)
    def table(n, d):
        # Sinusoidal positions, found through the class (the wrapper known, not read).
        pos = st.arange(n).float().unsqueeze(1)
        div = st.exp(st.arange(0, d, 2).float() * (-math.log(10000.0) / d))
        pe = st.zeros(n, d)
        pe[:, 0::2] = st.sin(pos * div)
        pe[:, 1::2] = st.cos(pos * div)
        return pe

    def __call__(self, x):
        return x + self.table(x.shape[1], x.shape[2])


def same_cached_tensor(x):
    # Two lookups of one key give one object: `is` breaks there (known only at run time).
    m = causal(x.shape[0])
    return x @ m, m is causal(x.shape[0])


def updates_cached_tensor(x):
    m = causal(x.shape[0])
    m.mul_(1.5)
    return x @ m


class Mixer:
    """Methods cached by lru_cache, keyed by the instance: one that never reads `self`, one
    that reads an attribute the program changes after the cache was filled (its answer
    stale from then on, as the program sees it)."""
    def __init__(self):
        self.scale = 2.0

    @functools.lru_cache(maxsize=None)
    def weights(self, n):
        return tuple(1.0 / (i + 1) for i in range(n))

    @functools.lru_cache(maxsize=None)
    def scaled_weights(self, n):
        return tuple(self.scale / (i + 1) for i in range(n))


MIXER = Mixer()


def mixed(x, n):
    w = MIXER.weights(n)
    return x * w[0] + x.sum() * w[-1]


def mixed_stale(x, n):
    w = MIXER.scaled_weights(n)
    return x * w[-1]


CACHED = [head_dims, padding, window, scaled, configured, announced, from_default, from_argv, causal,
          positions, block_mask, Positions.table, Mixer.weights, Mixer.scaled_weights]


def reset():
    global SCALE
    SCALE = 2.0
    Config.factor = 3
    from_default.__wrapped__.__defaults__[0][1] = 2
    while sys.argv[-1] == "--more":
        sys.argv.pop()
    MIXER.scale = 2.0
    for f in CACHED:
        f.cache_clear()


def state():
    return [tuple(f.cache_info()) for f in CACHED]


def change_globals(i):
    # After the caches were filled: a cached answer is stale from here on.
    global SCALE
    if i == 3:
        SCALE = 5.0
        Config.factor = 7
        from_default.__wrapped__.__defaults__[0][1] = 10
        sys.argv.append("--more")
        # The program updates a tensor the cache holds: later calls read it so.
        causal(3).mul_(2)
        MIXER.scale = 4.0


def check(name, fn, make_args, most, graphs, breaks):
    eager_then_traced(name, fn, make_args, most, graphs, breaks, calls=CALLS, reset=reset,
                      state=state, failures=failures, between=change_globals)


xs = [st.randn(3, 8) for _ in range(CALLS + 1)]
check("a helper of sizes (head dims) cached by lru_cache", split_heads, lambda i: (xs[i],), 1, 1, 0)
check("functools.cache with keywords, one cached function calling another", windowed,
      lambda i: (xs[i], 3 + 2 * (i % 2)), 2, 1, 0)
check("a cached function reading a global changed since (runs as written)", stale_global,
      lambda i: (xs[i], 1 + i % 2), 3, 1, 1)
check("a cached function reading a class's data changed since (runs as written)",
      stale_class_data, lambda i: (xs[i], 1 + i % 2), 3, 1, 1)
check("a cached function reading a default list changed since (runs as written)",
      mutable_default, lambda i: (xs[i], 1 + i % 2), 3, 1, 1)
check("a cached function reading sys.argv changed since (runs as written)",
      native_module_list, lambda i: (xs[i], 1 + i % 2), 3, 1, 1)
check("a cached function that prints (runs as written)", prints_once_per_key,
      lambda i: (xs[i], i % 2), 3, 1, 1)
# Translations counted below include the cached functions' own frames, translated when a
# miss (or change_globals) calls them as written.
check("a cached function returning a tensor: looked up first, a graph input", shared_tensor,
      lambda i: (st.ones(3, 3) * i,), 2, 1, 0)
check("two lookups of one key and one of another, each counted", two_lookups_of_one_key,
      lambda i: (st.ones(3, 2 + i % 2) * i,), 5, 1, 0)
check("a cached mask sliced by length, the batch size changing", masked_attention,
      lambda i: (st.ones(1 + i, 5, 4) * st.arange(20.0).reshape(5, 4).sin(),), 3, 1, 0)
check("a cached static method's table of positions, looked up through the class", Positions(),
      lambda i: (st.ones(2, 3 + i % 2, 4),), 4, 1, 0)
check("`is` between two lookups of a cached tensor breaks there", same_cached_tensor,
      lambda i: (st.ones(3, 3) * i,), 3, 1, 1)
# The break is in Tensor.mul_ (written in Python), whose frame has a graph of its own.
check("updating a cached tensor in place breaks there", updates_cached_tensor,
      lambda i: (st.ones(3, 3) * i,), 4, 2, 1)
check("a method cached by lru_cache that never reads self", mixed,
      lambda i: (xs[i], 2 + i % 2), 2, 1, 0)
check("a cached method reading self's attribute changed since (runs as written)", mixed_stale,
      lambda i: (xs[i], 2 + i % 2), 3, 0, 1)
print("ALL OK" if not failures else f"FAILED {failures}", len(failures))
