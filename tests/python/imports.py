"""Imports in a function body: a module already in sys.modules is read from there (guarded),
so `import math`, `import os.path` and `from math import sqrt` stay in the graph; a module
replaced in sys.modules, a replaced builtins.__import__ and a module not loaded yet run as
the program runs them. Prints one line per case; `FAIL` marks a failed one."""
import builtins
import sys
import types

import symtrace as st
from case_report import count_problems, report, same

failures = []


def scaled(x):
    import math
    return x * math.sqrt(x.shape[-1])


def from_list(x):
    from math import pi, sqrt
    import os.path
    return x * pi / sqrt(2.0), os.path.sep


def plugin_module(x):
    import demo_plugin_mod
    return demo_plugin_mod.f(x)


def fresh_import(x):
    try:
        import demo_not_there_yet
    except ImportError:
        return x * 3.0
    return demo_not_there_yet.f(x)


def module_with(scale):
    m = types.ModuleType("demo_plugin_mod")
    m.f = lambda x: x * scale
    return m


@st.disable
def check(name, fn, calls, graphs, breaks, translations=None):
    """`calls` is a list of (setup, args); `setup()` runs before both the eager and the
    traced call."""
    problems = []
    compiled = st.compile(fn)
    st.reset()
    for i, (setup, args) in enumerate(calls):
        setup()
        eager = fn(*args)
        setup()
        traced = compiled(*args)
        if not same(traced, eager):
            problems.append(f"call {i}: {traced} != {eager}")
    made = st.stats()["translations"]
    if translations is not None and made != translations:
        problems.append(f"{made} translations (expected {translations})")
    calls[0][0]()
    problems += count_problems(st.explain(fn, *calls[0][1]), graphs, breaks)
    report(name, problems, failures)


x = st.ones(2, 4)
nothing = lambda: None
check("import math in the body", scaled, [(nothing, (x,))] * 3, 1, 0, 1)
check("a from-list and a dotted name", from_list, [(nothing, (x,))] * 3, 1, 0, 1)


def put(scale):
    return lambda: sys.modules.__setitem__("demo_plugin_mod", module_with(scale))


check("a module replaced in sys.modules is read anew",
      plugin_module, [(put(2.0), (x,)), (put(2.0), (x,)), (put(5.0), (x,))], 1, 0, 3)


original_import = builtins.__import__
imported = []


def counting_import(name, *args, **kwargs):
    imported.append(name)
    return original_import(name, *args, **kwargs)


def replace_import():
    builtins.__import__ = counting_import


def restore_import():
    builtins.__import__ = original_import


check("a replaced builtins.__import__ is called",
      scaled, [(restore_import, (x,)), (replace_import, (x,)), (restore_import, (x,))], 1, 0)
restore_import()
if imported.count("math") != 2:
    report("the replaced __import__ ran for the eager and the traced call", [str(imported)],
           failures)
check("a module not loaded yet", fresh_import, [(nothing, (x,))] * 2, 0, 1)
print("ALL OK" if not failures else f"FAILED {failures}", len(failures))
