"""Side effects in traced functions: mutations of what existed before the call are recorded
by the simulation and replayed by the replacement code, in program order, so that after the
call everything is as after an eager call: list appends, dict and list item stores and
deletes (slices too), dict.update, attribute stores and deletes, global stores and deletes, closure cell
stores, also before a graph break, and reads of mutated state. For each case: eager and traced start from equal fresh state; the results
and the state afterwards are equal; explain() counts the expected graphs and breaks; a second
call translates nothing new. Prints one line per case; `FAIL` marks a failed one."""
import sys
import types

import symtrace as st
from case_report import count_problems, report

failures = []


class Model:
    def __init__(self):
        self.w = st.ones(3)
        self.steps = 0


class Holder:
    def __init__(self, hist=None):
        self.hist = [] if hist is None else hist
        self.sizes = []
        self.tag = "old"


counter = 0
doomed = "here"


def appends(x, log):
    y = x * 2.0
    log.append(y)
    log.extend([y + 1.0, 3])
    log.insert(0, "first")
    return y * 3.0


def item_stores(x, table, row):
    y = x + 1.0
    table["y"] = y
    table["n"] = 3
    row[0] = y * 2.0
    row[-1] = "last"
    return y.sum()


def attribute_stores(x, m):
    y = x @ m.w
    m.last = y
    m.steps = m.steps + 1
    return y * 2.0


def global_stores(x):
    global counter, doomed
    y = x - 1.0
    counter = counter + 10
    del doomed
    return y * y


def make_accumulator():
    total = st.zeros(3)

    def accumulate(x):
        nonlocal total
        total = total + x
        return total * 1.0

    return accumulate


def effects_then_break(x, log, m):
    y = x * 4.0
    log.append(y)
    m.tag = "set"
    st.graph_break()
    print("  effects_then_break sees", log)
    return y + 1.0


def read_after_mutation(x, log):
    y = x * 5.0
    log.append(y)
    n = len(log)
    return y * n


def stale_value(x, m):
    y = x * 6.0
    old = m.steps
    m.steps = old + 1
    return y, old


def aliased(x, a, b):
    a.append(x * 7.0)
    return len(b)


def deletes_and_update(x, table, row, m):
    y = x * 8.0 * table.pop("scale", 1.0)
    del table["gone"]
    table.update({"y": y}, n=2)
    del row[0]
    del m.steps
    return y + 1.0


def update_then_read(x, table, more):
    # Each entry of an update is a store of its key, which the reads after it follow.
    table.update(more, n=2)
    table.update(y=x * table["n"])
    return table["y"] + table.get("m", 0.5), table.get("n"), "keep" in table


def slice_stores(x, row):
    y = x * 10.0
    row[1:3] = [y, "mid", "extra"]
    del row[-1:]
    del row[0]
    return y - 1.0


def delete_missing(x, table):
    y = x * 9.0
    del table["missing"]  # KeyError when replayed, as when run
    return y


def history(x, m):
    # A module-style ring buffer: the list is changed, then read, in one graph.
    y = x * 11.0
    m.hist.append(y)
    if len(m.hist) > 2:
        m.hist.pop(0)
    m.sizes += [len(m.hist)]
    return st.stack(m.hist).sum(0) * m.sizes[-1]


def list_methods(x, row):
    y = x * 12.0
    row.remove(2)
    row.insert(1, "in")
    row.reverse()
    row[1:3] = ["mid"]
    del row[::2]
    return y * len(row), row.count(1), row.index("mid"), row == ["mid"]


def sorted_in_place(x, nums):
    nums.sort()
    nums.append(nums[0])
    nums.sort(reverse=True)
    return x * nums[-1]


def iterate_while_appending(x, row):
    for v in row:
        if v == 1:
            row.append(5)
        x = x + v
    return x


def moved_then_stored(x, m):
    # The popped value is read before the list is written back, and stored after.
    m.last = m.hist.pop(0)
    old = m.tag
    m.tag = "new"
    return x * 13.0, old


def rebound_then_changed(x, m):
    # `old` is the list `m.hist` was: the append goes to it, not to the new list.
    old = m.hist
    m.hist = ["new"]
    old.append(x * 14.0)
    return len(old)


def plain(v):
    """Tensors as lists, objects as their dicts, so that states compare by value."""
    if isinstance(v, st.Tensor):
        return ("tensor", v.tolist())
    if isinstance(v, (list, tuple)):
        return [plain(i) for i in v]
    if isinstance(v, dict):
        return {k: plain(i) for k, i in v.items()}
    if isinstance(v, (Model, Holder)):
        return plain(vars(v))
    return v


