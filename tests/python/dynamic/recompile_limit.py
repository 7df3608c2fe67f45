"""At the recompile limit a code object says so once; its entries keep serving the calls
they fit, and the rest run as written with the right result."""
import symtrace as st


def f(x, mode):
    # A string picks the code path: guarded by value, whatever the dynamic policy.
    if mode.startswith("neg"):
        return -x
    return x * len(mode) + 1.0


x = st.tensor([1.0, 2.0])
cf = st.compile(f)
for k in range(30):
    assert cf(x, "m" * (k % 12)).tolist() == (x * (k % 12) + 1.0).tolist()
before = st.stats()
for _ in range(5):
    cf(x, "")
after = st.stats()
print("stats:", after)
assert before["translations"] == 8, before
assert after["cache_hits"] - before["cache_hits"] == 5, (before, after)
# A parameter frozen between calls: the reason gives the flag the call saw.
w = st.nn.Parameter(st.ones(2))


def scaled(x):
    return x * w if w.requires_grad else x - w


cs = st.compile(scaled)
cs(x)
w.requires_grad_(False)
assert cs(x).tolist() == [0.0, 1.0]
# An enum member picks the path: the reason names the member the call gave.
import enum


class Act(enum.Enum):
    RELU = "relu"
    TANH = "tanh"


def activated(x, act):
    return x.relu() if act is Act.RELU else x.tanh()


ca = st.compile(activated)
ca(x, Act.RELU)
assert ca(x, Act.TANH).tolist() == x.tanh().tolist()
# A helper with an entry for a tensor, whose translation fails for a tuple, given a new
# string at each call (a label): the failures count to the limit, then such calls run as
# written, instead of translating, and failing, again at every call.
def label(tag, v, out):
    if isinstance(v, tuple):
        for i, e in enumerate(v):
            labeled(f"{tag}.{i}", e, out)
    else:
        out.append((tag, [round(float(e), 6) for e in (v * 2).flatten().tolist()]))


labeled = st.compile(label)
before = st.stats()
for k in range(40):
    got, want = [], []
    labeled(f"s{k}", (x * k, x + k), got)
    st.disable(label)(f"s{k}", (x * k, x + k), want)
    assert got == want, (got, want)
after = st.stats()
print("labeled:", {k: after[k] - before[k] for k in after})
assert after["recompiles"] - before["recompiles"] <= 8, (before, after)
print("LIMIT OK")
