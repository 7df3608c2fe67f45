"""Exceptions in traced code: `raise` and the handlers of the exception table are simulated.
For each case: the outcome (the result, or the exception's repr and its __context__) and the
events of each call equal eager's; explain() counts the expected graphs and breaks (where the
call does not raise); a second call translates nothing new. Prints one line per case; `FAIL`
marks a failed one."""
import symtrace as st
from case_report import count_problems, report, same

failures = []
events = []
kept = []


class Oops(ValueError):
    """A user exception class without methods of its own: made natively."""


def caught_here(x, fail):
    y = st.tanh(x * 2.0)
    try:
        y = y + 1.0
        if fail:
            raise Oops("bad value", 3)
        y = y * 3.0
    except ValueError as e:
        events.append("caught " + str(e))
        y = y - 1.0
    else:
        events.append("else")
    finally:
        events.append("finally")
    return y * 0.5


def nested_handlers(x):
    y = x * 2.0
    try:
        try:
            raise ValueError("inner")
        except KeyError:
            events.append("wrong handler")
        finally:
            events.append("inner finally")
    except ValueError as e:
        events.append(repr(e))
        y = y + 1.0
    return st.relu(y)


def raised_in_a_loop(x):
    y = x * 1.0
    for i in range(4):
        try:
            if i % 2 == 1:
                raise KeyError(i)
            y = y + 1.0
        except KeyError as e:
            events.append("odd " + repr(e))
            y = y * 2.0
    return y


def escapes(x, fail):
    y = st.tanh(x * 2.0)
    kept.append(y)
    if fail:
        raise KeyError("missing")
    return y + 1.0


def reraised(x):
    y = st.exp(x)
    kept.append(y)
    try:
        raise TypeError("again")
    except TypeError:
        events.append("handled, raised again")
        raise


def chained(x):
    y = st.exp(x)
    kept.append(y)
    try:
        raise KeyError("first")
    except KeyError:
        raise ValueError("second")


def helper_raises(y):
    if y.shape[0] > 0:
        raise ValueError("from the helper")
    return y


def leaves_an_inlined_call(x):
    y = x * 2.0
    try:
        helper_raises(y)
    except ValueError as e:
        events.append(str(e))
        y = y + 5.0
    return y * 1.5


def missing_key(x, table):
    y = x * 2.0
    try:
        scale = table["scale"]
    except KeyError as e:
        events.append(repr(e))
        events.append(e.args)
        scale = 0.5
    return y * scale


def missing_key_not_caught(x, table):
    y = x + 1.0
    kept.append(y)
    try:
        scale = table["scale"]
    except IndexError:
        scale = 3.0
    return y * scale


def missing_attribute(x, cfg):
    y = x * 2.0
    try:
        scale = cfg.scale
    except AttributeError as e:
        # The VM's AttributeError: its name, its object, its message.
        events.append((e.name, e.obj is cfg, str(e), e.args))
        scale = 0.5
    return y * scale


def index_past_the_end(x, items):
    y = x + 1.0
    try:
        first_extra = items[3]
    except IndexError as e:
        events.append(repr(e))
        first_extra = 0.0
    return y * first_extra


class Config:
    pass


def read_scale(table):
    return table["scale"]


def missing_key_in_a_call(x, table):
    # The KeyError leaves the inlined call: the call is rolled back with the guards it made,
    # and the caller breaks there.
    try:
        scale = read_scale(table)
    except KeyError:
        scale = 0.5
    return x * scale


def lookup(table, key, default):
    # As `Mapping.get` does it: the KeyError of a helper caught here, raised `from None`.
    try:
        return read_entry(table, key)
    except KeyError:
        return default


def read_entry(table, key):
    try:
        return table[key]
    except KeyError:
        raise KeyError(key) from None


def caught_from_a_call(x, table):
    # Raised in two nested inlined calls, caught by the caller's caller.
    return x * lookup(table, "scale", 0.5) + lookup(table, "shift", 1.0)


def unmatched_from_a_call(x):
    # The helper's ValueError meets a clause that does not match it and leaves the frame:
    # made again it would lack the helper's frame in its traceback, so the frame runs as
    # written.
    y = x * 2.0
    kept.append(y)
    try:
        helper_raises(y)
    except KeyError:
        y = y + 1.0
    return y


