from runner import case, finish
import symtrace as st

x = st.randn(2, 3)

def build(a):
    t = (a, a + 1)
    l = [a * 2, 3, "s"]
    d = {"a": a, "n": len(l)}
    return t, l, d

def list_ops(a):
    out = []
    out.append(a)
    out.extend([a + 1, a + 2])
    out.insert(0, a - 1)
    last = out.pop()
    return out, last

def dict_ops(a):
    d = dict(k=a, j=2)
    d["m"] = a * 3
    keys = list(d.keys())
    return d.get("m"), d.get("zz", 7), keys, [v for v in d.values() if not isinstance(v, int)]

def comprehension(a):
    return [a * i for i in range(3)], {i: i * i for i in range(4)}

case(build, x)
case(list_ops, x)
case(dict_ops, x)
case(comprehension, x)
finish()
