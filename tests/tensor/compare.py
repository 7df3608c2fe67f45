"""Compare the fork's results with NumPy's:  rustpython compare.py reference.json ours.json
(or with torch's: torch_reference.json, the cases of torch_cases.py).
Prints every difference and the count; exits 1 if any. An error compares by exception class:
torch's where torch_errors.json (beside reference.json) records it, since the API is torch's
(a shape that does not fit is a RuntimeError there, a ValueError in NumPy); NumPy's otherwise
(its AxisError is both a ValueError and an IndexError)."""
import json
import os
import sys

TOLERANCE = {"float32": 2e-6, "float64": 1e-12}


def same_values(ref, ours, dtype):
    tol = TOLERANCE.get(dtype, 0)
    for a, b in zip(ref, ours):
        if isinstance(a, str) or isinstance(b, str):
            if a != b:
                return False
        elif abs(a - b) > tol * max(1.0, abs(a)):
            return False
    return len(ref) == len(ours)


def main():
    ref = json.load(open(sys.argv[1]))
    ours = json.load(open(sys.argv[2]))
    torch_errors_path = os.path.join(os.path.dirname(sys.argv[1]), "torch_errors.json")
    torch_errors = json.load(open(torch_errors_path)) if os.path.exists(torch_errors_path) else {}
    diffs = []
    for name in sorted(ref):
        r, o = ref[name], ours.get(name, {"error": "(missing)"})
        if "error" in r or "error" in o:
            want, got = torch_errors.get(name, r.get("error")), o.get("error")
            if not (want == got or (want == "AxisError" and got in ("IndexError", "ValueError"))):
                diffs.append(f"{name}: reference {r} / symtrace {o}")
        elif (r["shape"], r["dtype"]) != (o["shape"], o["dtype"]):
            diffs.append(f"{name}: reference {r['dtype']}{r['shape']} / symtrace {o['dtype']}{o['shape']}")
        elif not same_values(r["values"], o["values"], r["dtype"]):
            diffs.append(f"{name}: reference {r['values'][:8]} / symtrace {o['values'][:8]}")
    for d in diffs:
        print(d)
    against = "torch" if os.path.basename(sys.argv[1]).startswith("torch") else "NumPy"
    print(f"{len(ref)} cases compared with {against}, {len(diffs)} differences")
    sys.exit(1 if diffs else 0)


main()
