"""Numbers that cause no recompile: a float that changes per call is a graph input (in arithmetic, as
the scalar of `where`, `clamp` and `masked_fill`, the fill of `full`, `full_like`, `new_full`, a value stored into a tensor); a counter
read, incremented and stored back (global, attribute, dict item) is computed again by the
replacement (through `/` and `**` too), and is a graph input where it scales a tensor, and a branch on arithmetic of it
(`step % every == 0`) guards the condition, as `min`/`max` of it does, and `math.cos`, `exp`, `log`... of it are
called again by the replacement; a float computed from it compared with a constant or looked up in a list of
numbers guards the outcome; an item of a list or tuple at a counter (a schedule's `sigmas[step]`, a ring
of buffers' `bufs[step % n]`) is read per call; a loop split by a break whose body adds its counter recompiles once, not per
iteration. Every result equals eager. Prints `translations <name> <n>` per case."""
import math

import symtrace as st

x = st.tensor([1.0, -2.0, 3.0])
x32 = st.tensor([1.0, -2.0, 3.0], dtype=st.float32)


def count(name, run):
    before = st.stats()["translations"]
    run()
    print("translations", name, st.stats()["translations"] - before)


def sgd(w, g, lr, wd):
    return w - lr * (g + wd * w)


def temperature(x, t):
    return st.softmax(x / t, -1)


def weak(x, s):
    # float32 stays float32 next to a Python number, whatever the number.
    return x * s + s


def bounded(x, t):
    # The float where a 0-d tensor of the tensor's dtype takes its place exactly.
    return st.where(x > 0, x, t), x.clamp(-t, t), x.masked_fill(x < -1, t * 2)


def filled(x, t):
    # Tensors filled with the float (made with the fill 1, times the float as an input), and
    # `lerp` by it, whose side `abs(weight) < 0.5` picks is guarded, not the weight.
    return st.full_like(x, t), x.new_full((2,), -t), st.full((3,), t, dtype=st.float32), \
        st.ones_like(x) * t, x.lerp(x * 2.0, t / 4)


def floats():
    c1, c2, c3, c4 = st.compile(sgd), st.compile(temperature), st.compile(weak), st.compile(bounded)
    c5 = st.compile(filled)
    for i in range(100):
        lr, wd, t = 0.1 / (i + 1), 1e-3 * i, 0.5 + i / 37
        assert c1(x, -x, lr, wd).tolist() == sgd(x, -x, lr, wd).tolist()
        assert c2(x, t).tolist() == temperature(x, t).tolist()
        a, b = c3(x32, t), weak(x32, t)
        assert a.dtype == b.dtype and a.tolist() == b.tolist()
        for xs in (x, x32):
            a, b = c4(xs, t), bounded(xs, t)
            assert [(v.dtype, v.tolist()) for v in a] == [(v.dtype, v.tolist()) for v in b]
            a, b = c5(xs, t), filled(xs, t)
            assert [(v.dtype, v.tolist()) for v in a] == [(v.dtype, v.tolist()) for v in b]


def clipped(x, lr, step):
    # A branch on a float guards its condition, not the float.
    if lr > 0.05:
        lr = 0.05
    if step == 0:
        return x * 0.0
    return x - lr * x


def branches():
    c = st.compile(clipped)
    for i in range(100):
        lr = 0.1 / (i + 1)
        assert c(x, lr, i).tolist() == clipped(x, lr, i).tolist()


calls = 0
stats = {"n": 0}


class Model:
    def __init__(self):
        self.steps = 0
        self.w = st.tensor([0.5, -1.0, 2.0])

    def forward(self, x):
        global calls
        self.steps += 1
        stats["n"] += 1
        try:
            return (x * self.w).relu() + x
        finally:
            calls += 1


def counters():
    m = Model()
    f = st.compile(m.forward)
    for _ in range(100):
        y = f(x)
    assert y.tolist() == ((x * m.w).relu() + x).tolist()
    assert (calls, m.steps, stats["n"]) == (100, 100, 100), (calls, m.steps, stats)


def returned_counter(x):
    global calls
    calls += 1
    return x * 2.0, calls