# Another module, whose functions store its own globals: a step counter a model's helper
# bumps, a value it keeps and drops.
steps = types.ModuleType("steps")
exec(
    """
COUNT = 0
def bump(k=1):
    global COUNT
    COUNT += k
    return COUNT
def keep(v):
    global LAST
    LAST = v
def drop():
    global LAST
    del LAST
""",
    steps.__dict__,
)
sys.modules["steps"] = steps


def other_module_globals(x):
    before = steps.COUNT
    n = steps.bump()
    after = steps.COUNT
    steps.keep(x * 2.0)
    kept = steps.LAST + 1.0
    steps.drop()
    return x * n + steps.bump(2), before, after, kept, hasattr(steps, "LAST")


def module_attribute_stores(x, k):
    # Stores into the caller's module as attributes (a config's knobs): replayed, and seen by
    # the reads after them, as attributes and as the globals of the module's functions.
    steps.COUNT = k
    steps.SCALE = 0.5
    n = steps.bump()
    return x * steps.SCALE * n, steps.COUNT, steps.LIMIT if hasattr(steps, "LIMIT") else None


def global_state():
    return {"counter": counter, "doomed": globals().get("doomed", "<deleted>"),
            "steps": (steps.COUNT, hasattr(steps, "LAST"), getattr(steps, "SCALE", None))}


def reset_globals():
    global counter, doomed
    counter, doomed = 0, "here"
    steps.COUNT = 0
    steps.__dict__.pop("SCALE", None)


@st.disable
def check(name, fn, make_args, graphs, breaks, state_of=None):
    """`make_args()` gives fresh arguments; `state_of(args)` what the call may have changed."""
    state_of = state_of or (lambda args: args[1:])

    def run(call):
        reset_globals()
        args = make_args()
        result = call(*args)
        return plain(result), plain(state_of(args)), global_state()

    eager = run(st.disable(fn))
    reset_globals()
    e = st.explain(fn, *make_args())
    # The checker runs untraced (st.disable covers what it calls): compile() traces the call.
    traced = run(st.compile(fn))
    before = st.stats()["translations"]
    again = run(st.compile(fn))
    after = st.stats()["translations"]
    problems = []
    if traced != eager:
        problems.append(f"traced {traced} != eager {eager}")
    if again != eager:
        problems.append(f"second call {again} != eager {eager}")
    if graphs is not None:
        problems += count_problems(e, graphs, breaks)
    if after != before:
        problems.append(f"a second call translated {after - before} more")
    report(name, problems, failures)


def metrics_then_items(x, metrics):
    # A caller's dict read whole after the call stored into it: its entries as they are
    # now (a stored key keeps its place, a new one goes last), iterated, measured, listed.
    metrics.setdefault("seen", []).append(1)
    metrics["loss"] = x.sum()
    total = x * 0.0
    for k, v in metrics.items():
        if k == "loss":
            total = total + v
    # Sorted by key: the keys decide, the values (a tensor among them) are not compared.
    last = sorted(metrics.items(), reverse=True)[-1][1]
    return total, len(metrics), list(metrics), sorted(metrics.keys()), last


def delete_and_store_again(x, table):
    del table["a"]
    table["a"] = x * 2.0
    table["c"] = 3
    return x * len(table), list(table.items())


def counts_by_size(x, counts):
    # A table keyed by ints (a count per batch size, per layer number) read whole after the
    # call stored into it: the stored key keeps its place, a new one goes last, a deleted
    # one is gone.
    counts[x.shape[0]] = counts.get(x.shape[0], 0) + 1
    counts[(x.shape[0], 2)] = "pair"
    counts.pop(7, None)
    return x * len(counts), dict(counts), sorted(k for k in counts if isinstance(k, int))


def store_then_break(x, table):
    table["step"] = table.get("step", 0) + 1
    total = x * 2.0
    for k in table:
        total = (total * 1.5 + 1.0).relu()
        st.graph_break()
        print("  store_then_break at", k)
    return total


def sgd_step(x, params, grads):
    # Stores of the keys a dict holds, while its keys are iterated: its size and order stay
    # (Python raises only where the size changes).
    for k in params:
        params[k] = params[k] - 0.5 * grads[k] * x.sum()
    return len(params)


def scale_entries(x, table):
    # Each entry's own key stored while the items are iterated: an entry already yielded.
    for k, v in table.items():
        table[k] = v * x
    return x


