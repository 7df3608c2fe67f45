"""symtrace.nn.utils: torch.nn.utils' helpers that need no gradients: `parameters_to_vector`,
`vector_to_parameters`, and `rnn` (`pad_sequence`)."""
import symtrace as st


def parameters_to_vector(parameters):
    """The parameters, flattened, one after another."""
    return st.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Each parameter's data set from its stretch of `vec`, in order."""
    if not isinstance(vec, st.Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    offset = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[offset:offset + n].view_as(p)
        offset += n
