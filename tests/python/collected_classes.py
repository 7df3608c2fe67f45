"""Objects that translations compare by identity are collected as without the plugin: classes
made per call (a factory, a test, `exec`) and their instances, with their `__del__` run; the
entries that guarded them go with them, so a shared code object (`Module.__call__`) does not
reach its recompile limit one dead class at a time. Prints one line per check; `FAIL` marks a
failed one. Run plain, under `--plugin symtrace`, and under `trace_all=1`: the same lines."""
import gc
import types
import weakref

import symtrace as st
import symtrace.nn as nn

failures = []


def check(name, ok, detail=""):
    print(("ok " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    if not ok:
        failures.append(name)


def make_model_class():
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            return self.lin(x).relu() * 2 + 1

    return Block


# A model class made per test, compiled and called: each class (and its model) is collected
# once the test lets go of it, and no call falls back for having met too many classes.
x = st.ones(3, 4)
refs = []
same = True
st.reset()
for i in range(12):
    st.manual_seed(i)
    Block = make_model_class()
    m = Block()
    f = st.compile(m)
    before = st.stats()
    traced = [f(x).tolist() for _ in range(3)]
    after = st.stats()
    eager = m(x).tolist()
    same = same and all(t == eager for t in traced)
    refs.append(weakref.ref(Block))
    del Block, m, f
    gc.collect()
check("a compiled model class made per test equals eager", same)
check(
    "each class made per test is collected",
    all(r() is None for r in refs),
    f"{sum(r() is not None for r in refs)} of {len(refs)} alive",
)
# The twelfth class (past the recompile limit of 8, had the dead classes' entries stayed):
# its calls translate once and hit the cache, none runs as written.
delta = {k: after[k] - before[k] for k in after}
check(
    "the twelfth class made per test is still compiled",
    delta["fallbacks"] == 0 and delta["cache_hits"] >= 2,
    str(delta),
)


# CPython's test_module.test_clear_dict_in_ref_cycle: a class made by exec in a module's
# namespace, its instance's __del__ run when the module is collected.
destroyed = []
m = types.ModuleType("foo")
m.destroyed = destroyed
source = """
class A:
    def __init__(self, l):
        self.l = l
    def __del__(self):
        self.l.append(1)
a = A(destroyed)
"""
exec(source, vars(m))
del m
gc.collect()
check("__del__ of an instance of a class made by exec runs", destroyed == [1], str(destroyed))


# A class made per call, whose method a compiled function calls: the class and the instance
# go; a new class of the same name made afterwards (perhaps at the same address) is not
# taken for the old one.
def make_scaler(k):
    class Scaler:
        factor = k

        def apply(self, t):
            return t * self.factor

    return Scaler


@st.compile
def scale(s, t):
    return s.apply(t) + 1


results = []
dead = []
for k in range(1, 7):
    Scaler = make_scaler(k)
    s = Scaler()
    results.append(scale(s, st.ones(2)).tolist())
    dead.append(weakref.ref(Scaler))
    del Scaler, s
    gc.collect()
check(
    "a class of one name made per call: each call sees its own",
    results == [[k + 1.0, k + 1.0] for k in range(1, 7)],
    str(results),
)
check("each such class is collected", all(r() is None for r in dead))

print("ALL OK" if not failures else "FAILED", len(failures))
