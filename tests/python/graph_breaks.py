"""Graph breaks: each kind of break keeps the graph before it, runs the breaking instruction as
written and resumes after it. For each case: the traced result equals eager, explain() counts
the expected graphs and breaks (with the break's id and the user's line), and a second call
translates nothing new. Prints one line per case; `FAIL` marks a failed one."""
import sys, _thread
import symtrace as st
from case_report import count_problems, report, same

failures = []


class Opaque:
    """A callable that counts its calls; called through `st.disable` (below), it is opaque to
    the translator (an instance called directly is simulated through its __call__)."""

    def __init__(self):
        self.calls = []

    def __call__(self, v):
        self.calls.append(v)  # not a counter: under trace_all, a number read would be guarded by value
        return v


opaque = st.disable(counted := Opaque())


def print_break(x, w):
    y = st.relu(x @ w)
    st.graph_break()
    print("  print_break sees", y.shape)
    return (y * 2.0).sum()


def builtin_break(x):
    y = x * 3.0
    label = eval("3.25")  # eval() is not simulated
    return y + 1.0, label


def opaque_break(x):
    y = st.exp(x)
    z = opaque(y)
    return z * y


def item_branch(x):
    a = x * 3.0
    if a.sum().item() > 0:
        return a + 1.0
    return a - 1.0


def tensor_truth(x):
    a = x - 0.5
    flag = not (a.sum() > 0)  # the truth of a tensor
    return a * 2.0, flag


def opcode_break(x):
    y = x + 1.0
    from symtrace import nn  # asks the module's __getattr__ for __path__: not simulated
    return y * len(nn.__name__)


def helper(y):
    z = y + 1.0
    st.graph_break()
    print("  helper sees", z.shape)
    return st.tanh(z)


def nested_inline(x):
    y = x * 2.0
    return helper(y) - y


def two_breaks(x):
    y = x * 2.0
    st.graph_break()
    print("  first")
    z = y + 1.0
    st.graph_break()
    print("  second")
    return z * z


def for_loop_break(x, n):
    y = x * 2.0
    for i in range(n):
        y = y + 1.0
        y = st.tanh(y * 0.5)
        st.graph_break()
        print("  for_loop_break step", i)
        y = y - 0.25
    return y * 3.0


def while_loop_break(x):
    y = x * 1.0
    while True:
        y = y * 1.5
        y = st.relu(y + 0.1)
        if y.sum().item() > 20.0:
            break
    return y * 2.0


def loop_return_inside(x, ws):
    y = x * 1.0
    for w in ws:
        last = y * w
        last = st.exp(last - 1.0)
        y = last + 0.5
        st.graph_break()
        print("  loop_return_inside")
        if last.sum().item() > 100.0:
            return last, "early"
    return y, last


def tiny_loop(x, n):
    y = x * 2.0
    for i in range(n):
        y = y + 1.0
        st.graph_break()
        print("  tiny_loop", i)
    return y


events = []


class Boom:
    """Raises when asked to, so that a handler runs; opaque, called through `st.disable`."""

    def __call__(self, fail):
        events.append("boom")
        if fail:
            raise ValueError("boom")
        return 1


boom = st.disable(Boom())


class Span:
    """A context manager of the user's: its __enter__ and __exit__ are inlined."""

    def __init__(self, suppress):
        self.suppress = suppress

    def __enter__(self):
        events.append("enter")
        return self

    def __exit__(self, kind, value, tb):
        events.append("exit " + (kind.__name__ if kind else "-"))
        return self.suppress


def try_except_break(x, fail):
    y = st.tanh(x * 2.0)
    try:
        y = y + 1.0
        boom(fail)
        y = st.relu(y * 3.0)
    except ValueError as e:
        events.append("caught " + str(e))
        y = y - 1.0
    finally:
        events.append("finally")
    return y * 0.5


def with_break(x, span, fail):
    y = st.tanh(x * 2.0)
    with span as s:
        y = y + 1.0
        boom(fail)
        y = st.relu(y * 3.0)
    return y - 0.5, s.suppress