def no_handler_for_a_call(x):
    y = x * 2.0
    kept.append(y)
    helper_raises(y)
    return y


def outcome(f, args):
    events.clear()
    kept.clear()
    try:
        r = f(*args)
    except Exception as e:
        r = f"raised {e!r} from {e.__context__!r}"
    return r, list(events), [k.tolist() for k in kept]


@st.disable
def check(name, fn, args, graphs, breaks):
    """graphs=None: the call raises, and so does explain(): its statistics are read instead
    (explain() starts them afresh): one translation, no frame run as written."""
    eager = outcome(st.disable(fn), args)
    explained = outcome(lambda *a: st.explain(fn, *a), args)
    middle = st.stats()
    # The checker runs untraced (st.disable covers what it calls): compile() traces the call.
    traced, again = outcome(st.compile(fn), args), outcome(st.compile(fn), args)
    after = st.stats()
    problems = []
    for got in (traced, again):
        if not (same(got[0], eager[0]) and got[1:] == eager[1:]):
            problems.append(f"{got} != {eager}")
    if graphs is None:
        if explained != eager:
            problems.append(f"explain: {explained}")
        if (middle["translations"], middle["fallbacks"]) != (1, 0):
            problems.append(f"stats after explain {middle}")
    else:
        problems += count_problems(explained[0], graphs, breaks)
    if after["translations"] != middle["translations"]:
        problems.append(f"calls after explain translated {after['translations'] - middle['translations']} more")
    report(name, problems, failures)


st.manual_seed(0)
x = st.randn(2, 4)
check("raise caught in the same frame (else, finally)", caught_here, (x, False), 1, 0)
check("raise caught in the same frame (except, finally)", caught_here, (x, True), 1, 0)
check("nested handlers: a clause that does not match, an inner finally", nested_handlers, (x,), 1, 0)
check("raised and caught in a loop, unrolled", raised_in_a_loop, (x,), 1, 0)
check("an exception that leaves the frame after tensor work", escapes, (x, True), None, None)
check("the same frame, not raising", escapes, (x, False), 1, 0)
check("a bare raise in the handler", reraised, (x,), None, None)
# An exception that leaves an inlined call under a handler goes to that handler, as Python's
# does, through as many inlined frames as it leaves; under none, the caller breaks at the
# call, which runs as written and raises.
check("an exception leaving an inlined call", leaves_an_inlined_call, (x,), 1, 0)
check("raised from None in an inlined call, caught by its caller's caller", caught_from_a_call, (x, {"scale": 2.0}), 1, 0)


@st.disable
def check_equal(name, fn, args):
    # What runs as written (the frame, or the call after a break): only equal to eager.
    eager = outcome(st.disable(fn), args)
    traced, again = outcome(st.compile(fn), args), outcome(st.compile(fn), args)
    problems = [f"{t} != {eager}" for t in (traced, again) if not (same(t[0], eager[0]) and t[1:] == eager[1:])]
    report(name, problems, failures)


class SelfTruth:
    def __bool__(self):
        return self


class NegativeLength:
    def __len__(self):
        return -1


def bad_truth(x, o):
    # `bool()` of an object whose `__bool__` returns itself, or whose `__len__` is negative:
    # Python raises (TypeError, ValueError), and so does the frame, run as written.
    try:
        return x * 2.0 if bool(o) else x
    except (TypeError, ValueError) as e:
        return type(e).__name__


check_equal("bool() of a __bool__ that returns itself", bad_truth, (x, SelfTruth()))
check_equal("bool() of a negative __len__", bad_truth, (x, NegativeLength()))
check_equal("an exception from an inlined call that no clause matches", unmatched_from_a_call, (x,))
check_equal("an exception from an inlined call under no handler", no_handler_for_a_call, (x,))

