"""Small pieces of torch's API that model and data code calls: `addcmul_`/`addcdiv_`,
`stride`, `storage_offset`, `nbytes`, `itemsize`, `unique_consecutive`, `masked_scatter`,
`put_`, `nanmedian`, `nanquantile`, `renorm`, the legacy tensor types (`torch.FloatTensor`...), `nn.Embedding.from_pretrained`
and `max_norm`, `BatchNorm3d`, `nn.init.dirac_`, `F.pdist` and the losses
`multi_margin_loss`, `multilabel_soft_margin_loss`, `triplet_margin_with_distance_loss`,
`GaussianNLLLoss`, `HingeEmbeddingLoss`:
`python3 api_fill_cases.py torch` printed api_fill_cases.expected with PyTorch 2.5.1
(tests/tensor_api.rs compares the fork's output, plain and under the plugin, with it)."""
import sys
if sys.argv[1:] == ["torch"]:
    import torch as st
else:
    import symtrace as st
nn = st.nn
F = st.nn.functional


def plain(v):
    if isinstance(v, st.Tensor):
        return (tuple(v.shape), str(v.dtype).split(".")[-1],
                [round(x, 10) + 0.0 if isinstance(x, float) else x for x in v.flatten().tolist()])
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


d = st.float64
x = st.arange(12, dtype=d).reshape(3, 4) / 5 - 1
y = st.arange(12, dtype=d).reshape(3, 4) / 7 + 0.5


def in_place(method, *args, **kwargs):
    t = x.clone()
    r = getattr(t, method)(*args, **kwargs)
    return r is t, t


