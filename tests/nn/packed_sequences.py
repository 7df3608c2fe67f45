"""Packed sequences (`nn.utils.rnn`: `pack_padded_sequence`, sorted or not, `batch_first`;
`pad_packed_sequence` with `total_length`; `pack_sequence`, `unpack_sequence`) and the
recurrent layers run on them (LSTM, GRU, RNN; layers, directions, a given initial state):
`python3 packed_sequences.py torch` printed packed_sequences.expected with PyTorch 2.5.1
(tests/nn.rs compares the fork's output, plain and under the plugin, with it)."""
import sys
if sys.argv[1:] == ["torch"]:
    import torch as st
else:
    import symtrace as st
nn = st.nn
rnn = st.nn.utils.rnn
st.set_default_dtype(st.float64)


def plain(v):
    if isinstance(v, st.Tensor):
        return (tuple(v.shape), [round(x, 10) + 0.0 if isinstance(x, float) else x
                                 for x in v.detach().flatten().tolist()])
    if isinstance(v, rnn.PackedSequence):
        return ("packed",) + tuple(plain(i) for i in v)
    if isinstance(v, (tuple, list)):
        return tuple(plain(i) for i in v)
    return v


def show(name, make):
    try:
        v = make()
    except Exception as e:
        print(name, type(e).__name__)
        return
    print(name, plain(v))


def filled(m):
    with st.no_grad():
        for i, (_, p) in enumerate(sorted(m.named_parameters())):
            p.copy_((st.arange(p.numel(), dtype=st.float64).reshape(p.shape) * 0.37 + i).sin() * 0.5)
    return m


x = (st.arange(5 * 3 * 2, dtype=st.float64).reshape(5, 3, 2) * 0.29).sin()
show("pack sorted", lambda: rnn.pack_padded_sequence(x, [5, 3, 2]))
show("pack unsorted", lambda: rnn.pack_padded_sequence(x, st.tensor([2, 5, 3]), enforce_sorted=False))
show("pack unsorted enforced", lambda: rnn.pack_padded_sequence(x, [2, 5, 3]))
show("pack zero length", lambda: rnn.pack_padded_sequence(x, [5, 3, 0]))
show("pack batch_first", lambda: rnn.pack_padded_sequence(x.transpose(0, 1), [4, 4, 1], batch_first=True))
packed = rnn.pack_padded_sequence(x, [3, 5, 2], enforce_sorted=False)
show("pad again", lambda: rnn.pad_packed_sequence(packed))
show("pad batch_first total", lambda: rnn.pad_packed_sequence(packed, batch_first=True, padding_value=-1.0, total_length=6))
show("pad total too short", lambda: rnn.pad_packed_sequence(packed, total_length=3))
seqs = [x[:4, 0], x[:2, 1], x[:5, 2]]
show("pack_sequence", lambda: rnn.pack_sequence(seqs, enforce_sorted=False))
show("unpack_sequence", lambda: rnn.unpack_sequence(rnn.pack_sequence(seqs, enforce_sorted=False)))
for mode in ("LSTM", "GRU", "RNN"):
    for layers, bi in ((1, False), (2, True)):
        m = filled(getattr(nn, mode)(2, 3, num_layers=layers, bidirectional=bi))
        show(f"{mode} layers={layers} bi={bi}", lambda: m(packed))
m = filled(nn.LSTM(2, 3, batch_first=True))
h0 = (st.arange(9, dtype=st.float64).reshape(1, 3, 3) * 0.1, -st.arange(9, dtype=st.float64).reshape(1, 3, 3) * 0.05)
show("LSTM batch_first h0", lambda: m(rnn.pack_padded_sequence(x.transpose(0, 1), [2, 5, 3], batch_first=True, enforce_sorted=False), h0))
g = filled(nn.GRU(2, 3))
out, h = g(packed)
show("GRU padded output", lambda: rnn.pad_packed_sequence(out))
show("GRU last state equals padded run", lambda: [round(float((h[0, i] - g(x[:n, i:i + 1])[1][0, 0]).abs().max()), 12) for i, n in enumerate([3, 5, 2])])