def store_ahead(x, table):
    # A later entry's value stored while the items are iterated: the loop reads the new
    # value (runs as written: the simulation reads the items at once).
    out = []
    for k, v in table.items():
        out.append(v * x)
        table["b"] = x * 10.0
    return out


def finalizer_tables():
    # Counts that clear their table when dropped: a store over one changes the dict's size
    # (Python raises in the loop that iterates it; CPython's test_dict has this case).
    table = {}

    class ClearsOnDrop(int):
        def __del__(self):
            table.clear()

    table.update(a=ClearsOnDrop(1), b=ClearsOnDrop(2), c=ClearsOnDrop(3))
    return table


def store_over_a_finalizer(x, table):
    y = x * 3.0
    try:
        for k, v in table.items():
            if k == "b":
                table["b"] = None
    except RuntimeError as exc:
        return y * 2.0, str(exc)
    return y, "no error"


def counted(fn):
    # A decorator that counts the calls on its wrapper (`wrapper.calls += 1`).
    def wrapper(*args, **kwargs):
        wrapper.calls += 1
        wrapper.last = args[0].shape[0]
        return fn(*args, **kwargs)

    wrapper.calls = 0
    return wrapper


@counted
def doubled(x):
    return x * 2.0


def fresh_count():
    doubled.calls = 0
    return []


def counted_calls(x, seen):
    # Stores into a function's attributes, read back in the call: replayed after the graph.
    y = doubled(x) + doubled(x) * doubled.calls
    seen.append((doubled.calls, doubled.last, hasattr(doubled, "last"), hasattr(doubled, "gone")))
    return y


def stores_across_a_break(x, table):
    # The loop split at the break: each body stores its key, the loop itself runs as written.
    total = x * 2.0
    for k in table:
        table[k] = table[k] + total
        total = (total * 1.5 + 1.0).relu()
        st.graph_break()
    return total


st.manual_seed(0)
x = st.randn(3)


def fresh_count_args():
    return x, fresh_count()
check("list.append, extend and insert", appends, lambda: (x, ["old"]), 1, 0)
check("dict and list item stores", item_stores, lambda: (x, {"keep": 1}, [0, 1, 2]), 1, 0)
check("an int-keyed table read whole after stores", counts_by_size, lambda: (x, {7: 1, 3: 5, 1: 2}), 1, 0)
check("attribute stores", attribute_stores, lambda: (x, Model()), 1, 0)
check("global stores and deletes", global_stores, lambda: (x,), 1, 0, state_of=lambda args: None)
check("another module's globals stored by its functions, read as its attributes",
      other_module_globals, lambda: (x,), 1, 0, state_of=lambda args: None)
# A closure keeps its running total across calls: eager and traced closures, three calls each.
acc_eager, acc_traced = make_accumulator(), make_accumulator()
eager_totals = [st.disable(acc_eager)(x).tolist() for _ in range(3)]
traced_totals = [acc_traced(x).tolist() for _ in range(2)]
before = st.stats()["translations"]
traced_totals.append(acc_traced(x).tolist())
again = st.stats()["translations"] - before
e = st.explain(make_accumulator(), x)
cell_ok = eager_totals == traced_totals and (e.graph_count, e.graph_break_count) == (1, 0) and again == 0
print(("ok " if cell_ok else "FAIL ") + f"a closure cell store: {traced_totals} vs {eager_totals}, {e.graph_count} graph, {e.graph_break_count} breaks")
if not cell_ok:
    failures.append("a closure cell store")
# The print after the effects sees them: they are replayed before the breaking call runs.
check("stores into a module's attributes, read by its functions", module_attribute_stores,
      lambda: (x, 3), 1, 0, state_of=lambda args: None)
check("effects, then a graph break", effects_then_break, lambda: (x, [], Model()), 2, 1)
check("a read of a mutated list", read_after_mutation, lambda: (x, [1]), None, None)
check("a value read before its store", stale_value, lambda: (x, Model()), None, None)
check("two arguments that are one list", aliased, lambda: (lambda s: (x, s, s))([]), None, None)
check("two distinct lists", aliased, lambda: (x, [], [9]), None, None)
check("slice stores and deletes", slice_stores, lambda: (x, [0, 1, 2, 3]), 1, 0)
check("item and attribute deletes, dict.update and dict.pop", deletes_and_update, lambda: (x, {"gone": 1, "keep": 2, "scale": 0.5}, [0, 1, 2], Model()), 1, 0,
      state_of=lambda args: args[1:])
