"""A dynamic graph called at the same sizes again runs as a static copy made for them (fused,
planned for those sizes): from the second call at a size on. Every result must equal eager's
bit for bit, also where an int argument (a window's length) is an input the sizes are worked
out from: a copy is made per value, never used for another."""
import symtrace as st


def block(x, w):
    h = (x @ w) * 0.5 - 1.0
    return st.softmax(h, dim=-1) * 2.0 + x


def window(x, k):
    return x[:k] * 2.0 + 1.0


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tolist() == b.tolist()


st.manual_seed(0)
w = st.randn(16, 16)
cb = st.compile(block)
for n in [2, 3, 3, 3, 5, 5, 2, 7, 3]:
    x = st.randn(n, 16)
    st.mark_dynamic(x, 0)
    assert same(cb(x, w), st.disable(block)(x, w)), n
print("block", st.stats()["translations"])

st.reset()
cw = st.compile(window)
x = st.randn(12, 4)
for k in [1, 2, 2, 3, 3, 5, 2, 5, 1]:
    assert same(cw(x, k), st.disable(window)(x, k)), k
print("window", st.stats()["translations"])
print("COPIES OK")