def counter_returned():
    f = st.compile(returned_counter)
    for i in range(100):
        y, n = f(x)
        assert n == calls and y.tolist() == (x * 2.0).tolist()


class Schedule:
    """A step counter that scales the output: `x * self.t` after `self.t += 1`."""

    def __init__(self):
        self.t = 0
        self.lr = 0.1
        self.stats = {"calls": 0, "seen": 0}

    def step(self, x):
        self.t += 1
        self.stats["calls"] += 1
        self.stats["seen"] = self.stats["seen"] + 3
        return x * self.t + x * (self.lr * self.t) - self.stats["calls"], self.t


def counter_scales():
    s, eager = Schedule(), Schedule()
    f = st.compile(s.step)
    for _ in range(100):
        (a, n), (b, m) = f(x32), eager.step(x32)
        assert n == m and a.dtype == b.dtype and a.tolist() == b.tolist(), (a, b)
    assert (s.t, s.stats) == (eager.t, eager.stats), (s.t, s.stats)


class Counted:
    def __init__(self):
        self.calls = 0

    def step(self, x):
        self.calls += 1
        return x * 2.0 + self.calls, self.calls


def counter_and_length():
    # A counter and a sequence length that change together on the second call: both
    # become dynamic in one recompile (every guard that failed counts, not the first).
    s, eager = Counted(), Counted()
    f = st.compile(s.step)
    for n in range(2, 12):
        xs = st.arange(float(n))
        (a, k), (b, m) = f(xs), eager.step(xs)
        assert k == m and a.tolist() == b.tolist(), (a, b)


def unrolled(x, o):
    # A counter incremented in an unrolled loop: past a bounded depth, a constant.
    for _ in range(300):
        o.count += 1
    return x * 2.0


def long_counter():
    class O:
        pass

    o = O()
    o.count = 0
    f = st.compile(unrolled)
    for _ in range(3):
        assert f(x, o).tolist() == (x * 2.0).tolist()
    assert o.count == 900, o.count


def loop(x, n):
    for i in range(n):
        x = x * 0.5 + i
        x = x - x.mean() * 0.1
        print("iteration", i)
    return x


def split_loop():
    assert st.compile(loop)(x, 30).tolist() == loop(x, 30).tolist()


