"""Workload for the frame-recorder test: every way a Python frame can start.

Run as `rustpython --plugin frames --plugin-opt out=REC frame_workload.py` (the recorder), or as
`rustpython frame_workload.py --oracle OUT` (the oracle: sys.setprofile 'call' events, with a
generator's frame counted at its first run only). The test compares the two sequences between
the calls to `begin_marker` and `end_marker`.
"""
import sys

CO_GENERATOR_LIKE = 0x20 | 0x80 | 0x100 | 0x200  # generator, coroutine, iterable coroutine, async gen


def begin_marker():
    pass


def end_marker():
    pass


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def norm1(self):
        return abs(self.x) + abs(self.y)

    @property
    def doubled(self):
        return Point(self.x * 2, self.y * 2)

    @staticmethod
    def origin():
        return Point(0, 0)


def kw_only(a, b=2, *, c, d=4):
    return a + b + c + d


def star_args(*args, **kwargs):
    return len(args) + len(kwargs)


def make_adder(n):
    def add(x):
        return x + n
    return add


def deco(fn):
    def wrapper(*a, **k):
        return fn(*a, **k)
    return wrapper


@deco
def decorated(x):
    return x * 3


def countdown(n):
    while n > 0:
        yield n
        n -= 1


def delegating(n):
    yield from countdown(n)


def hot(x):
    return x + 1


def warm_up():
    # 10,000 calls, so that the specialized call instructions are in use.
    total = 0
    for i in range(10000):
        total = hot(total)
    p = Point(1, 2)
    for _ in range(2000):
        total += p.norm1()
    return total


def workload():
    fib(6)
    p = Point(3, -4)
    p.norm1()
    p.doubled.norm1()
    Point.origin()
    kw_only(1, c=3)
    kw_only(1, 2, c=3, d=5)
    star_args(1, 2, 3, k=1)
    star_args(*[1, 2], **{"a": 1})
    make_adder(2)(5)
    decorated(4)
    (lambda v: v + 1)(1)

    class Local:
        attr = 1

        def method(self):
            return self.attr

    Local().method()
    sorted([3, 1, 2], key=lambda v: -v)
    list(map(hot, [1, 2]))
    exec("def from_exec():\n    return 1\nfrom_exec()")
    eval("hot(1)")
    import json_never_imported_before_probe  # noqa: F401  (a module body)
    list(countdown(3))
    g = countdown(2)
    hot(0)
    next(g)
    list(delegating(2))
    sum(x for x in range(3))
    [hot(x) for x in range(2)]
    warm_up()


def main():
    oracle_out = None
    if len(sys.argv) > 2 and sys.argv[1] == "--oracle":
        oracle_out = open(sys.argv[2], "w")
        seen_generators = set()

        def profile(frame, event, arg):
            if event != "call":
                return
            code = frame.f_code
            kind = "call"
            if code.co_flags & CO_GENERATOR_LIKE:
                if id(frame) in seen_generators:
                    return
                seen_generators.add(id(frame))
                kind = "gen"
            oracle_out.write(f"{kind}\t{code.co_qualname}\t{code.co_filename}:{code.co_firstlineno}\n")

        sys.setprofile(profile)
    begin_marker()
    workload()
    end_marker()
    if oracle_out is not None:
        sys.setprofile(None)
        oracle_out.close()


main()
