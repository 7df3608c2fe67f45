"""The ladder's runner: each case runs eagerly (symtrace.disable) and traced
(symtrace.compile(fullgraph=True)) under `--plugin symtrace --plugin-opt strict=1
--plugin-opt trace_all=1`; results must be equal, the case's frame must translate whole (no
fallback), a second call must hit the cache, and explain() must count the expected graphs.
`changes` checks a guarded fact: after a first traced call, the fact changes; the next
traced call must equal eager again (the guard failed, and the frame translated again)."""
import sys
from string.templatelib import Interpolation, Template
import symtrace as st

_failures = []
_count = 0


@st.disable
def same(a, b):
    if isinstance(a, st.Tensor) or isinstance(b, st.Tensor):
        return (isinstance(a, st.Tensor) and isinstance(b, st.Tensor) and a.dtype == b.dtype
                and a.shape == b.shape and a.tolist() == b.tolist())
    if type(a) is not type(b):
        return False
    # Template strings compare by identity: compared by their parts.
    if isinstance(a, Template):
        return same(a.strings, b.strings) and same(a.interpolations, b.interpolations)
    if isinstance(a, Interpolation):
        return same((a.value, a.expression, a.conversion, a.format_spec),
                    (b.value, b.expression, b.conversion, b.format_spec))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b


@st.disable
def case(fn, *args, graphs=1, **kwargs):
    global _count
    _count += 1
    name = fn.__name__
    eager = fn(*args, **kwargs)
    st.reset()
    try:
        traced = st.compile(fn, fullgraph=True)(*args, **kwargs)
        first = st.stats()
        again = st.compile(fn, fullgraph=True)(*args, **kwargs)
        second = st.stats()
        explained = st.explain(fn, *args, **kwargs)
    except Exception as e:
        _failures.append(f"{name}: {type(e).__name__}: {e}")
        return
    problems = []
    if not same(eager, traced):
        problems.append(f"traced result {traced!r} != eager {eager!r}")
    if not same(eager, again):
        problems.append(f"second traced result {again!r} != eager {eager!r}")
    if first["translations"] != 1 or first["fallbacks"] != 0:
        problems.append(f"first call: {first}")
    if second["cache_hits"] != first["cache_hits"] + 1 or second["translations"] != 1:
        problems.append(f"second call did not hit the cache: {second}")
    if explained.graph_count != graphs or explained.graph_break_count != 0:
        problems.append(f"explain: {explained.graph_count} graphs (expected {graphs}), {explained.graph_break_count} breaks")
    if problems:
        _failures.append(f"{name}: " + "; ".join(problems))


@st.disable
def changes(fn, *args, change, graphs=1, **kwargs):
    """`change()` alters what `fn`'s translation relied on (a method rebound, an attribute
    shadowed or deleted, a class attribute changed...): traced before and after, `fn` must
    equal eager each time, and the second traced call must have translated again."""
    global _count
    _count += 1
    name = fn.__name__ + " (changed)"
    st.reset()
    try:
        before = st.compile(fn, fullgraph=True)(*args, **kwargs)
        eager_before = fn(*args, **kwargs)
        change()
        eager_after = fn(*args, **kwargs)
        after = st.compile(fn, fullgraph=True)(*args, **kwargs)
        stats = st.stats()
    except Exception as e:
        _failures.append(f"{name}: {type(e).__name__}: {e}")
        return
    problems = []
    if not same(before, eager_before):
        problems.append(f"traced {before!r} != eager {eager_before!r} before the change")
    if not same(after, eager_after):
        problems.append(f"traced {after!r} != eager {eager_after!r} after the change")
    if same(eager_before, eager_after):
        problems.append("the change does not change the result: the case tests nothing")
    if stats["translations"] != 2 or stats["fallbacks"] != 0:
        problems.append(f"expected a second translation: {stats}")
    if problems:
        _failures.append(f"{name}: " + "; ".join(problems))


@st.disable
def finish():
    for f in _failures:
        print("FAIL", f)
    print(f"{_count - len(_failures)} of {_count} cases ok")
    sys.exit(1 if _failures else 0)
