"""warnings.warn() in traced code stays in the graph: the replacement warns after the graph,
in program order with the other side effects, naming the line the program's warning names
(of the translated frame, of its caller through stacklevel=2, of the translated frame's call
into an inlined function that warns with stacklevel=2, of the caller from a resume function
after a graph break, of an inlined function's own frame, in this module or another, named
explicitly with that module's registry), through the filters in force then.
Where that cannot be proven (a generator's frame among those counted, under a handler, with
showwarning replaced, to a stderr written in Python) it breaks. For each case:
the results and the warnings (text, category, file, line), eager and traced, are equal,
and explain() counts the expected graphs and breaks. Prints one line per case; `FAIL` marks
a failed one."""
import io
import sys
import warnings

import symtrace as st
import symtrace.nn as nn
import warning_helpers
from case_report import count_problems, report, plain

failures = []


def flagged(x, n, flag):
    y = x + 1.0
    if flag:
        warnings.warn("flag is deprecated", DeprecationWarning)
    if n == 3:
        warnings.warn(f"n={n}", category=FutureWarning, stacklevel=1)
    return (y * n).relu()


def names_its_caller(x, n):
    y = x * 2.0
    if n > 1:
        warnings.warn("called with n > 1", stacklevel=2)
    return y + n


def check_n(x, n):
    if n > 2:
        warnings.warn(f"n={n} is large", UserWarning, 2)
    return x * n


def calls_a_checker(x, n):
    y = x - 1.0
    y = check_n(y, n)
    return y.sum()


def warns_in_own_frame(x, n):
    warnings.warn(f"own frame {n}")
    return x + n


def calls_one_warning_itself(x, n):
    y = x * 3.0
    y = warns_in_own_frame(y, n)
    return y.exp()


def uses_helpers(x, n):
    # Warnings naming frames of inlined calls only: the helper's own (another module's
    # globals), the caller's line through stacklevel=2, a frame between two inlined ones.
    y = warning_helpers.scaled(x, n)
    y = warning_helpers.checked(y)
    return warning_helpers.twice_checked(y)


class WarnsInForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x, n):
        if n > 1:
            warnings.warn(f"n={n} in forward", FutureWarning)
        return self.fc(x) * n


warns_in_forward = WarnsInForward()


def calls_a_module(x, n):
    return warns_in_forward(x, n).sum()


def warns_from_a_generator(n):
    for i in range(n):
        warnings.warn(f"item {i}")
        yield i


def consumes_a_warning_generator(x, n):
    for i in warns_from_a_generator(n):
        x = x + i
    return x


def warns_after_a_break(x, n):
    # The warning is in the resume function, which the replacement calls: one frame more
    # between it and the caller it names than in the program.
    y = x * 2.0
    st.graph_break()
    warnings.warn(f"after a break {n}", stacklevel=2)
    return y + n


def under_handler(x, n):
    try:
        warnings.warn("in a try")
        y = x + n
    except UserWarning:
        y = x - n
    return y * 2.0


def error_between_effects(x, log):
    log.append("before")
    warnings.warn("raised when replayed")
    log.append("after")
    return x * 2.0


@st.disable
def outcome(fn, args_of, calls, mode):
    results = []
    err = io.StringIO()
    saved = sys.stderr
    try:
        with warnings.catch_warnings(record=True) as log:
            warnings.simplefilter(mode)
            for i in range(calls):
                args = args_of(i)
                try:
                    results.append(plain(fn(*args)))
                except Warning as e:
                    results.append(("raised", type(e).__name__, str(e)))
                results.append([plain(a) for a in args if isinstance(a, list)])
        shown = [(str(w.message), w.category.__name__, w.filename.split("/")[-1], w.lineno)
                 for w in log]
        # The text a warning writes to stderr, with the line of source it shows.
        sys.stderr = err
        with warnings.catch_warnings():
            warnings.simplefilter(mode)
            try:
                fn(*args_of(calls))
            except Warning:
                pass
    finally:
        sys.stderr = saved
    return results, shown, err.getvalue()


@st.disable
def check(name, fn, args_of, graphs, breaks, calls=4, mode="always", most=None):
    eager = outcome(fn, args_of, calls, mode)
    before = st.stats()["translations"]
    traced = outcome(st.compile(fn), args_of, calls, mode)
    made = st.stats()["translations"] - before
    problems = [] if traced == eager else [f"traced {traced} != eager {eager}"]
    if not eager[1] and mode != "error" and mode != "ignore":
        problems.append("no warning was made: the case tests nothing")
    if most is not None and made > most:
        problems.append(f"{made} translations (at most {most})")
    saved = sys.stderr
    sys.stderr = io.StringIO()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if graphs is not None:
                problems += count_problems(st.explain(fn, *args_of(calls)), graphs, breaks)
    finally:
        sys.stderr = saved
    report(name, problems, failures)


x = st.tensor([[1.0, -2.0], [3.0, 4.0]])


def caller(fn):
    # A frame of the user's between the test and the traced function, for stacklevel=2.
    return lambda *args: fn(*args)


check("a forward pass warning under a flag, with a category", flagged,
      lambda i: (x, i, i % 2 == 1), 1, 0, most=4)
check("a warning naming the caller's line (stacklevel=2)", caller(names_its_caller),
      lambda i: (x, i), None, None)
check("a warning naming the caller's line, traced alone", names_its_caller,
      lambda i: (x, i), 1, 0)
check("a warning in an inlined call naming the translated frame's line", calls_a_checker,
      lambda i: (x, i), 1, 0)
for mode in ["default", "once", "module", "ignore", "error"]:
    check(f"the {mode!r} filter acts as when run", calls_a_checker, lambda i: (x, i % 2 + 2),
          1, 0, mode=mode)
check("a warning naming an inlined function's own frame, named explicitly",
      calls_one_warning_itself, lambda i: (x, i), 1, 0)
for mode in ["always", "default", "once", "module", "ignore", "error"]:
    check(f"warnings of another module's inlined functions under {mode!r}", uses_helpers,
          lambda i: (x, i % 3), 1, 0, mode=mode)
check("a module's forward that warns, in one graph", calls_a_module, lambda i: (x, i), 1, 0)
check("a warning from a generator's frame breaks", consumes_a_warning_generator,
      lambda i: (x, i % 2 + 1), 0, 2)
check("a warning after a graph break naming the caller's line", warns_after_a_break,
      lambda i: (x, i), 2, 1)
check("a warning under a handler breaks", under_handler, lambda i: (x, i), 1, 1)
check("an error filter raises from the replay, the effects before it made",
      error_between_effects, lambda i: (x, []), 1, 0, mode="error")


def shows(message, category, filename, lineno, file=None, line=None):
    print("shown by the program:", message, lineno)


warnings.showwarning = shows
check("a warning with showwarning replaced breaks", names_its_caller, lambda i: (x, i), 2, 1)
warnings.showwarning = warnings._showwarning_orig
print("ALL OK" if not failures else f"FAILED {failures}", len(failures))
