"""Run every case of cases.py with the library the caller binds and write the results as
JSON: {name: {"value": ...}} or {name: {"error": "RuntimeError"}}, a tensor encoded as
{"shape": [...], "dtype": "float64", "values": [...]}, a tuple as a list of encodings."""
import json
import math

from cases import CASES, CONSTANTS, INPUTS


def encode_number(x):
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
    return x


def run(T, nn, F, load, to_result, is_tensor, out_path, call=None, einsum=None, lib=None):
    """`call(fn)` runs a case's function (eagerly when None); `to_result(t)` gives a tensor's
    (shape, dtype name, flat values); `einsum` is the library's (`st_einsum` in a case), `lib`
    the library itself (`lib.finfo`, `lib.cdist`... in a case)."""
    env = {"T": T, "nn": nn, "F": F, "load": load, "st_einsum": einsum, "lib": lib}
    env.update(CONSTANTS)
    for name, (data, dtype) in INPUTS.items():
        env[name] = T(eval(data), dtype)

    def encode(v):
        if is_tensor(v):
            shape, dtype, values = to_result(v)
            return {"shape": shape, "dtype": dtype, "values": [encode_number(x) for x in values]}
        if isinstance(v, (tuple, list)):
            return [encode(i) for i in v]
        return encode_number(v)

    results = {}
    for name, stmt in CASES:
        scope = dict(env)
        body = "\n".join("    " + line for line in stmt.split("\n"))
        exec(f"def case():\n{body}\n    return result\n", scope)
        try:
            r = (call or (lambda f: f()))(scope["case"])
            results[name] = {"value": encode(r)}
        except Exception as exc:  # the class is what is compared
            results[name] = {"error": type(exc).__name__}
    with open(out_path, "w") as out:
        json.dump(results, out, indent=0, sort_keys=True)
