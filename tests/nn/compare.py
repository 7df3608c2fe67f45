"""Compare results with the PyTorch reference, with a tolerance for the float types (a
kernel's rounding may differ from PyTorch's); prints one line per difference and the count:
    rustpython tests/nn/compare.py reference.json RESULTS"""
import json, sys, math
ref = json.load(open(sys.argv[1])); got = json.load(open(sys.argv[2]))
def close(a, b, path):
    if isinstance(a, dict) and "shape" in a:
        if not isinstance(b, dict) or "shape" not in b: return f"{path}: tensor vs {b!r}"[:200]
        if a["shape"] != b["shape"]: return f"{path}: shape {b['shape']} != {a['shape']}"
        if a["dtype"] != b["dtype"]: return f"{path}: dtype {b['dtype']} != {a['dtype']}"
        tol = 1e-5 if a["dtype"] == "float32" else 1e-9
        for x, y in zip(a["values"], b["values"]):
            if isinstance(x, str) or isinstance(y, str):
                if x != y: return f"{path}: {y} != {x}"
            elif abs(x - y) > tol * max(1.0, abs(x)): return f"{path}: {y} != {x}"
        return None
    if isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b): return f"{path}: {b!r} != {a!r}"[:200]
        for i, (x, y) in enumerate(zip(a, b)):
            r = close(x, y, f"{path}[{i}]")
            if r: return r
        return None
    if a != b and not (isinstance(a, float) and isinstance(b, float) and abs(a-b) <= 1e-9*max(1,abs(a))): return f"{path}: {b!r} != {a!r}"
    return None
bad = 0
for name, r in ref.items():
    g = got.get(name)
    if "error" in r:
        if g != r: print("FAIL", name, g, "expected", r); bad += 1
        continue
    if g is None or "value" not in g: print("FAIL", name, g); bad += 1; continue
    p = close(r["value"], g["value"], name)
    if p: print("FAIL", p); bad += 1
print(len(ref) - bad, "of", len(ref), "ok")
