"""The per-call timing that the bench scripts share (benches/translate.py, benches/modules.py)."""
import time


def per_call(fn, args, seconds=0.1, repeats=5):
    """Seconds per call of fn(*args), the best of `repeats` runs (as timeit: the least
    disturbed run). The call is spelled out, as a forward pass is written: a `*args` call or a
    wrapper costs more than some of the calls measured."""
    fn(*args)
    best = None
    for _ in range(repeats):
        n, t0 = 0, time.perf_counter()
        while True:
            if len(args) == 2:
                a, b = args
                for _ in range(50):
                    fn(a, b)
            elif len(args) == 1:
                a, = args
                for _ in range(50):
                    fn(a)
            else:
                for _ in range(50):
                    fn(*args)
            n += 50
            t = time.perf_counter() - t0
            if t > seconds:
                break
        best = t / n if best is None else min(best, t / n)
    return best