lock = _thread.allocate_lock()


def with_native(x):
    y = st.tanh(x * 2.0)
    with lock:
        y = y + 1.0
        y = st.relu(y * 3.0)
    return y - 0.5


def loop_try_break(x, flags):
    y = x * 1.0
    for f in flags:
        y = st.tanh(y * 0.5)
        y = y + 1.0
        try:
            y = y * 2.0
            boom(f)
            y = y - 1.0
        except ValueError as e:
            events.append("caught " + str(e))
            y = y + 10.0
    return y


def loop_with_break(x, flags, span):
    y = x * 1.0
    for f in flags:
        y = st.tanh(y * 0.5)
        with span:
            y = y + 1.0
            y = y * 2.0
            boom(f)
            y = y - 1.0
    return y


def loop_comprehension_break(x, ws):
    y = x * 1.0
    for w in ws:
        y = st.tanh(y * 0.5)
        y = y + 1.0
        s = [v * 2.0 for v in (y, w)]
        boom(False)
        y = s[0] + s[1]
    return y


def compare_branch(x):
    a = st.tanh(x * 2.0)
    if a.sum() > 0:  # the comparison feeds the jump directly (no TO_BOOL)
        return a + 1.0
    return a - 1.0


def loop_inside_try(x, flags):
    y = x * 1.0
    try:
        for f in flags:
            y = st.tanh(y * 0.5)
            y = y + 1.0
            y = y * 2.0
            boom(f)
            y = y - 1.0
    except ValueError as e:
        events.append("caught " + str(e))
        y = y - 100.0
    return y


def loop_inside_with(x, flags, span):
    y = x * 1.0
    with span:
        for f in flags:
            y = st.tanh(y * 0.5)
            y = y + 1.0
            y = y * 2.0
            boom(f)
            y = y - 1.0
    return y


def except_leaves_loop(x, flags):
    y = x * 1.0
    for f in flags:
        y = st.tanh(y * 0.5)
        y = y + 1.0
        y = y * 2.0
        try:
            boom(f)
        except ValueError:
            events.append("stop")
            break
        y = y - 1.0
    y = y * 2.0
    z = st.relu(y + 1.0)
    return z * z + y


@st.disable
def check(name, fn, args, graphs, breaks, break_id, line):
    eager = st.disable(fn)(*args)
    e = st.explain(fn, *args)
    before = st.stats()["translations"]
    # The checker runs untraced (st.disable covers what it calls): compile() traces the call.
    traced = st.compile(fn)(*args)
    again = st.compile(fn)(*args)
    after = st.stats()["translations"]
    problems = []
    if not (same(traced, eager) and same(again, eager)):
        problems.append(f"result {traced!r} != {eager!r}")
    problems += count_problems(e, graphs, breaks)
    first = e.break_reasons[0] if e.break_reasons else {}
    if first.get("id") != break_id or not first.get("location", "").endswith(f"graph_breaks.py:{line}") or not first.get("resumed"):
        problems.append(f"first break {first}")
    if after != before:
        problems.append(f"calls after explain translated {after - before} more")
    report(name, problems, failures)


