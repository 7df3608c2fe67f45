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
    d.update({"q": 1}, r=a)
    keys = list(d.keys())
    return d.get("m"), d.get("zz", 7), keys, [v for v in d.values() if not isinstance(v, int)]

def forwarded(a, **kwargs):
    mask = kwargs.pop("mask", None)
    scale = kwargs.pop("scale")
    return (a * scale if mask is None else a * mask), kwargs


def dict_removals(a):
    # pop of present and absent keys (a KeyError caught), popitem, clear: on dicts made here.
    first, second = forwarded(a, scale=2.0, extra=1), forwarded(a, mask=a, scale=3.0)
    d = {"a": a, "b": a * 2, "c": 3}
    k, v = d.popitem()
    try:
        d.pop("missing")
    except KeyError as e:
        missing = e.args
    kept = dict(d)
    d.clear()
    return first, second, k, v, missing, kept, d


def comprehension(a):
    return [a * i for i in range(3)], {i: i * i for i in range(4)}

case(build, x)
case(list_ops, x)
case(dict_ops, x)
case(dict_removals, x)
case(comprehension, x)
finish()
