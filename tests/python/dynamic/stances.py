"""set_stance: each of torch.compiler's four stances, set and as a context manager; the
reason a recompile would have had is in the error of fail_on_recompile."""
import symtrace as st


def f(x, n):
    return x * n + 1.0


x = st.tensor([1.0, 2.0])
eager = lambda n: (x * n + 1.0).tolist()
cf = st.compile(f)
assert cf(x, 2).tolist() == eager(2)
assert st.stats()["translations"] == 1

with st.set_stance("fail_on_recompile"):
    # What an entry fits still runs from the cache.
    assert cf(x, 2).tolist() == eager(2)
    try:
        cf(x, 3)
    except RuntimeError as e:
        print("fail_on_recompile:", e)
    else:
        raise AssertionError("fail_on_recompile did not raise")
assert st.stats()["translations"] == 1

with st.set_stance("eager_on_recompile"):
    assert cf(x, 4).tolist() == eager(4)
    assert cf(x, 2).tolist() == eager(2)
s = st.stats()
print("eager_on_recompile:", s)
assert s["translations"] == 1 and s["fallbacks"] == 1, s

# Back to the default on exit: a new value translates again.
assert cf(x, 5).tolist() == eager(5)
assert st.stats()["translations"] == 2

st.set_stance("force_eager")
before = st.stats()
assert cf(x, 6).tolist() == eager(6)
assert cf(x, 2).tolist() == eager(2)
after = st.stats()
print("force_eager:", after)
assert after["translations"] == before["translations"]
assert after["cache_hits"] == before["cache_hits"]
st.set_stance("default")

try:
    st.set_stance("sometimes")
except ValueError as e:
    print("bad stance:", e)
else:
    raise AssertionError("an unknown stance was accepted")
print("STANCES OK")
