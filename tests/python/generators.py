"""Generators under `--plugin symtrace`: a user generator consumed inside a traced function
(a for loop, list(), sum() over a generator expression, `yield from` with a return value) is
simulated with its consumer, item by item, so the whole function is one graph; a generator
function that runs as written says so (GB-GENERATOR). For each case: the traced result equals
eager, explain() counts the expected graphs and breaks, and a second call translates nothing
new. Prints one line per case; `FAIL` marks a failed one."""
import operator

import symtrace as st
from case_report import count_problems, report, same

failures = []
log = []


def scaled(xs, k):
    for x in xs:
        log.append("scaled yields")
        yield x * k


def for_over_generator(x, ws):
    acc = x
    for v in scaled(ws, 2.0):
        log.append("loop body")
        acc = acc + v
    return acc


def sum_of_generator_expression(x, ws):
    return sum(w * x for w in ws)


def list_of_generator(ws):
    items = list(scaled(ws, 3.0))
    return items[0] - items[-1]


def inner(xs):
    for x in xs:
        yield x + 1.0
    return len(xs)


def outer(xs):
    n = yield from inner(xs)
    yield xs[0] * float(n)


def yield_from(x, ws):
    out = x
    for v in outer(ws):
        out = out * v
    return out


def counter(x):
    yield x + 1.0
    yield x + 2.0


advance = operator.methodcaller("__next__")  # a native callable the translator does not model


def runs_as_written(x):
    it = counter(x)
    first = advance(it)  # an opaque call: this frame breaks there; counter runs as written
    return first * 2.0


@st.disable
def check(name, fn, args, graphs, breaks, ids=()):
    del log[:]
    eager = st.disable(fn)(*args)
    eager_log = list(log)
    e = st.explain(fn, *args)
    before = st.stats()["translations"]
    del log[:]
    # The checker runs untraced (st.disable covers what it calls): compile() traces the call.
    traced = st.compile(fn)(*args)
    traced_log = list(log)
    again = st.compile(fn)(*args)
    after = st.stats()["translations"]
    problems = []
    if not (same(traced, eager) and same(again, eager)):
        problems.append(f"result {traced!r} != {eager!r}")
    if traced_log != eager_log:
        problems.append(f"side effects in another order: {traced_log} != {eager_log}")
    problems += count_problems(e, graphs, breaks)
    if sorted(b["id"] for b in e.break_reasons) != sorted(ids):
        problems.append(f"break ids {[b['id'] for b in e.break_reasons]} (expected {list(ids)})")
    if after != before:
        problems.append(f"calls after explain translated {after - before} more")
    report(name, problems, failures)


st.manual_seed(0)
x = st.randn(3)
ws = [st.randn(3), st.randn(3), st.randn(3)]
check("a for loop over a user generator", for_over_generator, (x, ws), 1, 0)
check("sum() of a generator expression", sum_of_generator_expression, (x, ws), 1, 0)
check("list() of a user generator", list_of_generator, (ws,), 1, 0)
check("yield from, with the inner generator's return value", yield_from, (x, ws), 1, 0)
# The consumer breaks at the opaque call (its generator, not started, made again by the call
# that made it, then advanced as written), and resumes with a graph; the generator function
# runs as written, and says why.
check("a generator function that runs as written", runs_as_written, (x,), 1, 2, ("GB-CALL", "GB-GENERATOR"))
print("ALL OK" if not failures else f"FAILED {failures}", len(failures))
