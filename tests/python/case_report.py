"""What the case scripts (graph_breaks.py, side_effects.py, generators.py) share: comparing
results, checking explain()'s counts, and printing one line per case (`FAIL` marks a failed
one)."""
import collections

import symtrace as st


def same(a, b):
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same(p, q) for p, q in zip(a, b))
    if isinstance(a, st.Tensor):
        return a.tolist() == b.tolist()
    return a == b


def plain(v):
    """A result as values only (tensors as lists), to compare with ==."""
    if isinstance(v, st.Tensor):
        return ("tensor", v.tolist())
    if isinstance(v, (list, tuple)):
        return [plain(i) for i in v]
    if isinstance(v, collections.deque):
        return ("deque", v.maxlen, [plain(i) for i in v])
    return v


def count_problems(e, graphs, breaks):
    if (e.graph_count, e.graph_break_count) != (graphs, breaks):
        return [f"{e.graph_count} graphs, {e.graph_break_count} breaks (expected {graphs}, {breaks}): {e.break_reasons}"]
    return []


def report(name, problems, failures):
    print(("FAIL " if problems else "ok ") + name + (": " + "; ".join(problems) if problems else ""))
    if problems:
        failures.append(name)


@st.disable
def eager_then_traced(name, fn, make_args, most, graphs, breaks, *, calls, reset, state,
                      failures, between=None):
    """Run `fn` `calls` times as written, then `calls` times compiled, each from the state
    `reset()` makes (`make_args(i)` the arguments of call `i`, `between(i)` what the caller
    changes before it); report whether the results of every call and `state()` afterwards
    are equal, whether the compiled calls translated at most `most` times, and whether
    explain() of one more call counts `graphs` graphs and `breaks` breaks (unchecked when
    `graphs` is None)."""

    def run(call):
        reset()
        results = []
        for i in range(calls):
            if between:
                between(i)
            results.append(plain(call(*make_args(i))))
        return results, state()

    eager = run(fn)
    before = st.stats()["translations"]
    traced = run(st.compile(fn))
    made = st.stats()["translations"] - before
    problems = []
    if traced != eager:
        problems.append(f"traced {traced} != eager {eager}")
    if made > most:
        problems.append(f"{made} translations for {calls} calls (at most {most})")
    if graphs is not None:
        problems += count_problems(st.explain(fn, *make_args(calls)), graphs, breaks)
    reset()
    report(f"{name} ({made} translations)", problems, failures)
