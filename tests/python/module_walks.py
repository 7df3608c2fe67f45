"""The module tree walked in forward: children(), named_children(), modules(),
parameters() and named_parameters() are generators over sets that hold modules and
parameters by identity. Each walk is one graph, equal to eager on every call; a model whose
submodules are shared (or whose weights are tied) and one whose are not get one translation
each, told apart by the guards (not one per instance); a ModuleList sliced by a depth that
changes is a translation per depth. Prints one line per case; `FAIL`
marks a failed one."""
import symtrace as st
import symtrace.nn as nn
from case_report import count_problems, report, same

failures = []


class Pair(nn.Module):
    def __init__(self, shared):
        super().__init__()
        self.a = nn.Linear(2, 2)
        self.b = self.a if shared else nn.Linear(2, 2)

    def forward(self, x):
        n = 0
        for m in self.children():
            x = m(x)
            n += 1
        return x, n


class Walks(Pair):
    def forward(self, x):
        names = [name for name, _ in self.named_children()]
        linears = [m for m in self.modules() if isinstance(m, nn.Linear)]
        for m in linears:
            x = m(x)
        count = sum(p.numel() for p in self.parameters())
        return x * count, names, len(linears)


class Tied(nn.Module):
    def __init__(self, tie):
        super().__init__()
        self.emb = nn.Linear(3, 3, bias=False)
        self.head = nn.Linear(3, 3, bias=False)
        if tie:
            self.head.weight = self.emb.weight

    def forward(self, x):
        l2 = 0.0
        names = []
        for name, p in self.named_parameters():
            l2 = l2 + (p * p).sum()
            names.append(name)
        return self.head(self.emb(x)) + l2, names


def mixed(x, m):
    # A set of plain values and modules: not simulated (the frame runs as written).
    s = {1, 2}
    s.add(m)
    return x * len(s)


@st.disable
def check(name, cls, flags, args, graphs, breaks, translations):
    st.manual_seed(0)
    models = [cls(flag) for flag in flags]
    calls = [models[i % len(models)] for i in range(2 * len(models))]
    eager = [m(*args) for m in calls]
    # explain() starts the statistics afresh, with its own translation (kept in the cache).
    problems = count_problems(st.explain(models[0], *args), graphs, breaks)
    traced = [st.compile(m)(*args) for m in calls]
    made = st.stats()["translations"]
    problems += [f"call {i}: {t} != {e}" for i, (t, e) in enumerate(zip(traced, eager))
                 if not same(t, e)]
    if made != translations:
        problems.append(f"{made} translations (expected {translations})")
    report(name, problems, failures)


x2, x3 = st.ones(2), st.ones(3)
check("children() in forward, shared and not, alternating", Pair,
      [False, True, False, True], (x2,), 1, 0, 2)
check("named_children(), modules(), parameters() in forward", Walks,
      [False, True, False], (x2,), 1, 0, 2)
check("named_parameters() with tied weights and without", Tied, [True, False, True], (x3,),
      1, 0, 2)


@st.disable
def check_mixed():
    m = Pair(False)
    problems = []
    if not same(st.compile(mixed)(x2, m), mixed(x2, m)):
        problems.append("results differ")
    problems += count_problems(st.explain(mixed, x2, m), 0, 1)
    report("a set of plain values and modules runs as written", problems, failures)


check_mixed()


class Deep(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(2, 2) for _ in range(4)])
        self.depth = 3

    def forward(self, x):
        for block in self.blocks[: self.depth]:
            x = block(x)
        return x, len(self.blocks[::-2])


@st.disable
def check_depths():
    # A ModuleList sliced by a depth the program changes between calls (a slice of a number
    # that changes per call, `isinstance(idx, slice)` in `__getitem__`): one translation per
    # depth met (the loop over the slice unrolls to its length, as TorchDynamo's does); the
    # frame ran as written from the first change on.
    st.manual_seed(0)
    m = Deep()
    depths = [3, 2, 4, 1, 3, 2]
    eager = []
    for depth in depths:
        m.depth = depth
        eager.append(m(x2))
    cm = st.compile(m)
    st.reset()
    problems = []
    for depth, e in zip(depths, eager):
        m.depth = depth
        if not same(cm(x2), e):
            problems.append(f"depth {depth}: results differ")
    stats = st.stats()
    if (stats["translations"], stats["fallbacks"]) != (len(set(depths)), 0):
        problems.append(f"{stats['translations']} translations, {stats['fallbacks']} fallbacks (expected {len(set(depths))}, 0)")
    report("a ModuleList sliced by a depth that changes", problems, failures)


check_depths()
print("ALL OK" if not failures else f"FAILED {failures}", len(failures))
