from runner import case, finish
import symtrace as st

x = st.randn(4)
ws = [st.randn(4) for _ in range(5)]

def list_slices(ws):
    return ws[1:3], ws[::2], ws[-1], ws[:-1][0] + ws[-2]

def tuple_slices(a):
    t = (a, a + 1, a + 2, a + 3)
    return t[1:], t[::-1][0], t[-2]

def shape_slices(a):
    return a.reshape(2, 2).shape[1:], a * a.shape[-1]

case(list_slices, ws)
case(tuple_slices, x)
case(shape_slices, x)
finish()
