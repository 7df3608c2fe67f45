"""Direct cache hits on several threads at once, while another thread keeps putting new
tensors (of the same shape, and now and then of another) where the function reads its inputs:
every result is the forward pass of one consistent set of layers, and nothing crashes. Prints
`name key=value` lines."""
import threading

import symtrace as st

st.manual_seed(0)


def forward(layers, x):
    for w, b in layers:
        x = st.relu(x @ w + b)
    return x.sum(dim=-1)


def make(scale, n=8):
    return (st.ones(n, n) * scale, st.ones(n) * scale)


layers = [make(1.0) for _ in range(3)]
x = st.ones(2, 8)
# With every layer made by `make(s)`, the result is known: each layer maps a row of equal
# values v to rows of 8·s·v + s (positive, so relu keeps them).
stop = threading.Event()
bad = []
calls = [0]


def expected_row_sums(scales):
    v = 1.0
    for s in scales:
        v = 8 * s * v + s
    return 8 * v


def caller():
    while not stop.is_set():
        before = [w.tolist()[0][0] for w, _ in layers]
        try:
            out = forward(layers, x)
        except ValueError:
            continue  # a layer of the other shape: eager raises too
        after = [w.tolist()[0][0] for w, _ in layers]
        calls[0] += 1
        # Only a call during which no layer changed has one known answer.
        if before == after and out.shape == (2,):
            want = expected_row_sums(before)
            if any(abs(v - want) > 1e-9 * want for v in out.tolist()):
                bad.append((before, out.tolist(), want))


def mutator():
    # Every scale is new, so that equal first elements before and after a call mean that no
    # layer changed during it.
    for i in range(300):
        k = i % 3
        layers[k] = make(1.0 + i / 1024)
        if i % 50 == 49:
            layers[k] = make(2.0 + i / 1024, n=4)  # another shape: calls in between miss
            layers[k] = make(3.0 + i / 1024)
    stop.set()


threads = [threading.Thread(target=caller) for _ in range(3)] + [threading.Thread(target=mutator)]
for t in threads:
    t.start()
for t in threads:
    t.join()
final = forward(layers, x)
eager = st.disable(forward)(layers, x)
print(f"threads: calls={calls[0] > 0} wrong={len(bad)} final_same={final.tolist() == eager.tolist()}")
print(f"direct hits: {st.stats()['direct_hits'] > 0}")
for b in bad[:3]:
    print("wrong:", b)