st.manual_seed(0)
x = st.randn(2, 4)
w = st.randn(4, 3)
check("a requested break (symtrace.graph_break)", print_break, (x, w), 2, 1, "GB-CALL", 29)
check("a call to an unsupported builtin", builtin_break, (x,), 2, 1, "GB-CALL", 36)
# Opaque.__call__ runs as written through st.disable: the translator does not follow it
# (an instance called directly is simulated through its __call__).
check("a call to an opaque object", opaque_break, (x,), 2, 1, "GB-CALL", 42)
pos = x if st.disable(lambda: (x * 3.0).sum().item())() > 0 else -x
check("a branch on t.item()", item_branch, (pos,), 2, 1, "GB-CALL", 48)
check("a branch on t.item(), other side", item_branch, (-pos,), 2, 1, "GB-CALL", 48)
check("the truth of a tensor", tensor_truth, (x,), 2, 1, "GB-BRANCH", 55)
# The comparison runs as written (it gives the bool), and the resume function takes the jump.
check("a tensor comparison feeding a branch", compare_branch, (pos,), 2, 1, "GB-BRANCH", 235)
check("a tensor comparison feeding a branch, other side", compare_branch, (-pos,), 2, 1, "GB-BRANCH", 235)
check("an unsupported opcode", opcode_break, (x,), 2, 1, "GB-OPCODE", 61)
# The caller breaks at the call; the callee, translated when it runs, breaks at its print:
# graphs of the caller, the callee, and their two resume functions.
check("a nested inlined call", nested_inline, (x,), 4, 2, "GB-CALL", 74)
check("two breaks in a row", two_breaks, (x,), 3, 2, "GB-CALL", 79)
# A loop whose body breaks is split: the loop runs as written, its body is a function
# translated per iteration (with the break inside it), and the rest of the frame resumes
# after the loop. Graphs: before the loop, the body before and after the break, after the loop.
check("a break inside a for loop", for_loop_break, (x, 3), 4, 2, "GB-LOOP", 92)
# The body's resume function has no tensor work (the comparison and the jump out): it runs as
# written, with no graph and no break of its own.
check("a break inside a while loop", while_loop_break, (x,), 3, 2, "GB-LOOP", 103)
# `last` is first assigned inside the loop and read after it. Numbers that change per
# iteration are guarded by value, so they stay out of the graphs here: the weights are tensors,
# and after item() comes no tensor work (its value would be guarded: a recompile per
# iteration). Graphs: before the loop, the body before the print and between the print and
# item(); breaks: the loop, the print, the item().
ws = [st.ones(2, 4) * 0.5, st.ones(2, 4) * 0.75, st.ones(2, 4)]
check("a return inside a split loop", loop_return_inside, (x, ws), 3, 3, "GB-LOOP", 114)
check("a return inside a split loop, taken", loop_return_inside, (x + 3.0, ws), 3, 3, "GB-LOOP", 114)

@st.disable
def check_handler(name, fn, args, graphs, breaks, line):
    """As check(), where the call may raise: the outcome (result or exception) and the events
    of each call equal eager's."""

    def outcome(f):
        events.clear()
        try:
            r = f(*args)
        except ValueError as e:
            r = "raised " + repr(e)
        return r, list(events)

    eager = outcome(st.disable(fn))
    e, explained_events = outcome(lambda *a: st.explain(fn, *a))
    before = st.stats()["translations"]
    traced, again = outcome(st.compile(fn)), outcome(st.compile(fn))
    after = st.stats()["translations"]
    problems = []
    for got in (traced, again):
        if not (same(got[0], eager[0]) and got[1] == eager[1]):
            problems.append(f"{got} != {eager}")
    if isinstance(e, str):
        # explain() lets the call's exception out, as the call would.
        if graphs is not None or (e, explained_events) != eager:
            problems.append(f"explain: {e}, {explained_events}")
    else:
        problems += count_problems(e, graphs, breaks)
        first = e.break_reasons[0] if e.break_reasons else {}
        if first.get("id") not in ("GB-CALL", "GB-LOOP") or not first.get("location", "").endswith(f"graph_breaks.py:{line}"):
            problems.append(f"first break {first}")
    if after != before:
        problems.append(f"calls after explain translated {after - before} more")
    report(name, problems, failures)


