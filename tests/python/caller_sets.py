"""Sets of the caller's (a module's allowed names, a layer's skip list, milestones of a
schedule, a record of the sizes seen): read by membership, length, truth, iteration and
set methods, and changed by add, discard, update and clear, replayed after the graph on
the same set. Each case runs as written, then compiled, from the same state: every result
and the sets afterwards (their elements in order, and which names share one set) are equal,
and the compiled calls translate at most the number given (with the frame run as written
where the simulation cannot follow: a read after the call changed a set, an in-place
operator, elements compared by a user's `__eq__`). Prints one line per case; `FAIL` marks a
failed one."""
import symtrace as st
from case_report import eager_then_traced

failures = []
ACTIVATIONS = {"relu", "gelu", "silu"}
PAIRS = frozenset({("a", 1), ("b", 2), None, b"raw"})


class Layers:
    def __init__(self):
        self.skip = {1, 3}
        self.milestones = {4, 7}
        self.seen = set()
        self.alias = self.seen
        self.step = 0
        self.lr = 1.0


state = Layers()


def reset():
    global state
    state = Layers()
    ACTIVATIONS.clear()
    ACTIVATIONS.update(["relu", "gelu", "silu"])


def snapshot():
    return ([list(state.skip), list(state.milestones), list(state.seen), state.alias is state.seen,
             state.step, state.lr, list(ACTIVATIONS), list(CONTAINS_CALLS)])


def allowed(x, act):
    if act not in ACTIVATIONS:
        return x * 0.0
    return x + len(ACTIVATIONS)


def layer_loop(x, depth):
    for i in range(depth):
        if i in state.skip:
            continue
        x = x * 2.0 + i
    return x


def schedule(x):
    state.step += 1
    if state.step in state.milestones:
        state.lr = state.lr * 0.5
    return x * state.lr


def milestones_of_a_sum(x, n):
    if n + 1 in state.milestones:
        return x - 1.0
    return x + 1.0


def record_sizes(x):
    n = x.shape[0]
    state.seen.add(n)
    state.seen.update([n + 100, n + 200])
    state.seen.discard(101)
    return x.sum()


def changing_key(x, n):
    state.seen.add(n)
    state.seen.discard(n - 2)
    return x * n


def iterate_and_methods(x):
    total = 0
    for k in state.skip:
        total = total * 10 + k
    u = state.skip.union([9])
    return (x + total, sorted(state.skip | {0}), sorted(u), state.skip.issubset({1, 3, 5}),
            bool(state.skip), len(state.skip), ("b", 2) in PAIRS, None in PAIRS)


def compared(x):
    return x + (state.skip == {1, 3}) + (state.skip <= {1, 3, 5}) + (ACTIVATIONS != state.skip)


def read_after_a_change(x, n):
    state.seen.add(n)
    return x + len(state.alias)


def in_place(x, n):
    s = state.skip
    s |= {n}
    return x + 1.0


def cleared(x):
    state.seen.clear()
    state.seen.add("fresh")
    return x * 3.0


class Loose:
    """Equal to 3, hashed as 3: a set holding it compares through this `__eq__`."""
    def __eq__(self, other):
        return other == 3

    def __hash__(self):
        return 3


def user_elements(x, n):
    if n in state.skip:
        return x + 1.0
    return x - 1.0


def numbers_of_other_types(x):
    return x + (True in state.skip) + (1.0 in state.skip) + (2.0 in state.skip)


class CountingSet(set):
    """A set whose membership test is Python code, which counts itself."""
    def __contains__(self, item):
        CONTAINS_CALLS.append(item)
        return set.__contains__(self, item)


CONTAINS_CALLS = []
SOMETIMES_COUNTING = {"a"}


def member_of_a_subclass_later(x, n):
    if "a" in SOMETIMES_COUNTING:
        return x + 1.0
    return x


def counting_from_the_third(i):
    global SOMETIMES_COUNTING
    if i == 0:
        CONTAINS_CALLS.clear()
        SOMETIMES_COUNTING = {"a"}
    if i == 2:
        SOMETIMES_COUNTING = CountingSet({"a"})


def grow_skip(i):
    state.skip.add(10 + i)


def change_activations(i):
    if i == 2:
        ACTIVATIONS.discard("gelu")
    if i == 3:
        ACTIVATIONS.add("tanh")


def loose_skip(i):
    if i == 0:
        state.skip = {1, Loose()}


ones = st.ones(3)
cases = [
    ("a global set of names, changed between calls", allowed,
     lambda i: (ones, ["relu", "gelu", "tanh", "gelu", "tanh", "mish"][i]), 6, 6,
     change_activations),
    ("a skip set read in an unrolled loop, growing between calls", layer_loop,
     lambda i: (ones, 5), 6, 6, grow_skip),
    ("a counter in a set of milestones", schedule, lambda i: (ones,), 10, 3, None),
    ("a number computed from a changing one in a set", milestones_of_a_sum,
     lambda i: (ones, i), 9, 3, None),
    ("sizes recorded in a set (add, update, discard)", record_sizes,
     lambda i: (st.ones(i % 3 + 1),), 6, 3, None),
    ("a changing int added and discarded", changing_key, lambda i: (ones, i), 8, 2, None),
    ("iteration, set methods, a frozenset of tuples", iterate_and_methods, lambda i: (ones,), 3,
     2, lambda i: state.skip.discard(1) or state.skip.add(1) if i == 1 else None),
    ("sets compared", compared, lambda i: (ones,), 4, 2,
     lambda i: state.skip.add(5) if i == 2 else None),
    ("a set read after the call changed it (runs as written)", read_after_a_change,
     lambda i: (ones, i), 4, 8, None),
    ("an in-place operator on a caller's set (runs as written)", in_place,
     lambda i: (ones, i), 4, 8, None),
    ("a set cleared then added to", cleared, lambda i: (ones,), 3, 1, None),
    ("a set holding an element with a user's __eq__", user_elements,
     lambda i: (ones, 3 if i % 2 else 2), 4, 8, loose_skip),
    ("a bool and floats looked up", numbers_of_other_types,
     lambda i: (ones,), 3, 2, None),
    # The guards of the first translation see a set of another class: none of them may
    # call its `__contains__` (the program calls it once per call, as written).
    ("a set that becomes a subclass's instance with a __contains__ of its own",
     member_of_a_subclass_later, lambda i: (ones, i), 4, 2, counting_from_the_third),
]

for name, fn, make_args, calls, most, between in cases:
    eager_then_traced(name, fn, make_args, most, None, None, calls=calls, reset=reset,
                      state=snapshot, failures=failures, between=between)

print("ALL OK" if not failures else f"FAILED {failures}", len(failures))
