"""Call-heavy workload for the hook-overhead benchmark: recursion, method calls and a
pyperformance-style loop. Prints the number of Python frames it enters (computed, not
measured) and the seconds it took, as `frames=N seconds=S`."""
import sys
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def fib_calls(n):
    return 1 if n < 2 else 1 + fib_calls(n - 1) + fib_calls(n - 2)


class Vec:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def add(self, other):
        return Vec(self.x + other.x, self.y + other.y)

    def dot(self, other):
        return self.x * other.x + self.y * other.y


def loop(n):
    # A float-and-list loop in the spirit of pyperformance's nbody/spectral_norm.
    acc = 0.0
    xs = [i * 0.5 for i in range(64)]
    for i in range(n):
        for x in xs:
            acc += x * x - acc * 1e-9
    return acc


def main(scale):
    frames = 0
    t0 = time.perf_counter()
    fib(20 + scale)
    frames += fib_calls(20 + scale) - 0  # fib's calls (fib_calls itself is not timed below)
    t_fib = time.perf_counter()
    v = Vec(0, 0)
    one = Vec(1, 1)
    n = 20000 * (scale + 1)
    for _ in range(n):
        v = v.add(one)
        v.dot(one)
    frames += 3 * n  # add, __init__, dot
    loop(200 * (scale + 1))
    frames += 1
    t1 = time.perf_counter()
    return frames, (t_fib - t0) + (t1 - t_fib)


if __name__ == "__main__":
    scale = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    frames, seconds = main(scale)
    print(f"frames={frames} seconds={seconds:.6f}")