# The call inside the try block runs as written between two graphs; when it raises, its
# exception goes to the handler as written (the graph after the break never runs).
check_handler("a break inside a try/except", try_except_break, (x, False), 2, 1, 165)
check_handler("a break inside a try/except, the call raises", try_except_break, (x, True), 1, 1, 165)
# __enter__ and __exit__ are inlined into the graphs before and after the break.
check_handler("a break inside a with-block", with_break, (x, Span(False), False), 2, 1, 179)
# __exit__ lets the exception out of the call: explain() raises it too, so there are no counts.
check_handler("a break inside a with-block, the call raises", with_break, (x, Span(False), True), None, None, 179)
# The handler calls Span.__exit__ as written; translated on its own, it has no tensor work
# (`kind.__name__` of a builtin class is read natively): no second break.
check_handler("a break inside a with-block, __exit__ suppresses", with_break, (x, Span(True), True), 1, 1, 179)
# A native context manager: its __enter__ and __exit__ calls are breaks of their own.
check("a with-block over a native lock", with_native, (x,), 3, 2, "GB-CALL", 189)
if lock.locked():
    failures.append("the lock was left held")

# A loop whose body holds a try/except, a with-block or a comprehension is split with the
# handlers, which the compiler places after the function's code, copied into the body
# function. Graphs: before the loop, the body before and after the break. When the call
# raises, the except block runs as written, to the end of the iteration.
check_handler("a break inside a try/except inside a split loop", loop_try_break, (x, [False, True, False]), 3, 2, 202)
# The second iteration's exception leaves the loop through __exit__: explain() raises it.
check_handler("a break inside a with-block inside a split loop", loop_with_break, (x, [False, True], Span(False)), None, None, 217)
check_handler("a break inside a with-block inside a split loop, no exception", loop_with_break, (x, [False, False], Span(False)), 3, 2, 217)
check_handler("a break inside a comprehension's loop body", loop_comprehension_break, (x, [x, x * 2.0]), 3, 2, 228)

# A loop inside a try or with block: in the body function, an exception for the block's
# handler ends the iteration, and the driver raises it again under that handler, with the
# iteration's locals (`y` after `y * 2.0`). The with cases iterate over a tuple: after
# __enter__ appends to a list, a list of the caller could be that one (reading it breaks).
check_handler("a split loop inside a try/except", loop_inside_try, (x, [False, False]), 3, 2, 247)
check_handler("a split loop inside a try/except, the call raises", loop_inside_try, (x, [False, True]), 3, 2, 247)
check_handler("a split loop inside a with-block", loop_inside_with, (x, (False, False), Span(False)), 3, 2, 262)
check_handler("a split loop inside a with-block, the call raises", loop_inside_with, (x, (False, True), Span(False)), None, None, 262)
check_handler("a split loop inside a with-block, __exit__ suppresses", loop_inside_with, (x, (False, True), Span(True)), 3, 2, 262)

# `break` in an except block jumps from the handler (placed after the function's code) to the
# code after the loop: an exit of the body function, like a `break` in the body. Graphs:
# before the loop, the body before and after the call, after the loop.
check_handler("a break out of a split loop from its except block", except_leaves_loop, (x, (False, False)), 4, 2, 274)
check_handler("a break out of a split loop from its except block, taken", except_leaves_loop, (x, (False, True, False)), 4, 2, 274)


@st.disable
def check_tiny():
    # One op before the break: under min_graph_size (3), the loop is not split and the frame
    # runs as written.
    e = st.explain(tiny_loop, x, 3)
    problems = count_problems(e, 0, 1)
    reason = e.break_reasons[0]["reason"] if e.break_reasons else ""
    if e.break_reasons and (e.break_reasons[0]["id"] != "GB-FRAME" or e.break_reasons[0]["resumed"]):
        problems.append(f"break {e.break_reasons[0]}")
    if not same(st.compile(tiny_loop)(x, 3), st.disable(tiny_loop)(x, 3)):
        problems.append("result differs")
    report("a loop body under min_graph_size is not split", problems, failures)


check_tiny()

import collections, functools


@functools.lru_cache(maxsize=None)
def causal_mask(n, scale=[1.0]):  # a list default, which may change: not simulated
    return st.tril(st.ones(n, n)) * scale[0]


def cached_helper_first(x):
    mask = causal_mask(x.shape[0])  # an lru_cache wrapper that breaks, before any tensor work
    y = x @ x.T
    return y.masked_fill(mask == 0, 0.0).softmax(-1) * 2.0


