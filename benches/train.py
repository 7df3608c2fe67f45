"""Time per step of demos/train.py's loop (printing to /dev/null, no early stop), in the mode
given: `eager` (run under plain rustpython) or `traced` (under --plugin symtrace). Prints
`train mode=... per_step=SECONDS steps=N`. Driven by benches/train.sh."""
import os
import sys
import time

sys.path.insert(0, sys.argv[1])
import train  # noqa: E402

mode = sys.argv[2]
x, y = train.data()
sink = open(os.devnull, "w")
train.train(x, y, 20, tol=0.0, out=sink)  # warm up (translations happen here when traced)
best = float("inf")
steps = 400
for _ in range(5):
    t0 = time.perf_counter()
    train.train(x, y, steps, tol=0.0, out=sink)
    best = min(best, time.perf_counter() - t0)
print(f"train mode={mode} per_step={best / steps:.9f} steps={steps}")
