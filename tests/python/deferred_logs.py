"""Log records in traced code (`logger.info("mean %.4f", y.mean())`, `logging.warning`)
stay in the graph: the replacement logs after the graph, in program order with the other
side effects, naming the function and line the program's record names (of the translated
frame, of its caller's call into an inlined helper that logs with stacklevel=2, of the
translated frame from a resume function after a graph break, of an inlined function's own
frame, named explicitly), with the arguments as they were at the call (a tensor updated in
place later logs its value then). A disabled level costs nothing; levels changed between
calls are followed. Where that cannot be proven (a logger whose findCaller is its own, under
a handler, with exc_info) it breaks.
For each case: the results and the log text (level, function, line, message), eager and
traced, are equal, and explain() counts the expected graphs and breaks. Prints one line
per case; `FAIL` marks a failed one."""
import io
import logging

import symtrace as st
from case_report import count_problems, report, plain

failures = []

stream = io.StringIO()
handler = logging.StreamHandler(stream)
handler.setFormatter(logging.Formatter("%(levelname)s %(funcName)s:%(lineno)d %(message)s"))
log = logging.getLogger("symtrace-test-logs")
log.addHandler(handler)
log.setLevel(logging.INFO)
log.propagate = False
root_stream = io.StringIO()
root_handler = logging.StreamHandler(root_stream)
root_handler.setFormatter(logging.Formatter("root %(levelname)s %(funcName)s:%(lineno)d %(message)s"))
logging.getLogger().addHandler(root_handler)
logging.getLogger().setLevel(logging.WARNING)


def step(x, n):
    y = x * 2.0
    log.info("step %d mean %.4f", n, y.mean())
    y.add_(1.0)
    log.debug("hidden at %d", n)
    log.warning("total %s of %s", y.sum(), tuple(y.shape))
    return y


def shapes(y, n):
    log.info("helper sees %s at %d", tuple(y.shape), n, stacklevel=2)
    return y * 2.0


def calls_a_helper(x, n):
    z = shapes(x + 1.0, n)
    logging.warning("through the root logger %d", n)
    return z.relu()


def own_frame(y):
    log.info("the helper's own line")
    return y + 1.0


def calls_one_logging_itself(x, n):
    return own_frame(x * n)


def deeper(y, n):
    # An inlined frame named from two calls deep (stacklevel=2 names `own_frame_twice`).
    log.warning("deeper at %d", n, stacklevel=2)
    return y * 2.0


def own_frame_twice(y, n):
    log.info("first own line %d", n)
    return deeper(y, n) + 1.0


def calls_helpers_that_log(x, n):
    return own_frame_twice(own_frame(x), n)


class CallerFinder(logging.Logger):
    def findCaller(self, stack_info=False, stacklevel=1):
        return "custom.py", 7, "custom", None


custom = CallerFinder("symtrace-test-custom")
custom.addHandler(handler)
custom.setLevel(logging.INFO)
custom.propagate = False


def logs_through_custom(y):
    custom.info("custom finder")
    return y - 1.0


def calls_one_logging_through_custom(x, n):
    return logs_through_custom(x * n)


def after_a_break(x, n):
    y = x * 2.0
    st.graph_break()
    log.info("after a break %d", n)
    return y + n


def under_handler(x, n):
    try:
        log.info("in a try %d", n)
        y = x + n
    except ValueError:
        y = x - n
    return y * 2.0


def with_exc_info(x, n):
    log.info("with the exception %d", n, exc_info=True)
    return x * n


cold = logging.getLogger("symtrace-test-cold-levels")
cold.addHandler(handler)
cold.propagate = False


def first_checks(x, n):
    y = x * 2.0
    cold.debug("hidden at %d", n)
    cold.info("shown at %d", n)
    return y + n


def levels(x, n):
    y = x - n
    log.info("info at %d", n)
    log.error("error at %d", n)
    return y


@st.disable
def check(name, fn, graphs, breaks, between=None, calls=4):
    def run(call):
        stream.seek(0)
        stream.truncate()
        root_stream.seek(0)
        root_stream.truncate()
        results = []
        for n in range(calls):
            if between:
                between(n)
            results.append(plain(call(st.ones(2, 2), n)))
        return results, stream.getvalue(), root_stream.getvalue()

    eager = run(st.disable(fn))
    traced = run(st.compile(fn))
    if between:
        between(1)
    problems = [] if traced == eager else [f"traced {traced} != eager {eager}"]
    if graphs is not None:
        problems += count_problems(st.explain(fn, st.ones(2, 2), 1), graphs, breaks)
    log.setLevel(logging.INFO)
    report(name, problems, failures)


check("logger.info and warning with a tensor's value, debug disabled", step, 1, 0)
check("a helper logging its caller's line (stacklevel=2), the root logger", calls_a_helper, 1, 0)
check("a record after a graph break names the program's function", after_a_break, 2, 1)
# A level changed empties the logger's cache: it is filled ahead of the first check after.
check("levels changed between calls", levels, None, None, calls=8,
      between=lambda n: log.setLevel([logging.INFO, logging.ERROR, logging.CRITICAL][n // 3]))


@st.disable
def first_check_of_a_level():
    """A logger's first check of a level (its cache empty: a logger never used, or any after
    a level changed) computes the answer under `logging._lock`; filled ahead, the frame is
    one graph from its first call on."""
    def run(call):
        cold.setLevel(logging.INFO)  # empties every logger's level cache
        stream.seek(0)
        stream.truncate()
        return [plain(call(st.ones(2, 2), n)) for n in range(3)], stream.getvalue()

    eager = run(st.disable(first_checks))
    st.reset()
    traced = run(st.compile(first_checks))
    stats = st.stats()
    problems = [] if traced == eager else [f"traced {traced} != eager {eager}"]
    # The first call's translation and one for `n` changing: no function resumes after a
    # break (with the check not filled ahead: 4).
    if (stats["translations"], stats["fallbacks"]) != (2, 0):
        problems.append(f"{stats} (two translations, nothing as written, expected)")
    report("a logger's first check of a level, debug disabled and info enabled", problems,
           failures)


first_check_of_a_level()
check("a record naming an inlined function's own line, named explicitly",
      calls_one_logging_itself, 1, 0)
check("records naming inlined frames one and two calls deep", calls_helpers_that_log, 1, 0)
# Runs as written: the logger's findCaller would not be asked, the replay could raise where
# the handler does not see it, the exception is read at the call.
check("a record of a logger with its own findCaller, from an inlined frame (runs as written)",
      calls_one_logging_through_custom, None, None)
check("a record under a handler (runs as written)", under_handler, None, None)
check("a record with exc_info (runs as written)", with_exc_info, None, None)

print("ALL OK" if not failures else f"FAILED {failures}", len(failures))
