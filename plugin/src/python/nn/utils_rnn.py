"""symtrace.nn.utils.rnn: sequences of different lengths as one tensor (`pad_sequence`) or
packed step after step (`PackedSequence`, `pack_padded_sequence`, `pad_packed_sequence`,
`pack_sequence`, `unpack_sequence`), as the recurrent layers take them."""
import symtrace as st

PackedSequence = st.nn._PackedSequence


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """The sequences (`(L_i, *)` each) stacked into `(L, B, *)` (`(B, L, *)` with
    `batch_first`), each filled up to the longest with `padding_value`."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.shape[0] for s in sequences)
    first = sequences[0]
    # Filled, then each sequence stored at its rows: one op per sequence, no fill of no
    # rows made for the longest, and the lengths stay sizes.
    out = st.full((len(sequences), longest) + tuple(first.shape[1:]), padding_value,
                  dtype=first.dtype)
    for i, s in enumerate(sequences):
        if padding_side == "right":
            out[i, : s.shape[0]] = s
        else:
            out[i, longest - s.shape[0]:] = s
    return out if batch_first else out.transpose(0, 1)


def _lengths_list(lengths):
    return [int(n) for n in (lengths.tolist() if isinstance(lengths, st.Tensor) else lengths)]


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """The padded batch `input` (`(T, B, *)`, `(B, T, *)` with `batch_first`) packed: the
    sequences sorted longest first (they must come so with `enforce_sorted`), then their
    steps one after another, each step holding the sequences that are that long."""
    lengths = _lengths_list(lengths)
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:])):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability.")
        order = None
    else:
        order = st.tensor(sorted(range(len(lengths)), key=lambda i: -lengths[i]), dtype=st.int64)
        lengths = sorted(lengths, reverse=True)
    if batch_first:
        input = input.transpose(0, 1)
    if order is not None:
        input = input.index_select(1, order)
    if len(lengths) != input.shape[1]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(lengths)} (batch_size={input.shape[1]})")
    if lengths and lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    sizes = _step_sizes(lengths)
    data = st.cat([input[t, :n] for t, n in enumerate(sizes)])
    return PackedSequence(data, st.tensor(sizes, dtype=st.int64), order, None)


def _step_sizes(lengths):
    """How many of the sequences (longest first) each step has."""
    sizes = []
    for t in range(lengths[0]):
        n = 0
        while n < len(lengths) and lengths[n] > t:
            n += 1
        sizes.append(n)
    return sizes


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """A packed batch padded again (`(T, B, *)`, `(B, T, *)` with `batch_first`) in its own
    order, and the length of each sequence."""
    sizes = sequence.batch_sizes.tolist()
    steps = len(sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{steps}")
        steps = total_length
    data = sequence.data
    out = st.full((steps, sizes[0]) + tuple(data.shape[1:]), padding_value, dtype=data.dtype)
    offset = 0
    for t, n in enumerate(sizes):
        out[t, :n] = data[offset:offset + n]
        offset += n
    lengths = st.tensor(_step_sizes(sizes), dtype=st.int64)
    if sequence.unsorted_indices is not None:
        out = out.index_select(1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices]
    return (out.transpose(0, 1) if batch_first else out), lengths


def pack_sequence(sequences, enforce_sorted=True):
    """Sequences (`(L_i, *)` each) packed (`pack_padded_sequence` of their padding)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The sequences a packed batch holds, each cut to its length."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return [padded[i, :n] for i, n in enumerate(lengths.tolist())]