class Periodic:
    """Branches on a counter's arithmetic (`step % every`, `step > warmup`, `step // 2`):
    each condition is guarded on the expression, so over 100 calls there is one translation
    per combination of outcomes, not one per step."""

    def __init__(self):
        self.step = 0
        self.every = 3
        self.warmup = 4

    def forward(self, x):
        self.step += 1
        y = x * 1.5
        if self.step % self.every == 0:
            y = y * 2.0
        if self.step > self.warmup:
            y = y + 1.0
        if 10 <= self.step // 2:
            y = y - 0.5
        return y * (self.step // 2)


def schedule():
    p, eager = Periodic(), Periodic()
    f = st.compile(p.forward)
    before = st.stats()["fallbacks"]
    for _ in range(100):
        a, b = f(x), eager.forward(x)
        assert a.tolist() == b.tolist(), (a, b)
    assert p.step == eager.step == 100
    print("fallbacks schedule", st.stats()["fallbacks"] - before)


def window(x, n, pos, w):
    # An int that changes per call, in a slice of a tensor (negated, as `-n`; beside an int
    # that does not change, `pos + w`), a narrow and the start of an item store: one dynamic
    # graph after the first recompile.
    cache = x * 0.0
    cache[:, pos:pos + 2] = x[:, :2]
    return x[:, -n:].sum(-1), x.narrow(1, n, 2), cache, x[:, pos:pos + w]


def windows():
    f = st.compile(window)
    xs = st.arange(24.0).reshape(2, 12)
    for n in range(1, 9):
        a, b = f(xs, n, 9 - n, 3), window(xs, n, 9 - n, 3)
        assert all(p.tolist() == q.tolist() for p, q in zip(a, b)), (a, b)


def scaled_by_methods(x, t):
    # The methods that are an operator take a float that changes per call as it does, and
    # so do their function forms (`st.add` is `Tensor.add`).
    return x.mul(t).div(t + 1.0).add(t).sub(t * 2.0), x.multiply(t).true_divide(2.0), \
        st.add(x, t), st.sub(st.div(x, t), t), st.multiply(x, t)


def method_operators():
    f = st.compile(scaled_by_methods)
    for i in range(50):
        t = 0.1 * i + 0.05
        a, b = f(x, t), scaled_by_methods(x, t)
        assert all(p.tolist() == q.tolist() for p, q in zip(a, b)), (t, a, b)


class Decoder:
    # A KV cache written at a position and masked up to it: the counter is a slice store's
    # bound and an operand of a comparison with an int tensor in one graph.
    def __init__(self):
        self.k, self.pos = st.zeros(1, 16, 2), 0

    def __call__(self, new):
        T = new.shape[1]
        self.k[:, self.pos:self.pos + T] = new
        self.pos += T
        mask = st.arange(16) < self.pos
        return (self.k * mask[None, :, None]).sum(1)


def cache_positions():
    traced, eager = Decoder(), Decoder()
    f = st.compile(traced)
    for i in range(10):
        new = st.full((1, 1, 2), float(i))
        assert f(new).tolist() == eager(new).tolist()
        assert traced.k.tolist() == eager.k.tolist()


class Decay:
    """A learning-rate schedule and Adam's bias correction: true division and powers of a
    counter, computed again by the replacement."""

    def __init__(self, warmup):
        self.step = 0
        self.warmup = warmup
        self.betas = (0.9, 0.999)

    def __call__(self, x):
        self.step += 1
        b1, b2 = self.betas
        ramp = self.step / self.warmup
        corrected = x / (1 - b1 ** self.step) + x / (1 - b2 ** self.step) ** 0.5
        return x * ramp + corrected * 0.5 ** (self.step / 4), self.step


class Halving:
    def __init__(self):
        self.d = 4

    def __call__(self, x):
        self.d -= 1
        return x * (1 / self.d)


def powers_and_quotients():
    s, eager = Decay(10), Decay(10)
    f = st.compile(s)
    for _ in range(100):
        (a, n), (b, m) = f(x32), eager(x32)
        assert n == m and a.dtype == b.dtype and a.tolist() == b.tolist(), (a, b)
    # A divisor that reaches zero: the call raises ZeroDivisionError where the program
    # does, as written (the guard that computes `1 / d` fails instead of raising).
    h, eager = Halving(), Halving()
    f = st.compile(h)
    for _ in range(5):
        try:
            a = f(x).tolist()
        except ZeroDivisionError:
            a = "ZeroDivisionError"
        try:
            b = eager(x).tolist()
        except ZeroDivisionError:
            b = "ZeroDivisionError"
        assert a == b and h.d == eager.d, (a, b)


class Cosine:
    """A learning-rate schedule as training code writes it: a linear warm-up taken with
    `min` of `float(step)` (as schedules written for torch spell it), then a cosine decay
    with `math.cos` of the step, logged into a list (and rounded); and an EMA whose decay warms up with
    `min(0.999, (1 + step) / (10 + step))`. The functions are called again by the
    replacement on each call's step."""

    def __init__(self, total):
        self.step = 0
        self.total = total
        self.ema = 0.0
        self.history = []

    def __call__(self, x):
        self.step += 1
        warm = min(1.0, float(self.step) / float(max(1, 5)))
        lr = warm * 0.5 * (1 + math.cos(math.pi * self.step / self.total))
        decay = min(0.999, (1 + self.step) / (10 + self.step))
        self.ema = self.ema * decay + lr * (1 - decay)
        # kept as the list's items, made again per call (`round` to constant digits too)
        self.history.append((lr, round(lr, 4)))
        return x * lr + math.exp(-self.step / 50) + math.sqrt(self.step), [self.ema, decay]


class Shrinking:
    def __init__(self):
        self.v = 3.0

    def __call__(self, x):
        self.v -= 1.0
        return x * math.log(self.v)


def math_of_counters():
    s, eager = Cosine(100), Cosine(100)
    f = st.compile(s)
    for _ in range(100):
        (a, e), (b, g) = f(x32), eager(x32)
        assert e == g and a.dtype == b.dtype and a.tolist() == b.tolist(), (a, b)
    assert s.history == eager.history and len(s.history) == 100
    # `math.log` of a number that reaches zero: the call raises ValueError where the
    # program does, as written (the guard that computes it fails instead of raising).
    h, eager = Shrinking(), Shrinking()
    f = st.compile(h)
    for _ in range(4):
        try:
            a = f(x).tolist()
        except ValueError as exc:
            a = str(exc)
        try:
            b = eager(x).tolist()
        except ValueError as exc:
            b = str(exc)
        assert a == b and h.v == eager.v, (a, b)


class MultiStep:
    """torch's MultiStepLR and an EMA whose decay warms up: a float computed from the step
    compared with a constant, the step looked up in a list, and a float from the step given
    as a keyword (`alpha=`, compared with 1 inside `add`)."""

    def __init__(self):
        self.epoch, self.lr, self.milestones = 0, 0.1, [3, 6]

    def __call__(self, w, g):
        self.epoch += 1
        if self.epoch in self.milestones:
            self.lr *= 0.1
        # The truth of a number computed from the epoch: `k != 0` guarded.
        if not (self.epoch + 1) % 4:
            g = g * 0.5
        decay = 0.9 * (1.0 - math.exp(-self.epoch / 10.0))
        if self.epoch / 10.0 > 0.75:
            decay = 0.99
        # A tensor compared with a float from the epoch: the float a 0-d input of its dtype.
        kept = st.where(w > self.epoch / 10.0, w, 0.0)
        return (w - self.lr * g).add(g, alpha=1.0 - decay), kept


def conditions_of_counters():
    s, eager = MultiStep(), MultiStep()
    f = st.compile(s)
    for _ in range(10):
        (a, c), (b, d) = f(x, x * 0.5), eager(x, x * 0.5)
        assert a.tolist() == b.tolist() and c.tolist() == d.tolist() and s.lr == eager.lr, (a, b)


class Ring:
    """A ring buffer written at `pos % n`, read back up to `min(pos, n)`: the counter is an
    index of a tensor store and a slice bound."""

    def __init__(self, n=4):
        self.pos, self.n, self.buf = 0, n, st.zeros(n, 2)

    def push(self, v):
        self.buf[self.pos % self.n] = v
        self.pos += 1
        return self.buf[: min(self.pos, self.n)].mean(0)


def ring_buffer():
    r, eager = Ring(), Ring()
    f = st.compile(r.push)
    for i in range(10):
        v = st.full((2,), float(i))
        a, b = f(v), eager.push(v)
        assert a.tolist() == b.tolist() and r.buf.tolist() == eager.buf.tolist(), (i, a, b)


class Positions:
    # A decoding step's position against int tensors: a mask of the positions filled so far
    # (`arange(n) < pos`), positions shifted and scaled by it; exact in int64.
    def __init__(self):
        self.pos = 0

    def __call__(self, ids):
        self.pos += 1
        return st.arange(6) < self.pos, ids + self.pos, self.pos * ids - 1, ids == self.pos


def int_positions():
    traced, eager = Positions(), Positions()
    f = st.compile(traced)
    ids = st.tensor([0, 3, -2, 7])
    for _ in range(12):
        a, b = f(ids), eager(ids)
        assert [(v.dtype, v.tolist()) for v in a] == [(v.dtype, v.tolist()) for v in b]


class Sampler:
    # A sampler's schedule read at its step (a list of floats, the next one too), a ring of
    # buffers read at the step modulo its length, a tuple of ints read from the end.
    def __init__(self):
        self.step = 0
        self.sigmas = [10.0 * 0.8**k for k in range(12)]
        self.bufs = [st.full((3,), float(k)) for k in range(3)]
        self.ts = tuple(range(900, 0, -100))

    def __call__(self, x):
        s, s_next = self.sigmas[self.step], self.sigmas[self.step + 1]
        b = self.bufs[self.step % 3]
        t = self.ts[-1 - self.step]
        self.step += 1
        return x + (x / s) * (s_next - s) + b * (t / 1000.0)


def indexed_items():
    traced, eager = Sampler(), Sampler()
    f = st.compile(traced)
    for _ in range(9):
        assert f(x).tolist() == eager(x).tolist()
    # Past the end of the schedule: IndexError, as written.
    for sampler in (traced, eager):
        sampler.step = 11
    errors = []
    for call in (f, eager):
        try:
            call(x)
        except IndexError as e:
            errors.append(str(e))
    assert errors == ["list index out of range"] * 2, errors


class WeightAverage:
    """An EMA of weights as training code keeps one: the decay an attribute, warmed up by
    `min(self.decay, (1 + n) / (10 + n))` of a counter, applied in place over a dict of
    shadow tensors."""

    def __init__(self, params, decay=0.999):
        self.decay = decay
        self.n = 0
        self.shadow = {k: v.clone() for k, v in params.items()}

    def update(self, params):
        self.n += 1
        d = min(self.decay, (1 + self.n) / (10 + self.n))
        for k, v in params.items():
            self.shadow[k].mul_(d).add_(v * (1 - d))
        return self.shadow["w"].sum()


def weight_averages():
    start = {"w": st.ones(3, 3), "b": st.zeros(3)}
    traced, eager = WeightAverage(start), WeightAverage(start)
    f = st.compile(traced.update)
    for i in range(12):
        p = {"w": x32.reshape(3, 1) * i, "b": x32 * i}
        a, b = f(p), eager.update(p)
        assert a.tolist() == b.tolist(), (a, b)
    assert all(traced.shadow[k].tolist() == eager.shadow[k].tolist() for k in start)
    # The decay changed by the program: guarded, so the next call sees it.
    traced.decay = eager.decay = 0.5
    p = {"w": x32.reshape(3, 1), "b": x32}
    assert f(p).tolist() == eager.update(p).tolist()


class Stepper:
    """Tensors made of numbers that change per call: `st.tensor(self.step)`, of a float
    with a dtype, of a list (`st.tensor([h, w])`), `as_tensor`, `x.new_tensor(lr)`; one
    updated in place afterwards (a tensor of its own, not the number's input)."""

    def __init__(self):
        self.step = 0
        self.lr = 0.5
        self.dtype = st.float32

    def __call__(self, x):
        self.step += 1
        self.lr = self.lr * 0.9
        t = st.tensor(self.step)
        t += 1
        return (x + t, t, st.tensor(self.lr, dtype=self.dtype), st.tensor([self.step, 7]),
                st.tensor((self.lr, 2, self.step)), st.as_tensor(self.step * 3),
                x.new_tensor(self.lr), st.tensor(2 ** 40 + self.step))


def tensors_of_numbers():
    traced, eager = Stepper(), Stepper()
    f = st.compile(traced)
    for _ in range(12):
        a, b = f(x), eager(x)
        assert all(p.dtype == q.dtype and p.tolist() == q.tolist() for p, q in zip(a, b)), (a, b)


def scaled_by_lengths(x, lengths):
    # A caller's list of ints made a tensor (`st.tensor(lengths)`), as a mask's lengths are.
    return x[:2] * st.tensor(lengths), st.arange(4)[None, :] < st.tensor(lengths)[:, None]


def tensors_of_caller_lists():
    f = st.compile(scaled_by_lengths)
    for i in range(8):
        lengths = [i % 4, (i + 1) % 4]
        (a, m), (b, n) = f(x, lengths), scaled_by_lengths(x, lengths)
        assert a.tolist() == b.tolist() and m.tolist() == n.tolist(), (lengths, a, b)


class Noam:
    """The Transformer's schedule, `d ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)`:
    the `min` compares two numbers that both change with the step; and a counter compared
    with another that the program moves (`self.seen > self.limit`)."""

    def __init__(self, warmup=6):
        self.step, self.warmup, self.seen, self.limit = 0, warmup, 0, 3

    def __call__(self, x):
        self.step += 1
        self.seen += 2
        lr = 8 ** -0.5 * min(self.step ** -0.5, self.step * self.warmup ** -1.5)
        if self.seen > self.limit:
            self.limit += 5
            x = x * 2.0
        return x * lr, self.limit


def noam_schedule():
    s, eager = Noam(), Noam()
    f = st.compile(s)
    for _ in range(30):
        (a, m), (b, n) = f(x), eager(x)
        assert a.tolist() == b.tolist() and m == n, (a, b)


class History:
    """Lists that grow by a call each, their lengths read: a log appended to and counted,
    one list under two names (counted through one before an append through the other, and
    after it), a length read before a pop, and a length in a condition."""

    def __init__(self):
        self.log = []
        self.a = self.b = []
        self.window = [0.0]

    def __call__(self, x):
        k = len(self.b)
        self.log.append(1)
        self.a.append(2)
        n, m = len(self.log), len(self.b)
        self.window.append(0.5)
        w = len(self.window)
        if w > 3:
            self.window.pop(0)
        y = x * n + m - k
        if len(self.log) % 3 == 0:
            y = y * 2.0
        return y, n, m, w, k


class Aliased:
    """A list's length read through one name, then an append through the other: the length
    returned is the one before the append."""

    def __init__(self):
        self.a = self.b = []

    def __call__(self, x):
        n = len(self.a)
        self.b.append(1)
        return x * n, n


@st.disable  # as written: only the compiled calls are translated, not the driver with them inlined
def list_lengths():
    for make in (History, Aliased):
        h, eager = make(), make()
        f = st.compile(h)
        for _ in range(20):
            (a, *r), (b, *q) = f(x), eager(x)
            assert a.tolist() == b.tolist() and r == q, (make, a, b, r, q)
        assert vars(h) == vars(eager)



def int_functions_of(x, n, r):
    a = int(r) + round(r) + math.floor(r) + math.ceil(r) + math.trunc(r) + round(r * 3)
    b = (n & 5) + (n | 2) + (n ^ 7) + (n << 3) + (n >> 2) + ~n
    q, m = divmod(n, 4)
    c = n ** 2 + pow(n, 3) + q * 10 + m + min(n, 3, 5) + math.log2(abs(r) + 1)
    return x * a + b + c + int(n * 0.5)


def int_functions():
    # `int`, `round`, `math.floor/ceil/trunc/log2` of a float, `& | ^ << >> ~` and `** 2`,
    # `pow`, `divmod`, a `min` of three of an int, over 24 values of each sign: specialized
    # once, then computed again by the replacement (each was a translation per value).
    f = st.compile(int_functions_of)
    for i in range(24):
        n, r = (i * 37) % 29 - 14, ((i * 53) % 41 - 20) / 4
        a, b = f(x, n, r), int_functions_of(x, n, r)
        assert a.tolist() == b.tolist(), (n, r, a, b)
    # An int too large for int64 next to a tensor raises where eager raises it: a guard
    # fails first (the frame runs as written), not the graph's call.
    g = st.compile(int_next_to_tensor)
    for n in (3, 4, 2**40, 5, -(2**33)):
        try:
            a = g(x, n).tolist()
        except OverflowError as exc:
            a = (str(exc), raised_at(exc))
        try:
            b = int_next_to_tensor(x, n).tolist()
        except OverflowError as exc:
            b = (str(exc), raised_at(exc))
        assert a == b, (a, b)


def inverse_powers_of(x, n):
    return x * n ** -1 + x * (n * 2) ** -2


def inverse_powers():
    # `n ** -1`, `(2 * n) ** -2` over 12 values: specialized once, then computed again by
    # the replacement (a negative int exponent gives a float). At 0 both raise
    # ZeroDivisionError: a guard that computes the power fails first, the frame runs as
    # written and raises where eager raises.
    f = st.compile(inverse_powers_of)
    for n in list(range(1, 12)) + [0, -3]:
        try:
            a = f(x, n).tolist()
        except ZeroDivisionError as exc:
            a = str(exc)
        try:
            b = inverse_powers_of(x, n).tolist()
        except ZeroDivisionError as exc:
            b = str(exc)
        assert a == b, (n, a, b)


_hooks = 0


def hooked(x):
    # A global count of registrations, only tested for being nonzero.
    if _hooks:
        return x * 2
    return x + 1


def truth_of_counters():
    # The count changes on most calls: specialized once, then its truth guarded (by value,
    # each count was a translation, the limit of 8, then as written).
    global _hooks
    f = st.compile(hooked)
    for i in range(14):
        _hooks = max(0, i - 2) if i < 13 else 0
        assert f(x).tolist() == hooked(x).tolist(), _hooks


def store_counters(x, state):
    # A counter and a decayed float stored into tensors (an item store of int64 and float
    # tensors, `fill_`): 0-d inputs the store converts, as it converts the number. A float
    # stored into an int64 tensor (truncated) stays a constant guarded by value.
    state["step"] += 1
    state["lr"] *= 0.9
    steps = st.zeros(2, 3, dtype=st.int64)
    steps[:, 0] = state["step"]
    scaled = x.clone()
    scaled[0] = state["step"] * 2
    return steps, scaled, x.new_zeros(2).fill_(state["lr"]), st.ones(3, dtype=st.float32).fill_(state["step"])


def stored_counters():
    f = st.compile(store_counters)
    eager, traced = {"step": 0, "lr": 1.0}, {"step": 0, "lr": 1.0}
    for i in range(12):
        a, b = f(x, traced), store_counters(x, eager)
        assert [(v.dtype, v.tolist()) for v in a] == [(v.dtype, v.tolist()) for v in b], i
    assert eager == traced, (eager, traced)


class Seen:
    def __init__(self):
        self.calls, self.rows, self.k, self.lr, self.mean = 0, 0, 4, 1.0, 0.0


def sizes_over_counters_of(x, s):
    # Floats of sizes and counters together (a mean of rows per call, a size times a
    # decayed rate, a size over a counter that reaches zero): the counters are inputs the
    # graph computes the float from, the divisor guarded nonzero.
    s.calls += 1
    s.rows += x.shape[0]
    s.k -= 1
    s.lr *= 0.5
    s.mean = s.rows / s.calls
    return x * s.mean, x.to(st.float32) * (x.shape[1] * s.lr), x / (x.shape[0] / s.k), s.mean


def sizes_over_counters():
    def run(fn):
        s, out = Seen(), []
        for b in [2, 3, 2, 5, 4, 3, 2, 6, 3, 3]:
            x = st.arange(b * 2, dtype=st.float64).view(b, 2) + 0.5
            try:
                r = fn(x, s)
                out.append([(v.dtype, v.tolist()) if isinstance(v, st.Tensor) else v for v in r])
            except ZeroDivisionError as e:
                out.append(("raises", str(e)))
            out.append((s.calls, s.rows, s.k, s.lr, s.mean))
        return out

    eager = run(sizes_over_counters_of)
    assert ("raises", "division by zero") in eager, eager
    assert run(st.compile(sizes_over_counters_of)) == eager


def int_next_to_tensor(x, n):
    return x * 2 + n * n


def raised_at(exc):
    """The line and columns of the instruction that raised, as a traceback shows them."""
    tb = exc.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    return list(tb.tb_frame.f_code.co_positions())[tb.tb_lasti // 2]

count("floats", floats)
count("int_positions", int_positions)
count("indexed_items", indexed_items)
count("cache_positions", cache_positions)
count("method_operators", method_operators)
count("branches", branches)
count("counters", counters)
count("counter_returned", counter_returned)
count("counter_scales", counter_scales)
count("counter_and_length", counter_and_length)
count("split_loop", split_loop)
count("long_counter", long_counter)
count("schedule", schedule)
count("windows", windows)
count("powers_and_quotients", powers_and_quotients)
count("math_of_counters", math_of_counters)
count("conditions_of_counters", conditions_of_counters)
count("ring_buffer", ring_buffer)
count("weight_averages", weight_averages)
count("tensors_of_numbers", tensors_of_numbers)
count("tensors_of_caller_lists", tensors_of_caller_lists)
count("noam_schedule", noam_schedule)
count("list_lengths", list_lengths)
count("int_functions", int_functions)
count("truth_of_counters", truth_of_counters)
count("inverse_powers", inverse_powers)
count("stored_counters", stored_counters)
count("sizes_over_counters", sizes_over_counters)
print("NUMBERS OK", st.stats())
