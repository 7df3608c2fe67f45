"""Evaluate every case of cases.py (or the cases given) with the library bound by the caller and write the results
as JSON: {name: {"shape": [...], "dtype": "float64", "values": [...]}} or {"error": "ValueError"}."""
import json
import math

from cases import ASSIGNMENTS, CASES, INPUTS


def encode_value(x):
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
    return x


def run(T, F, to_result, out_path, cases=CASES, assignments=ASSIGNMENTS):
    env = {"T": T, "F": F}
    for name, (data, dtype) in INPUTS.items():
        env[name] = T(eval(data), dtype)
    results = {}

    def record(name, thunk):
        try:
            shape, dtype, values = to_result(thunk())
            results[name] = {"shape": shape, "dtype": dtype, "values": [encode_value(v) for v in values]}
        except Exception as exc:  # the class is what is compared
            results[name] = {"error": type(exc).__name__}

    for name, expr in cases:
        record(name, lambda: eval(expr, dict(env)))
    for name, stmt, result in assignments:
        def thunk():
            scope = dict(env)
            exec(stmt, scope)
            return scope[result]
        record(name, thunk)
    with open(out_path, "w") as out:
        json.dump(results, out, indent=0, sort_keys=True)
