"""mark_dynamic and mark_static, as torch._dynamo's: a marked dimension is dynamic from the
first translation; a dimension marked static stays specialized under dynamic=true."""
import symtrace as st


def f(x, w):
    return (x @ w).relu().sum(-1)


w = st.randn(4, 3)
cf = st.compile(f)
for b in range(2, 40):
    x = st.randn(b, 4)
    st.mark_dynamic(x, 0)
    assert cf(x, w).tolist() == f(x, w).tolist()
print("marked dynamic:", st.stats()["translations"])
assert st.stats()["translations"] == 1

st.reset()
for b in range(2, 12):
    x = st.randn(b, 4)
    st.mark_static(x)
    assert cf(x, w).tolist() == f(x, w).tolist()
print("marked static:", st.stats()["translations"])
assert st.stats()["translations"] == 8  # the recompile limit: one per size

for bad in [5, [0, 7]]:
    try:
        st.mark_dynamic(st.randn(2, 4), bad)
    except IndexError as e:
        print("bad dim:", e)
print("MARKS OK")
