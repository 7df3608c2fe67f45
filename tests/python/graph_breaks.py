"""Graph breaks: each kind of break keeps the graph before it, runs the breaking instruction as
written and resumes after it. For each case: the traced result equals eager, explain() counts
the expected graphs and breaks (with the break's id and the user's line), and a second call
translates nothing new. Prints one line per case; `FAIL` marks a failed one."""
import sys
import symtrace as st
from case_report import count_problems, report, same

failures = []


class Opaque:
    """A callable the translator does not simulate (its __call__ is a user method of a class
    with a custom __call__, called through the object)."""

    def __init__(self):
        self.calls = 0

    def __call__(self, v):
        self.calls += 1
        return v


opaque = Opaque()


def print_break(x, w):
    y = st.relu(x @ w)
    print("  print_break sees", y.shape)
    return (y * 2.0).sum()


def builtin_break(x):
    y = x * 3.0
    ident = id(y)  # id() is not simulated
    return y + 1.0, ident > 0


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
    import math  # IMPORT_NAME is not simulated
    return y * math.pi


def helper(y):
    z = y + 1.0
    print("  helper sees", z.shape)
    return st.tanh(z)


def nested_inline(x):
    y = x * 2.0
    return helper(y) - y


def two_breaks(x):
    y = x * 2.0
    print("  first")
    z = y + 1.0
    print("  second")
    return z * z


@st.disable
def check(name, fn, args, graphs, breaks, break_id, line):
    eager = st.disable(fn)(*args)
    e = st.explain(fn, *args)
    before = st.stats()["translations"]
    traced = fn(*args)
    again = fn(*args)
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
check("a call to print", print_break, (x, w), 2, 1, "GB-CALL", 29)
check("a call to an unsupported builtin", builtin_break, (x,), 2, 1, "GB-CALL", 35)
# Opaque.__call__, run as written, is simulated in turn: no tensor work, so it runs as
# written (its attribute store would be replayed; with nothing to capture there is no graph).
check("a call to an opaque object", opaque_break, (x,), 2, 1, "GB-CALL", 41)
pos = x if st.disable(lambda: (x * 3.0).sum().item())() > 0 else -x
check("a branch on t.item()", item_branch, (pos,), 2, 1, "GB-CALL", 47)
check("a branch on t.item(), other side", item_branch, (-pos,), 2, 1, "GB-CALL", 47)
check("the truth of a tensor", tensor_truth, (x,), 2, 1, "GB-BRANCH", 54)
check("an unsupported opcode", opcode_break, (x,), 2, 1, "GB-OPCODE", 60)
# The caller breaks at the call; the callee, translated when it runs, breaks at its print:
# graphs of the caller, the callee, and their two resume functions.
check("a nested inlined call", nested_inline, (x,), 4, 2, "GB-CALL", 72)
check("two breaks in a row", two_breaks, (x,), 3, 2, "GB-CALL", 77)
print("opaque calls:", opaque.calls)
print("ALL OK" if not failures else f"FAILED {failures}", len(failures))
