"""print() in traced code stays in the graph: the replacement prints after the graph, in
program order with the other side effects, what the program would have printed at that
point (a tensor updated in place later, a list appended to later, a counter that changes
from call to call). Where that cannot be proven (a stream written in Python, a print under
a handler, sys.stdout rebound by the call) it breaks as before. For each case: the text
printed and the results, eager and traced, are equal, and explain() counts the expected
graphs and breaks. Prints one line per case; `FAIL` marks a failed one."""
import collections
import io
import sys

import symtrace as st
from case_report import count_problems, report, plain

failures = []


class Model:
    def __init__(self):
        self.w = st.ones(2, 2)
        self.step = 0
        self.seen = []

    def forward(self, x):
        self.step += 1
        y = x @ self.w
        print(f"step {self.step}:", self.step, y.shape, y)
        self.seen.append(self.step)
        print("seen", {"last": self.step}, (1, "a"), None, 2.5)
        return y.relu()


def tensor_then_updated(x):
    y = x * 2.0
    print("before", y)
    y.add_(1.0)
    print("after", y, sep=" | ", end=" .\n")
    return y


def list_then_appended(x, log):
    log.append(1)
    print("log", log)
    log.append(2)
    return x * len(log)


def helper(y):
    print("helper", y.sum())
    return y + 1.0


def inlined(x):
    return helper(x * 3.0) * 2.0


def numbered(xs):
    for i, x in enumerate(xs):
        print(f"item {i}")
        yield x * 2.0


def consumed(x):
    # A generator's and a comprehension's implicit handlers only pass an exception on.
    return [y + 1.0 for y in numbered([x, x * 3.0])]


Pair = collections.namedtuple("Pair", "first second")


def printed_as_their_class(x, pair):
    # A named tuple and the dicts of collections print with their class's name.
    counts = collections.defaultdict(int)
    counts["seen"] += 1
    print(pair, counts, collections.OrderedDict(a=1), Pair(1, "b"))
    return x + counts["seen"]


def around_a_break(x):
    print("one")
    y = x + 1.0
    st.graph_break()
    print("two", y)
    return y * 2.0


def labelled(x, epoch, lr):
    # Formatted again on each call: neither number is fixed by value.
    return x * lr, f"epoch {epoch + 1:>3}: lr={lr:.2e} ({epoch / 10:.0%}) {lr!r}"


def to_stderr(x):
    print("to stderr", x.shape[0], file=sys.stderr, flush=True)
    return x - 1.0


class Loud:
    """A stream written in Python: its write changes what the program reads next."""

    def __init__(self):
        self.writes = 0

    def write(self, s):
        self.writes += 1
        return len(s)

    def flush(self):
        pass


loud = Loud()


def to_python_stream(x):
    print("loud", file=loud)
    return x * loud.writes


def under_handler(x):
    try:
        print("guarded")
        y = x + 1.0
    except ValueError:
        y = x
    return y


def draws_then_prints(x):
    # Replayed after the graph, a print whose write failed would follow draws the program
    # never makes: the frame is translated again with the print breaking.
    y = x + st.rand(2, 2)
    print("drew", y.shape)
    return y * st.rand(2, 2)


def rebinds_stdout(x):
    saved = sys.stdout
    sys.stdout = sys.stderr
    print("on stderr")
    sys.stdout = saved
    return x + 2.0


@st.disable
def outcome(fn, args_of, calls):
    """Results, what was printed and what was written to stderr, over `calls` calls."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    results = []
    try:
        for i in range(calls):
            try:
                results.append(plain(fn(*args_of(i))))
            except Exception as e:
                results.append(("raised", type(e).__name__))
    finally:
        sys.stdout, sys.stderr = saved
    return results, out.getvalue(), err.getvalue()


@st.disable
def check(name, fn, args_of, graphs, breaks, calls=3, reset=None, most=None):
    if reset:
        reset()
    eager = outcome(fn, args_of, calls)
    if reset:
        reset()
    before = st.stats()["translations"]
    traced = outcome(st.compile(fn), args_of, calls)
    made = st.stats()["translations"] - before
    problems = [] if traced == eager else [f"traced {traced} != eager {eager}"]
    if most is not None and made > most:
        problems.append(f"{made} translations (at most {most})")
    if reset:
        reset()
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = io.StringIO()
    try:
        if graphs is not None:
            problems += count_problems(st.explain(fn, *args_of(calls)), graphs, breaks)
    finally:
        sys.stdout, sys.stderr = saved
    report(name, problems, failures)


x = st.tensor([[1.0, -2.0], [3.0, 4.0]])
model = Model()


def reset_model():
    model.step = 0
    model.seen = []


check("a forward pass printing a counter, a list, a tensor", model.forward, lambda i: (x,), 1, 0,
      reset=reset_model, most=2)
check("a tensor printed, then updated in place", tensor_then_updated, lambda i: (x,), 1, 0)
check("a caller's list printed, then appended to", list_then_appended, lambda i: (x, []), 1, 0)
check("a print in an inlined call", inlined, lambda i: (x,), 1, 0)
check("a print in a generator consumed by a comprehension", consumed, lambda i: (x,), 1, 0)
check("named tuples and collections' dicts print as their class", printed_as_their_class,
      lambda i: (x, Pair(i, "a")), None, None)
check("prints on both sides of a break", around_a_break, lambda i: (x,), 2, 1)
check("f-strings of changing numbers, returned", labelled, lambda i: (x, i, 0.1 / (i + 1)), 1, 0,
      calls=5, most=2)
check("print(file=sys.stderr, flush=True)", to_stderr, lambda i: (x,), 1, 0)
check("a stream written in Python breaks", to_python_stream, lambda i: (x,), 1, 1,
      reset=lambda: setattr(loud, "writes", 0))
check("a print under a handler breaks", under_handler, lambda i: (x,), 1, 1)
check("a print after random draws breaks", draws_then_prints, lambda i: (x,), 2, 1,
      reset=lambda: st.manual_seed(0))
check("a print after sys.stdout is rebound breaks", rebinds_stdout, lambda i: (x,), 1, 1)


@st.disable
def check_closed_stream():
    # The write fails: after the graph, when replayed, with the same error, and the
    # effects before it made, as when run.
    def run(call):
        stream, log = io.StringIO(), []
        stream.close()

        def writes_closed(x):
            log.append("before")
            print("lost", file=stream)
            log.append("after")
            return x * 2.0

        try:
            r = plain(call(writes_closed)(x))
        except ValueError as e:
            r = ("raised", type(e).__name__)
        return r, log

    eager = run(st.disable)
    traced = run(st.compile)
    problems = [] if traced == eager and eager[0][0] == "raised" else [f"{traced} != {eager}"]
    report("a print to a closed stream raises when replayed", problems, failures)


check_closed_stream()
print("ALL OK" if not failures else f"FAILED {failures}", len(failures))