check("a caller's dict updated, then read by key", update_then_read, lambda: (x, {"keep": 1, "n": 0}, {"m": 3.0}), 1, 0,
      state_of=lambda args: args[1:])
check("a caller's list changed, then read", history, lambda: (x, Holder([x, x + 1.0])), 1, 0)
check("list methods on a caller's list", list_methods, lambda: (x, [1, 2, 3, 2]), 1, 0)
check("a caller's list sorted in place", sorted_in_place, lambda: (x, [3, 1, 2]), 1, 0)
check("a caller's list appended to while iterated", iterate_while_appending, lambda: (x, [0, 1]), 1, 0)
check("values read before the effects that change them", moved_then_stored, lambda: (x, Holder([1, 2])), 1, 0)
check("a list changed after its name was rebound", rebound_then_changed, lambda: (x, Holder([0])), None, None)
check("a caller's dict stored into, then read whole", metrics_then_items, lambda: (x, {"seen": [0], "lr": 0.1}), 1, 0)
check("a key deleted and stored again goes last", delete_and_store_again, lambda: (x, {"a": 1, "b": 2}), 1, 0)
check("a dict stored into, then iterated across a graph break", store_then_break, lambda: (x, {"a": 1}), 2, 2)
check("a dict's keys stored while its keys are iterated", sgd_step, lambda: (x, {"w": x * 1.0, "b": x[:1] * 1.0}, {"w": x + 1.0, "b": x[:1] - 1.0}), 1, 0)
check("a dict's entries stored while its items are iterated", scale_entries, lambda: (x, {"a": x + 1.0, "b": x - 1.0}), 1, 0)
check("a later entry stored while the items are iterated", store_ahead, lambda: (x, {"a": x + 1.0, "b": x - 1.0, "c": x}), 0, 1)
check("a function's attributes stored and read", counted_calls, fresh_count_args, 1, 0, lambda args: (args[1], doubled.calls))
check("a store over a value whose drop changes the dict", store_over_a_finalizer, lambda: (x, finalizer_tables()), None, None, lambda args: len(args[1]))
check("a dict's keys stored while iterated across a graph break", stores_across_a_break, lambda: (x, {"a": x + 1.0, "b": x - 1.0}), 3, 3)


@st.disable
def check_aliasing_later():
    # Two distinct lists on the first calls, one list passed twice on the next: the guards
    # tell the calls apart, and each gives what the eager call gives.
    def calls(fn):
        out = []
        for same in (False, False, True, True, False):
            a = [x]
            b = a if same else [x, x]
            out.append((plain(fn(x, a, b)), plain(a), plain(b)))
        return out

    def appends_then_reads(x, a, b):
        a.append(x * 15.0)
        return st.stack(b).sum(0) * len(b)

    eager = calls(st.disable(appends_then_reads))
    traced = calls(st.compile(appends_then_reads))
    problems = [] if traced == eager else [f"{traced} != {eager}"]

    # The same with dicts: a store into one, a whole read of the other.
    def dict_calls(fn):
        out = []
        for same in (False, False, True, True, False):
            a = {"k": 1}
            b = a if same else {"k": 1, "j": 2}
            out.append((plain(fn(x, a, b)), plain(a), plain(b)))
        return out

    def stores_then_reads_whole(x, a, b):
        a["new"] = 5
        return x * len(b), list(b.items())

    eager = dict_calls(st.disable(stores_then_reads_whole))
    traced = dict_calls(st.compile(stores_then_reads_whole))
    problems += [] if traced == eager else [f"{traced} != {eager}"]
    report("two lists (two dicts) that are one on a later call", problems, failures)


check_aliasing_later()


@st.disable
def check_missing():
    # The delete raises when replayed, after the graph ran: the same KeyError, and the
    # dictionary unchanged, as when run.
    def outcome(call):
        table = {"keep": 1}
        try:
            r = call(x, table)
        except KeyError as e:
            r = "raised " + repr(e)
        return r, table
    eager = outcome(st.disable(delete_missing))
    traced = outcome(st.compile(delete_missing))
    again = outcome(st.compile(delete_missing))
    problems = [] if traced == eager == again and eager[0].startswith("raised") else [f"{traced} {again} != {eager}"]
    report("a delete of a missing key raises when replayed", problems, failures)


check_missing()
print("ALL OK" if not failures else f"FAILED {failures}", len(failures))
