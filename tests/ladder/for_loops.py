from runner import case, finish
import symtrace as st

x = st.randn(3)
ws = [st.randn(3), st.randn(3), st.randn(3)]

def over_range(a, n):
    s = a
    for i in range(n):
        s = s + i
    return s

def over_list(a, ws):
    for w in ws:
        a = a * w
    return a

def over_zip_enumerate(a, ws):
    total = a
    for i, (w, k) in enumerate(zip(ws, [1.0, 2.0, 3.0])):
        total = total + w * k + i
    return total

def nested_loops(a):
    for i in range(2):
        for j in range(3):
            if j == 1:
                continue
            if i == 1 and j == 2:
                break
            a = a + i * j
    return a

case(over_range, x, 4)
case(over_list, x, ws)
case(over_zip_enumerate, x, ws)
case(nested_loops, x)
finish()
