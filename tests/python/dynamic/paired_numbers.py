"""Numbers each step computes from the two before (`a, b = b, a + b`, the remainders of
Euclid's and Lehmer's algorithms): as deferred numbers their expressions, written out, grow as
the Fibonacci numbers. They are bounded by the operators written out, not by depth, so the
replacement stays small (millions of instructions before; sympy's `igcd_lehmer` ran out of
memory under trace_all=1); past the bound a number is forced, its sources guarded by value.
Every result equals eager."""
import symtrace as st


def fib_scaled(x, a, b):
    for _ in range(30):
        a, b = b, a + b
    return x * b, a


def euclid_scaled(x, a, b):
    while b:
        a, b = b, a % b
    return x * a, a


fib, euclid = st.compile(fib_scaled), st.compile(euclid_scaled)
for a in range(1, 6):
    x = st.ones(2) * a
    assert str(fib(x, a, a + 1)) == str(fib_scaled(x, a, a + 1))
    assert str(euclid(x, 1071 * a, 462 * a)) == str(euclid_scaled(x, 1071 * a, 462 * a))
assert st.stats()["translations"] >= 2, st.stats()
print("PAIRED OK")
