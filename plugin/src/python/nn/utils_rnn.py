"""symtrace.nn.utils.rnn: `pad_sequence`, sequences of different lengths as one tensor."""
import symtrace as st


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