def format_first(x, words):
    count = eval("len(words)", {"words": words})  # eval() is not simulated
    return st.relu(x * count) + 1.0


# Nothing captured before the break: the resume function captures what follows it.
check("a break before any tensor work", cached_helper_first, (w.T,), 1, 1, "GB-CALL", 445)
check("a break before any tensor work, a builtin", format_first, (x, ["a", "b", "a"]), 1, 1, "GB-CALL", 451)


def counter_only(x, words):
    return collections.Counter(words), x


@st.disable
def check_nothing_after():
    # Nothing captured before the break nor after it: the break only costs a frame and a call,
    # so it is dropped (the resume function skipped, the frame runs as written, then skipped).
    f = st.compile(counter_only)
    before = st.stats()
    results = [f(x, ["a", "a"]) for _ in range(6)]
    after = st.stats()
    problems = []
    if any(r != (collections.Counter(a=2), x) for r in results):
        problems.append(f"results {results}")
    if after["cache_hits"] - before["cache_hits"] > 1:
        problems.append(f"{after['cache_hits'] - before['cache_hits']} calls took the break")
    if after["fallbacks"] - before["fallbacks"] > 4:
        problems.append(f"{after['fallbacks'] - before['fallbacks']} fallbacks: the frame was not skipped")
    report("a break before nothing is dropped", problems, failures)


def breaks_inside(x):
    st.graph_break()  # requested inside a call inlined before any tensor work
    return x


def calls_a_breaking_helper_first(x):
    y = breaks_inside(x)
    return st.relu(y * 2.0) + 1.0


# The caller breaks at the call (nothing captured before it) and resumes after it; the callee,
# run as written there, breaks on its own: 2 breaks, the resume function's graph.
check("a requested break in a call before any tensor work", calls_a_breaking_helper_first,
      (x,), 1, 2, "GB-CALL", 488)
def template_across_break(x, name):
    y = x * 2.0
    t = t"{name!r:>6}: {y}"
    st.graph_break()
    # Made again by the replacement, it holds the graph's output itself.
    return y + 1.0, t.strings, t.values[0], t.values[1] is y, t.interpolations[0].format_spec


check("a template string held across a break", template_across_break, (x, "y"), 2, 1, "GB-CALL", 499)
def chunks(x, size, *, step=1):
    for i in range(0, x.shape[0], size * step):
        yield x[i:i + size]


def loop_over_a_generator(x):
    total = 0.0
    for part in chunks(x, 2, step=1):  # not started before the loop: made again by its call
        total = total + (part * 2.0).sum().item()
    return total


# The loop split at item(): the body's graph, the generator's frame as written (it is not
# replaced), the body's break.
check("a loop over a generator function's generator, split", loop_over_a_generator,
      (st.arange(6.0).reshape(6, 1),), 1, 3, "GB-LOOP", 513)
losses = []
seen = {}


def logs_inside_a_call(x):
    y = st.relu(x * 2.0)
    # The break is inside the arguments: the stack holds `losses.append` in the interpreter's
    # method form (list.append, losses), and the resume function simulates the call again.
    losses.append(y.mean().item())
    seen.update(last=y.shape[0])
    return y + 1.0


check("a break inside the arguments of a list's method", logs_inside_a_call, (x,), 2, 1, "GB-CALL", 529)
if len(losses) != 4 or seen != {"last": 2}:  # eager, explain, two traced calls
    report("a list's method called across a break runs once a call", [f"{losses} {seen}"], failures)


class Router:
    """Experts in a ModuleList, each given the rows routed to it: `nonzero` of a mask computed
    in the graph has a data-dependent size."""

    def __init__(self):
        st.manual_seed(3)
        self.gate = st.nn.Linear(4, 3)
        self.experts = st.nn.ModuleList([st.nn.Linear(4, 4) for _ in range(3)])

    def route(self, x):
        choice = st.softmax(self.gate(x), dim=-1).argmax(-1)
        out = st.zeros_like(x)
        for e, expert in enumerate(self.experts):
            rows = (choice == e).nonzero().flatten()
            out[rows] = expert(x[rows])
        return out * 2.0


