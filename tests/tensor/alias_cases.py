"""torch's top-level spellings of functional and in-place ops (`torch.conv2d`,
`torch.dropout(x, p, train)`, `torch.layer_norm`, `torch.batch_norm` and `torch.embedding` in
their native argument orders, `torch.relu_`...) and small functions (`rsub`, `addmv`, `addr`,
`addbmm`, `ger`, `chain_matmul`, `row_stack`, `scalar_tensor`, `asarray`, `fill`, `is_signed`):
`python3 alias_cases.py torch` printed alias_cases.expected with PyTorch 2.5.1
(tests/tensor_api.rs compares the fork's output, plain and under the plugin, with it)."""
import sys
if sys.argv[1:] == ["torch"]:
    import torch as st
else:
    import symtrace as st


def show(name, make):
    try:
        v = make()
    except Exception as e:
        print(name, type(e).__name__)
        return
    if isinstance(v, st.Tensor):
        v = (tuple(v.shape), [round(x, 10) + 0.0 if isinstance(x, float) else x for x in v.flatten().tolist()])
    print(name, v)


d = st.float64
x = st.arange(24, dtype=d).reshape(2, 3, 4) / 7 - 1
w = st.arange(18, dtype=d).reshape(2, 3, 3) / 11 - 0.5
img = st.arange(2 * 3 * 5 * 5, dtype=d).reshape(2, 3, 5, 5) / 50 - 1
k2 = st.arange(4 * 3 * 3 * 3, dtype=d).reshape(4, 3, 3, 3) / 100 - 0.5
show("conv1d", lambda: st.conv1d(x.transpose(1, 2)[:, :3], w[:1].expand(2, 3, 3).contiguous(), None, 1, 1))
show("conv2d", lambda: st.conv2d(img, k2, st.ones(4, dtype=d), 2, 1))
show("conv_transpose2d", lambda: st.conv_transpose2d(img, k2.transpose(0, 1).contiguous(), None, 2))
show("max_pool2d", lambda: st.max_pool2d(img, 2))
show("avg_pool1d", lambda: st.avg_pool1d(x, 2))
show("adaptive_avg_pool1d", lambda: st.adaptive_avg_pool1d(x, 3))
show("dropout eval", lambda: st.dropout(x, 0.5, False))
show("layer_norm", lambda: st.layer_norm(x, (4,), None, None, 1e-5, True))
show("group_norm", lambda: st.group_norm(img, 3, None, None, 1e-5, True))
rm, rv = st.zeros(3, dtype=d), st.ones(3, dtype=d)
show("batch_norm", lambda: st.batch_norm(x, st.full((3,), 2.0, dtype=d), st.full((3,), 0.5, dtype=d), rm, rv, False, 0.1, 1e-5, True))
show("instance_norm", lambda: st.instance_norm(img, None, None, None, None, True, 0.1, 1e-5, True))
show("embedding", lambda: st.embedding(w[0], st.tensor([[2, 0], [1, 1]])))
show("cosine_similarity", lambda: st.cosine_similarity(x[0], x[1], 1))
show("pairwise_distance", lambda: st.pairwise_distance(x[0], x[1]))
show("pixel_shuffle", lambda: st.pixel_shuffle(st.arange(16, dtype=d).reshape(1, 4, 2, 2), 2))
show("selu celu", lambda: st.selu(x) + st.celu(x, 0.5))
show("threshold hardshrink", lambda: st.threshold(x, 0.1, 20.0) + st.hardshrink(x, 0.3))
show("prelu", lambda: st.prelu(x, st.tensor([0.25], dtype=d)))
show("relu_", lambda: st.relu_(x.clone()))
show("sigmoid_ exp_", lambda: st.exp_(st.sigmoid_(x.clone())))
show("clamp_", lambda: st.clamp_(x.clone(), -0.5, 0.5))
show("rsub", lambda: st.rsub(x, 2.0, alpha=3))
show("addmv", lambda: st.addmv(x[0, 0, :3], x[0, :, :3], x[1, 0, :3], beta=0.5, alpha=2))
show("addr", lambda: st.addr(x[0, :, :3], x[0, 0, :3], x[1, 1, :3]))
show("addbmm", lambda: st.addbmm(x[0, :, :3], x[:, :, :2], x[:, :2, :3]))
show("ger", lambda: st.ger(x[0, 0], x[0, 1]))
show("chain_matmul", lambda: st.chain_matmul(x[0], x[1].T, x[0]))
show("row_stack", lambda: st.row_stack([x[0, 0], x[1, 1]]))
show("scalar_tensor", lambda: (st.scalar_tensor(3.5, dtype=d).item(), tuple(st.scalar_tensor(2).shape)))
show("asarray", lambda: st.asarray([[1, 2], [3, 4]], dtype=d))
show("fill", lambda: st.fill(x[0], 1.5))
show("detach", lambda: st.detach(x[0, 0]))
show("is_signed", lambda: (st.is_signed(x), st.is_signed(st.tensor([True])), st.is_signed(st.tensor([1]))))
show("is_same_size", lambda: (st.is_same_size(x, x * 2), st.is_same_size(x, x[0])))
show("positive bool", lambda: st.positive(st.tensor([True])))
