"""Pure-Python workloads, no tensor anywhere: what `--plugin symtrace` must cost almost
nothing on. Five parts: recursion, method calls, closures, generators and an object-oriented
simulation (classes with inheritance, properties, __slots__, dunder methods). Each part runs
ROUNDS times in one process; prints one line per part, `part first=S rest=S` (the first
round, which includes the translator's attempts before it skips the code, and the median of
the others), then `total first=S rest=S`. Run by benches/pure_python.sh.

    rustpython [--plugin symtrace] benches/pure_python.py [ROUNDS] [SCALE]
"""
import sys
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def recursion(scale):
    return fib(18 + scale)


class Vec:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def add(self, other):
        return Vec(self.x + other.x, self.y + other.y)

    def dot(self, other):
        return self.x * other.x + self.y * other.y


def methods(scale):
    v, one = Vec(0, 0), Vec(1, 1)
    acc = 0
    for _ in range(4000 * scale):
        v = v.add(one)
        acc += v.dot(one)
    return acc


def make_counter(step):
    count = 0

    def bump(k=1):
        nonlocal count
        count += step * k
        return count

    return bump


def closures(scale):
    adders = [(lambda a: (lambda b: a + b))(i) for i in range(16)]
    bump = make_counter(3)
    total = 0
    for i in range(1000 * scale):
        total += adders[i % 16](i) + bump()
    return total


def squares(n):
    for i in range(n):
        yield i * i


def evens(it):
    for x in it:
        if x % 2 == 0:
            yield x


def chained(n):
    yield from evens(squares(n))
    yield from (x + 1 for x in range(n))


def generators(scale):
    return sum(chained(2000 * scale)) + sum(1 for _ in squares(1000 * scale))


class Body:
    def __init__(self, x, v, m):
        self.x, self.v, self.m = x, v, m

    @property
    def momentum(self):
        return self.m * self.v

    def step(self, dt):
        self.x += self.v * dt


class Charged(Body):
    def __init__(self, x, v, m, q):
        super().__init__(x, v, m)
        self.q = q

    def step(self, dt):
        self.v -= self.q * self.x * dt
        super().step(dt)


class World:
    def __init__(self, n):
        self.bodies = [Body(i, 1.0, 1.0 + i % 3) if i % 2 else Charged(i, 0.0, 2.0, 0.1) for i in range(n)]

    def __len__(self):
        return len(self.bodies)

    def __getitem__(self, i):
        return self.bodies[i]

    def tick(self, dt):
        for b in self.bodies:
            b.step(dt)
        return sum(self[i].momentum for i in range(len(self)))


def simulation(scale):
    w = World(32)
    p = 0.0
    for _ in range(40 * scale):
        p = w.tick(0.01)
    return p


PARTS = [recursion, methods, closures, generators, simulation]


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    scale = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    first_total = rest_total = 0.0
    for part in PARTS:
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            part(scale)
            times.append(time.perf_counter() - start)
        rest = sorted(times[1:])[len(times[1:]) // 2] if rounds > 1 else times[0]
        first_total += times[0]
        rest_total += rest
        print(f"{part.__name__} first={times[0]:.6f} rest={rest:.6f}")
    print(f"total first={first_total:.6f} rest={rest_total:.6f}")


if __name__ == "__main__":
    main()