# The loop's body captures one op before its break, too little to be split per iteration: the
# graph keeps the gate's work before the loop, and the loop runs as written from its head (its
# iterator, over the ModuleList's dict, made again where it had got to). Graphs: before the
# loop, and in each expert and in `nonzero`'s frames, which the loop calls; breaks: before the
# loop, the resume function as written, `nonzero`'s own.
check("a break in a small loop keeps the work before it", Router().route, (st.randn(5, 4),), 6, 3,
      "GB-BEFORE-LOOP", 552)


def iterators_across_a_break(x, d, xs):
    y = x.exp() * 2.0
    values, backwards = iter(d.values()), reversed(xs)
    first, last = next(values), next(backwards)
    print("  iterators_across_a_break", y.sum().item() > 0)  # the iterators are made again
    return y * first + last, next(values), list(backwards)


check("iterators over a caller's dict view and reversed list, across a break",
      iterators_across_a_break, (x, {"a": 1.0, "b": 2.0}, [1.0, 2.0, 3.0]), 2, 3, "GB-CALL", 570)


def nested_small_loops(x, rows):
    y = x.exp().sin().cos()
    for row in rows:
        for v in row:
            y = y + v * (y.sum().item() > -100.0)
    return y


# The inner loop's body is too small to split, and its head is met once per outer iteration:
# the graph ends at the outer loop's head.
check("a break in nested small loops keeps the work before the outer one", nested_small_loops,
      (x, [[1.0, 2.0], [3.0]]), 1, 2, "GB-BEFORE-LOOP", 582)
check_nothing_after()


def index_broken_midway(x):
    y = x * 2.0
    # The break is inside an index: the resume function receives `...` on its stack.
    return x[..., int(y.sum().item()) % 4] + y.sum()


check("a break inside an index after an ellipsis", index_broken_midway, (x,), 2, 1, "GB-CALL", 596)


def logs_of_local_losses(x):
    # A dict and a list of losses held in locals and iterated with a break inside (a small
    # body: the graph ends at the loop's head, and the rest runs as written): the iterators
    # are made again over the dict and the list built once, so that what the loop and the
    # rest of the frame see is one object. Before, the whole frame ran as written.
    y = x.exp()
    losses = {"a": y.sum(), "b": (y * 2.0).mean()}
    parts = [y.max(), y.min()]
    logs = {k: round(v.item(), 4) for k, v in losses.items()}
    seen = [p.item() for p in parts]
    losses["c"] = y.std()
    parts.append(y.mean())
    return y * 2.0, logs, seen, sorted(losses), len(parts)


check("a break while a local dict's items and a local list are iterated", logs_of_local_losses,
      (x,), 2, 2, "GB-BEFORE-LOOP", 610)


def iterators_of_locals_midway(x):
    y = x.exp()
    parts = [y.sum(), y.mean(), y.max()]
    stats = {"a": y.min(), "b": y.std(), "c": y.sum() * 2.0}
    it, entries = iter(parts), iter(stats.items())
    first, (name, _) = next(it), next(entries)
    # The iterators are made again past what they gave (`islice`, which the frame after the
    # break runs as written from the comprehension on).
    print("  iterators_of_locals_midway", first.item() > 0)
    parts.append(y.min())  # the iterator reads the list that grew
    stats["b"] = y.sum()  # a value stored, the keys as they were: the iterator reads it
    return y * 2.0, [p + 1.0 for p in it], [(k, v * 2.0) for k, v in entries], name, len(parts)


check("iterators over a local list and dict, midway at a break", iterators_of_locals_midway,
      (x,), 2, 3, "GB-CALL", 629)


print("opaque calls:", len(counted.calls))
print("ALL OK" if not failures else f"FAILED {failures}", len(failures))
