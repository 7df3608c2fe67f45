"""What the case scripts (graph_breaks.py, side_effects.py, generators.py) share: comparing
results, checking explain()'s counts, and printing one line per case (`FAIL` marks a failed
one)."""
import symtrace as st


def same(a, b):
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same(p, q) for p, q in zip(a, b))
    if isinstance(a, st.Tensor):
        return a.tolist() == b.tolist()
    return a == b


def count_problems(e, graphs, breaks):
    if (e.graph_count, e.graph_break_count) != (graphs, breaks):
        return [f"{e.graph_count} graphs, {e.graph_break_count} breaks (expected {graphs}, {breaks}): {e.break_reasons}"]
    return []


def report(name, problems, failures):
    print(("FAIL " if problems else "ok ") + name + (": " + "; ".join(problems) if problems else ""))
    if problems:
        failures.append(name)
