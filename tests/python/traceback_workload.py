"""Exceptions raised through every kind of frame, with everything a traceback tells about
them printed: file, line, function, source line, the instruction offset, and the positions.
The output must be the same with and without a plugin that replaces frames."""
import sys
import traceback


def report(label):
    exc = sys.exception()
    print(f"== {label}: {type(exc).__name__}: {exc}")
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        positions = list(code.co_positions())[tb.tb_lasti // 2]
        print(f"  {code.co_filename.rsplit('/', 1)[-1]}:{tb.tb_lineno} {code.co_qualname} "
              f"lasti={tb.tb_lasti} positions={positions}")
        tb = tb.tb_next
    print("".join(traceback.format_exception(exc)).replace(__file__, "<workload>"), end="")


def divide(a, b):
    return a / b


def nested(n):
    def inner(k):
        return divide(k, n - 3)
    return [inner(k) for k in range(n)]


class Account:
    def __init__(self, balance):
        self.balance = balance

    @property
    def ratio(self):
        return self.balance / 0

    def withdraw(self, amount):
        if amount > self.balance:
            raise ValueError(f"cannot withdraw {amount} from {self.balance}")
        self.balance -= amount


def reraise():
    try:
        {}["missing"]
    except KeyError as e:
        raise RuntimeError("lookup failed") from e


def in_finally():
    try:
        return divide(1, 0)
    finally:
        print("  finally ran")


def with_block():
    class Manager:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            print(f"  __exit__ saw {exc[0].__name__}")
            return False

    with Manager():
        [1, 2][5]


def gen():
    yield 1
    raise StopIteration("inside")  # becomes RuntimeError


def multi_line_call(x):
    return divide(
        x,
        0,
    )


cases = [
    ("nested closures", lambda: nested(3)),
    ("method", lambda: Account(5).withdraw(10)),
    ("property", lambda: Account(5).ratio),
    ("chained", reraise),
    ("finally", in_finally),
    ("with", with_block),
    ("generator", lambda: list(gen())),
    ("multi-line call", lambda: multi_line_call(3)),
    ("lambda", lambda: (lambda y: y.missing)(1)),
    ("exec", lambda: exec("def f():\n    return 1 / 0\nf()", {})),
]
for label, case in cases:
    try:
        case()
    except Exception:
        report(label)
print("done")