# A read of a missing key raises KeyError where the handler sees it, as Python does; the
# key's absence is guarded.
check("a missing key caught as KeyError", missing_key, (x, {}), 1, 0)
check("the same frame, the key present", missing_key, (x, {"scale": 3.0}), 1, 0)
check("a missing key that no handler catches", missing_key_not_caught, (x, {}), None, None)
# So do a read of a missing attribute of the caller's object (AttributeError, with its name
# and obj) and of an index past the end of a list or tuple (IndexError).
check("a missing attribute caught as AttributeError", missing_attribute, (x, Config()), 1, 0)
check("an index past the end caught as IndexError", index_past_the_end, (x, [1.0, 2.0]), 1, 0)
check("the same frame, a tuple", index_past_the_end, (x, (1.0,)), 1, 0)
check("the same frame, the index in range", index_past_the_end, (x, [1.0, 2.0, 3.0, 4.0]), 1, 0)


@st.disable
def check_alternating():
    # One translation per case (key absent, key present), each guarded: alternating calls
    # give what eager gives.
    tables = [{}, {"scale": 3.0}, {"other": 1.0}, {"scale": -1.0}]
    problems = []
    for fn in (missing_key, missing_key_in_a_call):
        eager = [outcome(st.disable(fn), (x, t)) for t in tables]
        compiled = st.compile(fn)
        traced = [outcome(compiled, (x, t)) for t in tables]
        problems += [f"{t} != {e}" for t, e in zip(traced, eager)
                     if not (same(t[0], e[0]) and t[1:] == e[1:])]
    report("a missing key, then present, then missing: guarded", problems, failures)


check_alternating()


@st.disable
def check_chained():
    # Raised in an except block, ValueError would chain KeyError as its __context__; made
    # again by the replacement it would not: the frame runs as written, and says why.
    eager = outcome(st.disable(chained), (x,))
    traced = outcome(st.compile(chained), (x,))
    problems = [] if traced == eager else [f"{traced} != {eager}"]
    report("an exception raised while another is handled runs as written", problems, failures)


check_chained()


class Names(__import__("logging").Handler):
    """The function each log record names (`%(funcName)s`)."""

    def __init__(self):
        super().__init__()
        self.names = []

    def emit(self, record):
        self.names.append(record.funcName)


names = Names()
logger = __import__("logging").getLogger("symtrace-test-names")
logger.addHandler(names)
logger.setLevel("INFO")


def after_a_break(x, fail):
    y = x * 2.0
    st.graph_break()
    logger.info("after the break")
    y = y + 1.0
    if fail:
        raise ValueError("raised after the break")
    return y


@st.disable
def check_named_after_a_break():
    # Code after a break runs in a resume function, whose co_name is the program's: a
    # traceback's innermost entry and a log record name the program's function.
    import traceback

    def run(fn):
        names.names.clear()
        try:
            fn(x, True)
            raised = None
        except ValueError as e:
            entry = traceback.extract_tb(e.__traceback__)[-1]
            raised = (entry.name, entry.lineno, entry.line)
        return raised, list(names.names), same(fn(x, False), after_a_break(x, False))

    eager = run(st.disable(after_a_break))
    traced = run(st.compile(after_a_break))
    problems = [] if traced == eager else [f"{traced} != {eager}"]
    report("code after a break names the program's function in tracebacks and logs", problems,
           failures)


check_named_after_a_break()


def unbound_cell_after_a_break(x, early):
    y = x * 2.0
    st.graph_break()
    if early:
        y = y + late  # a cell, read before it is bound: UnboundLocalError
    late = y * 3.0

    def later():
        return late
    return later()


@st.disable
def check_unbound_cell():
    # After a break the frame's cells are the resume function's free variables: one read
    # unbound raises what the program raises (UnboundLocalError, not NameError).
    def run(fn):
        out = []
        for early in (False, True, False):
            try:
                out.append(fn(x, early).tolist())
            except Exception as e:
                out.append((type(e).__name__, str(e)))
        return out

    eager = run(st.disable(unbound_cell_after_a_break))
    traced = run(st.compile(unbound_cell_after_a_break))
    problems = [] if traced == eager else [f"{traced} != {eager}"]
    report("a cell read unbound after a break raises UnboundLocalError", problems, failures)


check_unbound_cell()
print("ALL OK" if not failures else f"FAILED {failures}", len(failures))