show("addcmul_", lambda: in_place("addcmul_", y, y, value=0.5))
show("addcdiv_", lambda: in_place("addcdiv_", x, y, value=-2))
show("stride", lambda: (st.zeros(2, 3, 4).stride(), st.zeros(2, 3, 4).stride(1), st.zeros(2, 0, 4).stride(), st.tensor(1.0).stride()))
show("storage_offset", lambda: x.storage_offset())
show("nbytes", lambda: (x.nbytes, x.float().nbytes, x.long().itemsize, (x > 0).nbytes))
v = st.tensor([1, 1, 2, 2, 3, 1, 1, 2])
show("unique_consecutive", lambda: st.unique_consecutive(v))
show("unique_consecutive inverse counts", lambda: v.unique_consecutive(return_inverse=True, return_counts=True))
show("unique_consecutive 2d", lambda: st.unique_consecutive(st.tensor([[1, 1], [1, 3]]), return_counts=True))
mask = st.tensor([[True, False, True, False], [False, False, True, True], [True, True, True, True]])
show("masked_scatter", lambda: x.masked_scatter(mask, st.arange(20, dtype=d) * 10))
show("masked_scatter broadcast", lambda: x.masked_scatter(st.tensor([True, False, False, True]), -st.arange(6, dtype=d)))
show("masked_scatter_", lambda: in_place("masked_scatter_", mask, st.ones(9, dtype=d)))
show("masked_scatter short source", lambda: x.masked_scatter(mask, st.ones(3, dtype=d)))
show("put_", lambda: in_place("put_", st.tensor([0, 5, 11]), st.tensor([9.0, 8.0, 7.0], dtype=d)))
show("put_ accumulate", lambda: in_place("put_", st.tensor([1, 1, -1]), st.tensor([1.0, 2.0, 3.0], dtype=d), accumulate=True))
show("FloatTensor data", lambda: st.FloatTensor([1.5, 2]))
show("FloatTensor sizes", lambda: st.FloatTensor(2, 3).shape)
show("FloatTensor empty", lambda: st.FloatTensor().shape)
show("LongTensor", lambda: st.LongTensor([[1, 2], [3, 4]]))
show("DoubleTensor", lambda: st.DoubleTensor([1, 2]))
show("BoolTensor", lambda: st.BoolTensor([1, 0]))
show("isinstance FloatTensor", lambda: (isinstance(x.float(), st.FloatTensor), isinstance(x, st.FloatTensor), isinstance(x, st.DoubleTensor), isinstance(1.0, st.FloatTensor)))
show("type FloatTensor", lambda: x.type(st.FloatTensor))
show("type LongTensor name", lambda: x.type(st.LongTensor).type())
table = st.arange(15, dtype=d).reshape(5, 3) / 4
e = nn.Embedding.from_pretrained(table)
show("from_pretrained", lambda: e(st.tensor([[0, 4], [2, 2]])))
show("from_pretrained repr", lambda: (repr(e), e.weight.shape, len(list(e.parameters()))))
show("from_pretrained padding", lambda: nn.Embedding.from_pretrained(table, padding_idx=1).padding_idx)
show("from_pretrained 1d", lambda: nn.Embedding.from_pretrained(st.ones(3)))
m = nn.Embedding(5, 3, max_norm=1.0, _weight=table.clone())
show("max_norm lookup", lambda: m(st.tensor([1, 3])))
show("max_norm table", lambda: m.weight)
show("max_norm repr", lambda: repr(m))
show("embedding max_norm p1", lambda: F.embedding(st.tensor([4]), table.clone(), max_norm=2.0, norm_type=1.0))
show("embedding sparse kw", lambda: nn.Embedding(4, 2, sparse=False).weight.shape)
vol = st.arange(2 * 3 * 2 * 2 * 2, dtype=d).reshape(2, 3, 2, 2, 2) / 9
bn = nn.BatchNorm3d(3).double()
show("BatchNorm3d train", lambda: bn(vol))
show("BatchNorm3d running", lambda: bn.running_mean)
show("BatchNorm3d 4d", lambda: bn(vol[0]))
w = st.empty(4, 2, 3, 3, dtype=d)
show("dirac_", lambda: nn.init.dirac_(w))
show("dirac_ groups", lambda: nn.init.dirac_(st.empty(4, 1, 3, dtype=d), groups=2))
show("dirac_ 2d", lambda: nn.init.dirac_(st.empty(2, 2)))
show("pdist", lambda: F.pdist(x))
show("pdist p1", lambda: F.pdist(x, p=1))
show("pdist 3d", lambda: F.pdist(vol))
logits = st.tensor([[0.1, 0.2, 0.4, 0.8], [0.9, -0.5, 0.3, 0.0], [0.2, 0.2, 0.2, 0.2]], dtype=d)
target = st.tensor([3, 0, 1])
show("multi_margin", lambda: F.multi_margin_loss(logits, target))
show("multi_margin p2 margin none", lambda: F.multi_margin_loss(logits, target, p=2, margin=0.7, reduction="none"))
show("multi_margin weight sum", lambda: F.multi_margin_loss(logits, target, weight=st.tensor([1.0, 2.0, 0.5, 3.0], dtype=d), reduction="sum"))
show("multi_margin 1d", lambda: F.multi_margin_loss(logits[0], target[:1], reduction="none"))
show("MultiMarginLoss", lambda: nn.MultiMarginLoss(p=2)(logits, target))
show("MultiMarginLoss p3", lambda: nn.MultiMarginLoss(p=3))
labels = st.tensor([[0, 1, 1, 0], [1, 0, 0, 0], [1, 1, 1, 1]], dtype=d)
show("multilabel_soft_margin", lambda: F.multilabel_soft_margin_loss(logits, labels))
show("multilabel_soft_margin none weight", lambda: F.multilabel_soft_margin_loss(logits, labels, weight=st.tensor([1.0, 0.5, 2.0, 1.0], dtype=d), reduction="none"))
show("MultiLabelSoftMarginLoss", lambda: nn.MultiLabelSoftMarginLoss(reduction="sum")(logits, labels))
a, p, n = x, y, x.flip(0)
show("triplet_with_distance", lambda: F.triplet_margin_with_distance_loss(a, p, n))
show("triplet_with_distance cosine swap", lambda: F.triplet_margin_with_distance_loss(a, p, n, distance_function=lambda u, v: 1 - F.cosine_similarity(u, v), margin=0.5, swap=True, reduction="none"))
show("TripletMarginWithDistanceLoss", lambda: nn.TripletMarginWithDistanceLoss(margin=2.0)(a, p, n))
show("TripletMarginWithDistanceLoss bad margin", lambda: nn.TripletMarginWithDistanceLoss(margin=0))
show("GaussianNLLLoss", lambda: nn.GaussianNLLLoss()(x, y, y.abs() + 0.1))
show("GaussianNLLLoss full none", lambda: nn.GaussianNLLLoss(full=True, reduction="none")(x, y, (y[:, :1] + 0.1)))
show("HingeEmbeddingLoss", lambda: nn.HingeEmbeddingLoss(margin=0.5)(x, st.tensor([1, -1, 1, -1]).expand(3, 4)))
nanx = st.tensor([[1.0, float("nan"), 3.0, 2.0], [float("nan")] * 4, [5.0, 4.0, float("nan"), float("inf")]], dtype=d)
show("nanmedian all", lambda: nanx.nanmedian())
# (An all-NaN row's index is where torch's partial sort leaves it: not compared.)
show("nanmedian dim 1", lambda: (nanx.nanmedian(1).values, nanx.nanmedian(1).indices[st.tensor([0, 2])]))
show("nanmedian dim 0 keepdim", lambda: tuple(st.nanmedian(nanx, 0, keepdim=True)))
show("nanmedian ints", lambda: st.tensor([3, 1, 2, 2]).nanmedian())
show("nanmedian all nan", lambda: st.tensor([float("nan")] * 3, dtype=d).nanmedian())
show("nanquantile", lambda: st.nanquantile(nanx, 0.3, dim=1))
show("nanquantile q tensor keepdim", lambda: nanx.nanquantile(st.tensor([0.0, 0.5, 1.0], dtype=d), dim=1, keepdim=True))
show("nanquantile all", lambda: nanx.nanquantile(0.75))
for how in ("lower", "higher", "midpoint", "nearest"):
    show(f"nanquantile {how}", lambda: nanx.nanquantile(0.4, dim=1, interpolation=how))
show("nanquantile bad q", lambda: nanx.nanquantile(1.5))
show("renorm", lambda: x.renorm(2, 0, 1.0))
show("renorm dim 1 p1", lambda: x.renorm(1, 1, 0.5))
show("renorm_", lambda: in_place("renorm_", 2, 1, 0.8))
