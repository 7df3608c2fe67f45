"""The coefficients of the float32 erf (plugin/src/tensor/ops/f32_math.rs): erf(x) as
x*P(x^2)/Q(x^2) on [0, 3.92], fitted for relative error by linearized least squares,
reweighted by 1/Q (Loeb's iteration), in 40-digit arithmetic. Run once with CPython and mpmath:
    python3 tests/tensor/fit_erf.py 8 7
prints the largest relative error per iteration, then P and Q."""
import mpmath as mp
import sys
mp.mp.dps = 40
X = mp.mpf("3.92")
np_, nq = int(sys.argv[1]), int(sys.argv[2])   # coefficients in P, in Q (Q0 = 1 excluded)
N = 400
xs = [X * mp.sin(mp.pi/2 * (i + 0.5) / N) for i in range(N)]  # dense near X
xs += [X * mp.mpf(i + 0.5) / N for i in range(N)]
w = [mp.mpf(1)] * len(xs)
for it in range(8):
    rows, rhs = [], []
    for x, wi in zip(xs, w):
        e = mp.erf(x); z = x * x
        s = 1 / e * wi
        row = [x * z**j * s for j in range(np_)] + [-e * z**(j + 1) * s for j in range(nq)]
        rows.append(row); rhs.append(e * s)
    A = mp.matrix(rows); b = mp.matrix(rhs)
    sol = mp.qr_solve(A, b)[0]
    p = [sol[j] for j in range(np_)]; q = [sol[np_ + j] for j in range(nq)]
    Q = lambda z: 1 + sum(q[j] * z**(j + 1) for j in range(nq))
    w = [1 / abs(Q(x * x)) for x in xs]
    err = max(abs((x * sum(p[j] * (x*x)**j for j in range(np_)) / Q(x*x)) / mp.erf(x) - 1)
              for x in [X * mp.mpf(i) / 5000 + mp.mpf("1e-6") for i in range(5001)])
    print(it, mp.nstr(err, 5))
print("P", [mp.nstr(c, 20) for c in p]); print("Q", [1] + [mp.nstr(c, 20) for c in q])
