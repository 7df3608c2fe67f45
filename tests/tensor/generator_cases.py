"""torch.Generator: a seeded stream of its own, given to rand, randn, randint, randperm,
bernoulli, multinomial, normal, poisson, exponential_, random_split and DataLoader; the global stream untouched by
it. The numbers differ from torch's (another generator), so what is printed is what holds
for both: `python3 generator_cases.py torch` printed generator_cases.expected with PyTorch
2.5.1 (tests/tensor_api.rs compares the fork's output, plain and under the plugin, with it)."""
import sys
if sys.argv[1:] == ["torch"]:
    import torch as st
    from torch.utils.data import DataLoader, TensorDataset, random_split
else:
    import symtrace as st
    from symtrace.utils.data import DataLoader, TensorDataset, random_split


def draws(g):
    w = st.tensor([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]], dtype=st.float64)
    return [st.randperm(10, generator=g).tolist(),
            st.bernoulli(st.full((6,), 0.5, dtype=st.float64), generator=g).tolist(),
            st.multinomial(w, 4, True, generator=g).tolist(),
            st.normal(st.zeros(3, dtype=st.float64), 1.0, generator=g).tolist(),
            st.poisson(st.full((4,), 3.0, dtype=st.float64), generator=g).tolist(),
            st.empty(3, dtype=st.float64).exponential_(generator=g).tolist(),
            st.rand(2, 3, generator=g, dtype=st.float64).tolist(),
            st.randn(4, generator=g).tolist(),
            st.randint(0, 10, (5,), generator=g).tolist(),
            st.randint(3, (2,), generator=g).tolist()]


st.manual_seed(1)
before = st.rand(4).tolist()
st.manual_seed(1)
a = draws(st.Generator().manual_seed(42))
after = st.rand(4).tolist()
print("global stream untouched by a generator's draws:", before == after)
print("same seed, same draws:", a == draws(st.Generator().manual_seed(42)))
print("another seed, other draws:", a != draws(st.Generator().manual_seed(43)))
g = st.Generator().manual_seed(7)
print("initial_seed:", g.initial_seed())
state = g.get_state()
first = st.randperm(20, generator=g).tolist()
g.set_state(state)
print("state restored, draws again:", first == st.randperm(20, generator=g).tolist())
print("the state moves on:", first != st.randperm(20, generator=g).tolist())
data = TensorDataset(st.arange(10))
splits = [[s.indices for s in random_split(data, [7, 3], generator=st.Generator().manual_seed(0))] for _ in range(2)]
print("random_split reproducible:", splits[0] == splits[1], [len(x) for x in splits[0]], sorted(splits[0][0] + splits[0][1]) == list(range(10)))
orders = []
for seed in (5, 5, 6):
    st.manual_seed(seed * 100)
    loader = DataLoader(data, batch_size=4, shuffle=True, generator=st.Generator().manual_seed(3))
    orders.append([b[0].tolist() for b in loader])
print("DataLoader shuffles by its generator:", orders[0] == orders[1] == orders[2], [len(b) for b in orders[0]])
for name, draw in [("randperm", lambda g: st.randperm(3, generator=g)),
                   ("rand", lambda g: st.rand(3, generator=g)),
                   ("randn", lambda g: st.randn(3, generator=g))]:
    try:
        draw(object())
    except TypeError:
        print(name, "not a generator: TypeError")
print("a None generator is the global stream:", st.rand(2, generator=None).shape == (2,))
