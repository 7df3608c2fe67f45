"""The cases of symtrace.nn, written once for both libraries: `make_reference.py` runs them
with PyTorch on CPython (the committed `reference.json`), `run_cases.py` with symtrace on the
fork (eagerly, and traced through st.compile). Each case is a statement that sets `result` (a
tensor, a number, or a tuple of them); it sees `nn`, `F`, `T(data, dtype)`, `load(module,
state)` (the module's parameters set from nested lists) and the inputs below."""

INPUTS = {
    "x": ("[[0.5, -1.25, 2.0], [3.0, 0.25, -0.75]]", "float64"),
    "x3": ("[[[0.1, 0.2, 0.3, 0.4], [1.0, -1.0, 0.5, 2.0]], [[-0.3, 0.7, 1.1, 0.0], [2.5, 0.5, -1.5, 1.0]]]", "float64"),
    "xf": ("[[0.5, -1.25, 2.0], [3.0, 0.25, -0.75]]", "float32"),
    "w": ("[[0.2, -0.1, 0.4], [0.5, 0.3, -0.2], [-0.6, 0.1, 0.9], [0.05, 0.7, -0.3]]", "float64"),
    "b": ("[0.1, -0.2, 0.3, 0.0]", "float64"),
    "idx": ("[[1, 4, 0], [3, 3, 2]]", "int64"),
    "logits": ("[[1.0, 2.0, 0.5, -1.0], [0.3, -0.2, 2.2, 1.1], [-0.5, 0.0, 0.5, 1.0]]", "float64"),
    "target": ("[1, 2, 3]", "int64"),
    "q": ("[[[0.1, 0.3], [0.5, -0.2], [0.9, 0.4]], [[-0.3, 0.8], [0.2, 0.2], [1.0, -1.0]]]", "float64"),
    "k": ("[[[0.2, -0.1], [0.4, 0.6], [-0.5, 0.3]], [[0.7, 0.1], [-0.2, 0.9], [0.3, 0.3]]]", "float64"),
    "img": ("[[[[((n * 7 + c * 5 + h * 3 + w) % 11 - 5) / 4 for w in range(5)] for h in range(4)] for c in range(3)] for n in range(2)]", "float64"),
    "v": ("[[[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]], [[2.0, -1.0], [0.3, 0.7], [-0.4, 1.2]]]", "float64"),
}

EMBED = "[[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [-0.1, -0.2, -0.3], [1.0, 0.0, -1.0], [0.25, 0.5, 0.75]]"

SEQ = "[[[((b * 5 + t * 3 + e) % 7 - 3) / 4 for e in range(4)] for t in range(3)] for b in range(2)]"

CASES = [
    # functional
    ("linear", "result = F.linear(x, w, b)"),
    ("linear_no_bias", "result = F.linear(x3[..., :3], w)"),
    ("linear_float32", "result = F.linear(xf, T(W_DATA, 'float32'), T(B_DATA, 'float32'))"),
    ("linear_mismatch", "result = F.linear(x, T([[1.0, 2.0]], 'float64'))"),
    ("embedding", f"result = F.embedding(idx, T({EMBED}, 'float64'))"),
    ("layer_norm", "result = F.layer_norm(x, (3,), T([1.0, 2.0, 0.5], 'float64'), T([0.0, 0.1, -0.1], 'float64'))"),
    ("layer_norm_2d", "result = F.layer_norm(x3, (2, 4))"),
    ("layer_norm_eps", "result = F.layer_norm(x, (3,), eps=0.5)"),
    ("gelu", "result = F.gelu(x3)"),
    ("gelu_tanh", "result = F.gelu(x3, approximate='tanh')"),
    ("relu", "result = F.relu(x)"),
    ("softmax_last", "result = F.softmax(logits, dim=-1)"),
    ("softmax_first", "result = F.softmax(logits, dim=0)"),
    ("log_softmax", "result = F.log_softmax(logits, dim=1)"),
    ("dropout_eval", "result = F.dropout(x, 0.5, training=False)"),
    ("dropout_p0", "result = F.dropout(x, 0.0, training=True)"),
    ("cross_entropy", "result = F.cross_entropy(logits, target)"),
    ("cross_entropy_sum", "result = F.cross_entropy(logits, target, reduction='sum')"),
    ("cross_entropy_none", "result = F.cross_entropy(logits, target, reduction='none')"),
    ("cross_entropy_ignore", "result = F.cross_entropy(logits, T([1, -100, 3], 'int64'))"),
    ("cross_entropy_smoothing", "result = F.cross_entropy(logits, target, label_smoothing=0.1)"),
    ("cross_entropy_out_of_range", "result = F.cross_entropy(logits, T([1, 7, 3], 'int64'))"),
    ("sdpa", "result = F.scaled_dot_product_attention(q, k, v)"),
    ("sdpa_causal", "result = F.scaled_dot_product_attention(q, k, v, is_causal=True)"),
    ("sdpa_bool_mask", "result = F.scaled_dot_product_attention(q, k, v, attn_mask=T([[True, False, True], [True, True, False], [False, True, True]], 'bool'))"),
    ("sdpa_float_mask", "result = F.scaled_dot_product_attention(q, k, v, attn_mask=T([[0.0, -1.0, 0.5], [0.2, 0.0, -2.0], [1.0, 0.3, 0.0]], 'float64'), scale=0.5)"),
    # modules
    ("Linear", "m = nn.Linear(3, 4); load(m, {'weight': W_DATA, 'bias': B_DATA}); result = m(x)"),
    ("Linear_no_bias", "m = nn.Linear(3, 4, bias=False); load(m, {'weight': W_DATA}); result = m(x)"),
    ("Embedding", f"m = nn.Embedding(5, 3); load(m, {{'weight': {EMBED}}}); result = m(idx)"),
    ("LayerNorm", "m = nn.LayerNorm(3); load(m, {'weight': [1.0, 2.0, 0.5], 'bias': [0.0, 0.1, -0.1]}); result = m(x)"),
    ("LayerNorm_no_bias", "m = nn.LayerNorm(4, bias=False); load(m, {'weight': [1.0, 0.5, 2.0, 1.0]}); result = m(x3)"),
    ("Dropout_eval", "m = nn.Dropout(0.3).eval(); result = m(x)"),
    ("GELU", "result = nn.GELU()(x3), nn.GELU('tanh')(x3)"),
    ("ReLU", "result = nn.ReLU()(x)"),
    ("Softmax", "result = nn.Softmax(dim=1)(logits)"),
    ("Sequential", "m = nn.Sequential(nn.Linear(3, 4), nn.GELU(), nn.Linear(4, 2)); load(m, {'0.weight': W_DATA, '0.bias': B_DATA, '2.weight': [[0.3, -0.2, 0.1, 0.5], [0.0, 0.4, -0.6, 0.2]], '2.bias': [0.05, -0.05]}); result = m(x)"),
    ("ModuleList", "ms = nn.ModuleList([nn.Linear(3, 3, bias=False) for _ in range(2)]); load(ms, {'0.weight': SQ_DATA, '1.weight': SQ_DATA}); h = x\nfor m in ms:\n    h = m(h)\nresult = h, len(ms)"),
    ("ModuleDict", "md = nn.ModuleDict({'act': nn.ReLU(), 'proj': nn.Linear(3, 4)}); load(md, {'proj.weight': W_DATA, 'proj.bias': B_DATA}); result = md['proj'](md['act'](x)), len(md), 'act' in md"),
    ("parameter_count", "m = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4), nn.Embedding(5, 2)); result = sum(p.numel() for p in m.parameters()), len(list(m.named_parameters()))"),
    # the tensor ops the modules use
    ("erf", "result = x3.erf()"),
    ("tril_triu", "result = x3.tril(), x3.triu(1), x3.tril(-1)"),
    ("masked_fill", "result = x.masked_fill(x > 0.4, -1.0)"),
    ("masked_fill_rows", "result = x3.masked_fill(T([[True, False, False, True], [False, True, False, False]], 'bool'), 0.5), x3.masked_fill(T([False, True, True, False], 'bool'), -2.0)"),
    ("masked_fill_lanes", "result = x3.masked_fill(T([[[True]], [[False]]], 'bool'), 9.0), x3.transpose(1, 2).masked_fill(T([[True, False]], 'bool'), 1.5)"),
    ("tril_transposed", "result = x3.transpose(1, 2).tril(), x3.transpose(0, 2).triu()"),
    ("split_chunk", "result = x3.split(3, dim=2) + x3.chunk(2, dim=1)"),
    ("split_sizes", "result = x3.split([1, 3], dim=2)"),
    ("gather", "result = logits.gather(1, T([[0, 3], [2, 2], [1, 0]], 'int64'))"),
    ("index_select", "result = logits.index_select(0, T([2, 0], 'int64')), logits.index_select(1, T([3], 'int64'))"),
    ("var", "result = x3.var(dim=-1), x3.var(dim=-1, unbiased=False, keepdim=True), x3.var()"),
    ("mean_dims", "result = x3.mean(dim=(1, 2)), x3.sum(dim=(0, 2), keepdim=True)"),
    ("view_size", "result = x3.view(4, 4).size(), x3.view(-1, 2).size(0), x3.transpose(1, 2).contiguous().view(2, 8)"),
    # activations, norms and losses of llama-style and convolution-free models
    ("silu", "result = F.silu(x3), nn.SiLU()(x)"),
    ("sigmoid_tanh_identity", "result = F.sigmoid(x), F.tanh(x), nn.Sigmoid()(x3), nn.Tanh()(x3), nn.Identity(5, k=2)(x)"),
    ("rms_norm", "result = F.rms_norm(x3, (4,)), F.rms_norm(x, (3,), T([1.0, 2.0, 0.5], 'float64'), eps=0.1), F.rms_norm(xf, [3])"),
    ("rms_norm_mismatch", "result = F.rms_norm(x, (4,))"),
    ("RMSNorm", "m = nn.RMSNorm(4); load(m, {'weight': [1.0, 0.5, 2.0, 1.0]}); result = m(x3), nn.RMSNorm(3, eps=1e-3, elementwise_affine=False)(x)"),
    ("normalize", "result = F.normalize(x), F.normalize(x3, dim=-1), F.normalize(x, p=1.0, dim=0)"),
    ("mse_loss", "result = F.mse_loss(x, x * 0.5), F.mse_loss(x, x.flip(1), reduction='sum'), F.mse_loss(x, x * 2.0, reduction='none')"),
    ("BatchNorm1d_train", "m = nn.BatchNorm1d(3); load(m, {'weight': [1.0, 2.0, 0.5], 'bias': [0.0, 0.1, -0.1]}); y1 = m(x); y2 = m(x * 2.0 + 1.0); result = y1, y2, m.running_mean, m.running_var, m.num_batches_tracked"),
    ("BatchNorm1d_3d_eval", "m = nn.BatchNorm1d(2); m(x3); m.eval(); result = m(x3), m.running_mean, m.running_var, m.num_batches_tracked"),
    ("BatchNorm1d_cumulative", "m = nn.BatchNorm1d(3, momentum=None); m(x); m(x * 3.0); result = m.running_mean, m.running_var"),
    ("BatchNorm1d_no_stats", "m = nn.BatchNorm1d(3, affine=False, track_running_stats=False); result = m(x), m.running_mean is None"),
    ("BatchNorm1d_one_row", "m = nn.BatchNorm1d(3); result = m(x[:1])"),
    # in-place updates: each returns the tensor it changed
    ("inplace_methods", "a = x.clone(); b = a.add_(1.0).mul_(2.0); c = x.clone().sub_(x, alpha=0.5).div_(4.0); d = x.clone().clamp_(-1.0, 1.0); e = x.clone().masked_fill_(x > 0.4, 0.0); z = x.clone().zero_(); f = x.clone().fill_(3.5); g = x.clone().copy_(T([1.0, 2.0, 3.0], 'float64')); r = x.clone().relu_(); result = a, b is a, c, d, e, z, f, g, r"),
    ("lerp", "result = x.lerp(x3[0, :, :3], 0.3), x.lerp(x * 2.0, 0.75), x.clone().lerp_(x * -1.0, T([0.0, 0.5, 1.0], 'float64'))"),
    ("max_min_dim", "v, i = x.max(1); m = x3.min(dim=-1, keepdim=True); result = v, i, m.values, m.indices, x.max(0)[0], x.max(), x.min(), x.max(x * -1.0), logits.max(dim=0).indices"),
    ("einsum", "result = st_einsum('bij,bjk->bik', q, k.transpose(1, 2)), st_einsum('bid,bjd->bij', q, k), st_einsum('ij->ji', x), st_einsum('ij->', x), st_einsum('bij->bj', x3), st_einsum('ij,kj->ik', x, w), st_einsum('i,i->', b, b), st_einsum('i,j->ij', b, b), st_einsum('...d,od->...o', x3[..., :3], w), st_einsum('bhid,bhjd->bhij', x3.reshape(1, 2, 2, 4), x3.reshape(1, 2, 2, 4)), st_einsum('ij,jk,kl->il', x, w.transpose(0, 1), w), st_einsum('ij,ij->i', x, x * 2.0), st_einsum('ji', x)"),
    ("einsum_mismatch", "result = st_einsum('ij,jk->ik', x, x)"),
    ("cumsum", "result = x.cumsum(-1), x3.cumsum(dim=1), T([[True, False, True]], 'bool').cumsum(-1), idx.cumsum(0), xf.cumsum(1), (T([[True, True, False]], 'bool').long().cumsum(-1) - 1)"),
    ("reshuffles", "result = x3.movedim(0, -1), x3.movedim((0, 1), (2, 0)), x3.swapaxes(0, 2), x3.swapdims(1, -1), x3.unflatten(2, (2, 2)), x3.unflatten(-1, (2, -1)), x.repeat_interleave(2, dim=1), x.repeat_interleave(3), x3.roll(1, 2), x3.roll((1, -1), (0, 1)), x.roll(2), x.allclose(x + 1e-9), x.allclose(x + 0.5), x.tril(diagonal=-1), x3.triu(diagonal=1)"),
    ("norm_flip", "result = x.norm(), x.norm(dim=1), x3.norm(p=1, dim=-1, keepdim=True), x.norm(p=float('inf')), x.norm(p=3), x.flip(0), x3.flip((1, 2)), x.flip(-1)"),
    ("topk", "result = logits.topk(2), logits.topk(2, dim=0, largest=False), logits.topk(1, -1).indices, xf.topk(3)"),
    ("topk_out_of_range", "result = logits.topk(5)"),
    ("sort", "result = logits.sort(), logits.sort(dim=0, descending=True), logits.argsort(dim=-1), logits.argsort(0, descending=True), xf.sort().values, idx.sort(dim=-1, stable=True), idx.sort(descending=True, stable=True)"),
    ("sort_ties_nan", "s = T([[1.0, float('nan'), -0.0, 2.0, 0.0, float('-inf'), 1.0]], 'float64'); result = s.sort(stable=True), s.sort(descending=True, stable=True), s.argsort(stable=True)"),
    ("index_put", "z = x3.clone(); z[:, [1, 0]] = 5.0; z[..., T([3, 0], 'int64')] = T([1.0, 2.0], 'float64'); o = T([[0.0] * 4] * 3, 'float64'); o[T([0, 1, 2], 'int64'), target] = 1.0; w2 = x.clone(); w2[[1]] = T([[9.0, 8.0, 7.0]], 'float64'); w2[T([0], 'int64')] += 1.0; i2 = idx.clone(); i2[:, [2]] = 2.5; m = x3.clone(); m[[1, 0], :, [[2], [0]]] = -1.0; result = z, o, w2, i2, m"),
    ("index_put_among_ints", "z = x3.clone(); z[0, [1]] = 1.5; z[1, :, [0, 3]] = -2.0; z[1, 1:, T([1, 2], 'int64')] = T([5.0, 6.0], 'float64'); z[:, 0, [2]] += 3.0; y = x.clone(); y[None, [1], 0] = 9.0; result = z, y"),
    ("index_put_out_of_range", "z = x.clone(); z[:, [3]] = 1.0; result = z"),
    ("init_deterministic", "w = T([[1.0, 2.0, 5.0], [3.0, 4.0, 6.0]], 'float64'); nn.init.zeros_(w); a = w.clone(); nn.init.ones_(w); b = w.clone(); nn.init.constant_(w, 0.5); c = w.clone(); nn.init.eye_(w); result = a, b, c, w, nn.init.calculate_gain('leaky_relu', 0.2), nn.init.calculate_gain('tanh'), nn.init.calculate_gain('relu')"),
    ("module_to_dtype", "m = nn.Linear(3, 4); load(m, {'weight': W_DATA, 'bias': B_DATA}); m.float(); r1 = m(xf); m.double(); result = r1, m(x), m.to(xf)(xf), m.to(dtype=x.dtype)(x)"),
    ("MultiheadAttention", "m = nn.MultiheadAttention(2, 2, batch_first=True); load(m, MHA_STATE); causal = T([[False, True, True], [False, False, True], [False, False, False]], 'bool'); o, w = m(q, k, v); o2, w2 = m(q, k, v, attn_mask=causal, average_attn_weights=False, is_causal=True); o3, none = m(q, k, v, key_padding_mask=T([[False, False, True], [False, True, False]], 'bool'), need_weights=False); o4, w4 = m(q, k, v, attn_mask=T([[0.0, -1.0, 0.5], [0.2, 0.0, -2.0], [1.0, 0.3, 0.0]], 'float64')); result = o, w, o2, w2, o3, none is None, o4, w4"),
    ("MultiheadAttention_seq_first", "m = nn.MultiheadAttention(2, 1); load(m, MHA_STATE); o, w = m(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)); u, uw = m(q[0], k[0], v[0]); result = o, w, u, uw"),
    ("MultiheadAttention_causal_without_mask", "m = nn.MultiheadAttention(2, 2, batch_first=True); result = m(q, k, v, is_causal=True)"),
    ("interpolate_nearest", "result = F.interpolate(img, scale_factor=2), F.interpolate(img, size=(3, 7)), F.interpolate(img, scale_factor=(0.5, 1.5)), F.interpolate(img[:, :, 0], size=9), nn.Upsample(scale_factor=3)(img[:, :, :2, :2]), F.interpolate(img, size=(4, 5)), F.interpolate(img.float(), scale_factor=1.7)"),
    ("interpolate_bilinear", "result = F.interpolate(img, scale_factor=2, mode='bilinear'), F.interpolate(img, scale_factor=2, mode='bilinear', align_corners=True), F.interpolate(img, size=(3, 7), mode='bilinear', align_corners=False), F.interpolate(img, scale_factor=(0.5, 1.5), mode='bilinear'), F.interpolate(img, size=(1, 1), mode='bilinear', align_corners=True), nn.Upsample(scale_factor=2, mode='bilinear', align_corners=True)(img[:, :, :2, :3]), F.interpolate(img.float(), scale_factor=1.7, mode='bilinear')"),
    ("interpolate_linear", "result = F.interpolate(img[:, :, 0], size=9, mode='linear'), F.interpolate(img[:, :, 1], scale_factor=0.6, mode='linear', align_corners=True), F.interpolate(img[:, :, 2], scale_factor=2.5, mode='linear')"),
    ("interpolate_bilinear_3d", "result = F.interpolate(img[:, :, 0], scale_factor=2, mode='bilinear')"),
    ("interpolate_bad_mode", "result = F.interpolate(img, scale_factor=2, mode='nearest', align_corners=True)"),
    ("index_list_among_slices", "result = logits[:, [-1]], logits[[2, 0], 1:], x3[0, :, [1, 2]], x3[None, :, [1]], x3[[1, 0], :, 1], x3[..., T([[1, 3], [0, 0]], 'int64')], x3[:, -1:, [0]]"),
    ("index_several_lists", "result = x3[:, [1], [0]], x3[[0, 1], :, [[1], [3]]], x3[T([0, 1], 'int64'), [1, 0]], x3[[1], 1:, [0, 3]], x3[None, [1, 0], ..., T([-1, 0], 'int64')], logits[T([0, 1, 2], 'int64'), target]"),
    ("index_lists_out_of_range", "result = x3[[0, 2], [0, 1]]"),
    ("index_lists_mismatch", "result = x3[[0, 1], [0, 1, 0]]"),
    ("top_k_sampling", "v, _ = logits.topk(2); result = logits.masked_fill(logits < v[:, [-1]], float('-inf')).softmax(-1)"),
    ("conv2d", "w = T(CONV_W, 'float64'); result = F.conv2d(img, w), F.conv2d(img, w, T([0.1, -0.2], 'float64'), stride=2, padding=1), F.conv2d(img, w, padding='same'), F.conv2d(img, w, dilation=(1, 2), padding=(1, 0)), F.conv2d(img[0], w), F.conv2d(img, T(CONV_W, 'float64')[:, :, :2, :], padding='same')"),
    ("conv2d_groups_float32", "result = F.conv2d(img, T(GROUP_W, 'float64'), groups=3), F.conv2d(img.float(), T(CONV_W, 'float32'), T([0.5, 0.25], 'float32'), stride=(1, 2))"),
    ("conv2d_channels_mismatch", "result = F.conv2d(img[:, :2], T(CONV_W, 'float64'))"),
    ("conv1d", "w = T(CONV_W, 'float64')[:, :, 0]; result = F.conv1d(img[:, :, 0], w, padding=1), F.conv1d(img[:, :, 1], w, T([1.0, 2.0], 'float64'), stride=2), F.conv1d(img[0, :, 2], w, padding='same', dilation=2)"),
    ("Conv2d", "m = nn.Conv2d(3, 2, 3, padding=1); load(m, {'weight': CONV_W, 'bias': [0.1, -0.2]}); result = m(img)"),
    ("Conv1d", "m = nn.Conv1d(3, 2, 3, bias=False); load(m, {'weight': [[r[0] for r in c] for c in CONV_W]}); result = m(img[:, :, 3])"),
    ("pools", "result = F.max_pool2d(img, 2), F.max_pool2d(img, 3, 2, 1), F.max_pool2d(img, 2, ceil_mode=True), F.max_pool2d(img, 2, 1, dilation=2), F.avg_pool2d(img, 2), F.avg_pool2d(img, 3, 2, 1), F.avg_pool2d(img, 3, 2, 1, count_include_pad=False), F.avg_pool2d(img, 2, ceil_mode=True), F.adaptive_avg_pool2d(img, (2, 3)), F.adaptive_avg_pool2d(img, 1), F.max_pool1d(img[:, :, 0], 2), F.avg_pool1d(img[:, :, 0], 3, 1, 1), F.max_pool2d(img[0], (2, 3), (1, 2))"),
    ("pool_modules", "result = nn.MaxPool2d(2)(img), nn.AvgPool2d(2, 1)(img), nn.AdaptiveAvgPool2d((1, 1))(img), nn.MaxPool1d(3, 1)(img[:, 0]), nn.AvgPool1d(2)(img[:, 1])"),
    ("max_pool_nan", "result = F.max_pool2d(T([[[[1.0, float('nan'), 0.0], [3.0, 2.0, 1.0]]]], 'float64'), 2, 1)"),
    ("pool_too_small", "result = F.max_pool2d(img, 5)"),
    ("pad", "result = F.pad(img, (1, 2)), F.pad(img, (1, 1, 0, 2), value=-1.0), F.pad(idx, (2, 0)), F.pad(x, (0, 0, 1, 1), 'constant', 0.5)"),
    ("BatchNorm2d", "m = nn.BatchNorm2d(3); out = m(img); result = out, m.running_mean, m.running_var, m.num_batches_tracked, m.eval()(img)"),
    ("GroupNorm", "m = nn.GroupNorm(3, 3); load(m, {'weight': [1.0, 2.0, 0.5], 'bias': [0.0, 0.1, -0.1]}); result = nn.GroupNorm(1, 3)(img), F.group_norm(img, 3), m(img), nn.GroupNorm(3, 3, affine=False)(img[:, :, 0])"),
    ("activations_more", "result = F.leaky_relu(x), nn.LeakyReLU(0.2)(x), F.elu(x), nn.ELU(0.5)(x), F.softplus(x), nn.Softplus(2.0, 1.0)(x)"),
    ("losses_more", "result = F.nll_loss(logits.log_softmax(-1), target), F.nll_loss(logits, T([1, -100, 0], 'int64'), reduction='sum'), F.binary_cross_entropy_with_logits(x, (x > 0).double()), F.binary_cross_entropy_with_logits(x, (x > 0).double(), pos_weight=T([2.0, 1.0, 0.5], 'float64'), reduction='none'), F.l1_loss(x, x * 0.5)"),
    ("one_hot", "result = F.one_hot(target), F.one_hot(T([0, 2], 'int64'), 5)"),
    ("rounding", "r = T([-1.5, -0.5, -0.0, 0.0, 0.5, 1.5, 2.5, 12.345, -7.25, float('nan'), float('inf'), float('-inf')], 'float64'); result = r.floor(), r.ceil(), r.round(), r.trunc(), r.sign(), r.frac(), r.round(decimals=1), r.round(decimals=-1), r.float().round(), r.float().sign(), idx.sign(), idx.floor(), idx.round(), (x > 0).sign()"),
    ("rounding_bool", "result = (x > 0).floor()"),
    ("parameter_containers", "pl = nn.ParameterList([T([1.0, 2.0], 'float64'), nn.Parameter(T([3.0, 4.0], 'float64'))]); pl.append(T([0.5, 0.5], 'float64')); pd = nn.ParameterDict({'a': T([2.0, 1.0], 'float64')}); pd['b'] = T([1.0, -1.0], 'float64'); result = pl[0] * pl[-1] + pd['a'] - pd['b'], len(pl), len(pd), sum(p.numel() for p in pl.parameters()), pl[0].requires_grad, len(list(pd.parameters())), 'b' in pd"),
    ("TransformerEncoderLayer", f"s = T({SEQ}, 'float64'); m = nn.TransformerEncoderLayer(4, 2, 6, 0.0, batch_first=True); load(m, FILLED(m)); causal = nn.Transformer.generate_square_subsequent_mask(3); pad = T([[False, False, True], [False, False, False]], 'bool'); result = m(s), m(s, src_mask=causal, is_causal=True), m(s, src_key_padding_mask=pad), causal"),
    ("TransformerEncoderLayer_norm_first", f"s = T({SEQ}, 'float64'); m = nn.TransformerEncoderLayer(4, 2, 6, 0.0, activation='gelu', norm_first=True); load(m, FILLED(m)); result = m(s), m(s[0])"),
    ("TransformerEncoder", f"s = T({SEQ}, 'float64'); layer = nn.TransformerEncoderLayer(4, 2, 6, 0.0, batch_first=True); m = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(4)); load(m, FILLED(m)); result = m(s), len(list(m.parameters()))"),
    ("TransformerDecoder", f"s = T({SEQ}, 'float64'); layer = nn.TransformerDecoderLayer(4, 2, 6, 0.0, batch_first=True); m = nn.TransformerDecoder(layer, 2); load(m, FILLED(m)); causal = nn.Transformer.generate_square_subsequent_mask(2); result = m(s[:, :2], s, tgt_mask=causal), m.layers[0](s[:, :2] * 2.0, s, tgt_is_causal=True, tgt_mask=causal)"),
    ("Transformer", f"s = T({SEQ}, 'float64'); m = nn.Transformer(4, 2, 1, 1, 6, 0.0, batch_first=True); load(m, FILLED(m)); result = m(s, s[:, :2] + 0.5), sorted(n for n, _ in m.named_parameters())[:3]"),
    ("LSTM", f"s = T({SEQ}, 'float64'); m = nn.LSTM(4, 3); load(m, FILLED(m)); out, (h, c) = m(s); result = out, h, c, m(s, (h, c))[0], m(s[:, 0])[0]"),
    ("LSTM_stacked_bidirectional", f"s = T({SEQ}, 'float64'); m = nn.LSTM(4, 3, num_layers=2, batch_first=True, bidirectional=True); load(m, FILLED(m)); out, (h, c) = m(s); result = out, h, c, len(list(m.parameters()))"),
    ("GRU", f"s = T({SEQ}, 'float64'); m = nn.GRU(4, 3, num_layers=2, batch_first=True); load(m, FILLED(m)); out, h = m(s); result = out, h, m(s, h)[1], nn.GRU(4, 2, bias=False, bidirectional=True)(s)[0].shape"),
    ("RNN", f"s = T({SEQ}, 'float64'); m = nn.RNN(4, 3, nonlinearity='relu'); load(m, FILLED(m)); result = m(s)[0], m(s[0])[1]"),
    ("cells", f"s = T({SEQ}, 'float64')[0]; a = nn.LSTMCell(4, 3); load(a, FILLED(a)); b = nn.GRUCell(4, 3); load(b, FILLED(b)); r = nn.RNNCell(4, 3); load(r, FILLED(r)); h, c = a(s); result = h, c, a(s, (h, c)), b(s), b(s[1], b(s[0])), r(s)"),
    ("activations_extra", "result = F.relu6(x * 3), F.hardtanh(x, -0.5, 1.0), F.hardsigmoid(x * 2), F.hardswish(x * 2), F.mish(x), F.selu(x), F.celu(x, 0.5), F.logsigmoid(x * 10), F.softsign(x), F.tanhshrink(x), F.threshold(x, 0.3, -1.0), F.glu(x3, -1), F.prelu(img, T([0.1, 0.2, 0.3], 'float64')), F.prelu(x, T([0.25], 'float64'))"),
    ("activation_modules", "p = nn.PReLU(3); result = nn.ReLU6()(x * 3), nn.Hardtanh(-2.0, 2.0)(x * 3), nn.Hardsigmoid()(x), nn.Hardswish()(x), nn.Mish()(x), nn.SELU()(x), nn.CELU(2.0)(x), nn.LogSigmoid()(x), nn.Softsign()(x), nn.Tanhshrink()(x), nn.Threshold(0.1, 20.0)(x), nn.GLU(1)(x3), p(img), len(list(p.parameters()))"),
    ("activations_in_place", "a = x.clone(); r = F.relu(a, inplace=True); b = x.clone(); nn.ReLU(inplace=True)(b); c = x.clone(); nn.Hardswish(inplace=True)(c); d = x.clone(); F.leaky_relu(d, 0.1, True); e = x.clone(); nn.ELU(inplace=True)(e); result = a, r, b, c, d, e, F.relu(x), x"),
    ("map_filter", "qkv = x3.chunk(2, dim=-1); q, k = map(lambda t: t.transpose(-1, -2) * 2.0, qkv); kept = list(filter(lambda t: t.sum() > -100.0, qkv)); pairs = list(map(lambda a, b: a + b, [x, x * 2.0], [x])); result = q, k, len(kept), pairs[0], list(filter(None, [0, 1, 2]))"),
    ("glu_odd", "result = F.glu(x, -1)"),
    ("finfo_iinfo", "f64 = lib.finfo(x.dtype); f32 = lib.finfo(xf.dtype); i64 = lib.iinfo(idx.dtype); result = f64.min, f64.max, f64.eps, f64.tiny, f64.bits, f32.min, f32.eps, f32.tiny, i64.max, i64.min, x.masked_fill(x < 0, f64.min)"),
    ("closeness_and_nan", "n = T([1.0, float('nan'), float('inf'), float('-inf'), -2.0], 'float64'); m = T([1.0 + 1e-9, float('nan'), float('inf'), 0.0, -2.1], 'float64'); result = n.isclose(m), n.isclose(m, equal_nan=True), n.isclose(m, rtol=0.1), n.nan_to_num(), n.nan_to_num(nan=1.0, posinf=9.0, neginf=-9.0), n.float().nan_to_num(), idx.nan_to_num()"),
    ("diagonals", "sq = T(SQ_DATA, 'float64'); result = sq.diagonal(), sq.diagonal(1), sq.diagonal(-1), x3.diagonal(0, 1, 2), x3.diagonal(1, -1, 0), sq.diag(), T([1.0, 2.0], 'float64').diag(), T([1.0, 2.0], 'float64').diag(1), T([1.0, 2.0], 'float64').diag(-2), sq.trace(), x.diagonal()"),
    ("blas_compositions", "sq = T(SQ_DATA, 'float64'); result = sq.addmm(sq, sq), sq.addmm(sq, sq, beta=0.5, alpha=2.0), sq.addmm(sq * float('nan'), sq, beta=0), (q @ k.transpose(1, 2)).baddbmm(q, k.transpose(1, 2), alpha=0.5), x.addcmul(x, x, value=0.5), x.addcdiv(x, x + 3.0, value=2.0)"),
    ("elementwise_compositions", "a = x; b = x.flip(0); result = a.logaddexp(b), T([float('-inf'), float('inf'), 0.0], 'float64').logaddexp(T([float('-inf'), float('inf'), 1000.0], 'float64')), a.fmax(T([float('nan'), 0.0, 1.0], 'float64')), a.fmin(T([float('nan'), 0.0, 1.0], 'float64')), a.hypot(b), a.abs().log2(), a.abs().log10(), a.exp2(), a.tan(), a.logical_not(), a.logical_and(b > 0), a.logical_or(idx[:, :3]), (a > 0).logical_xor(b > 0), a.count_nonzero(), (a > 0).count_nonzero(0)"),
    ("shape_compositions", "result = x.diff(), x.diff(dim=0), x3.diff(2, dim=-1), lib.var_mean(x, 0), lib.std_mean(x, 1, keepdim=True), lib.std_mean(x), x.clip(-1.0, 1.0), x[0].broadcast_to((2, 3)), x.tile((2,)), x.tile((2, 1, 2)), x.dist(x.flip(1)), x.dist(x.flip(1), 1)"),
    ("module_compositions", "result = lib.pow(x, 2.0), lib.pow(2.0, x), lib.concat([x, x]), lib.hstack([x, x]), lib.hstack([x[0], x[1]]), lib.vstack([x[0], x[1], x]), lib.cdist(x, x3[0, :, :3]), lib.cdist(q, k, p=1.0), lib.cdist(x, x, p=float('inf')), lib.meshgrid(x[0], x[1, :2]), lib.meshgrid(x[0], x[1, :2], indexing='xy'), lib.broadcast_tensors(x, x[0]), lib.broadcast_shapes((2, 1), (1, 3)), lib.as_tensor(x) is x, lib.as_tensor([1, 2]), lib.empty_like(x).shape, lib.empty(2, 3).shape"),
    ("fake_quantize", "scale = x3.abs().amax() / 7; result = (x3 / scale).round().clamp(-8, 7) * scale"),
    ("inverse_and_hyperbolic", "u = x / 4.0; result = u.asin(), u.acos(), x.atan(), lib.arcsin(u), u.arccos(), lib.arctan(x), x.sinh(), x.cosh(), x.asinh(), (x.abs() + 1.0).acosh(), u.atanh(), lib.arctanh(u), lib.atan2(x, x.flip(0)), x.arctan2(T([0.0], 'float64')), xf.atan(), xf.sinh(), (xf / 4.0).asin(), idx.atan(), lib.asinh(idx)"),
    ("logs_and_exps", "s = T([1e-12, -1e-9, 0.5, -0.75, 3.0, 1e-300], 'float64'); result = s.log1p(), s.expm1(), lib.log1p(s), lib.expm1(s), x.abs().log2(), x.abs().log10(), x.exp2(), x.tan(), xf.log1p(), xf.expm1(), xf.abs().log2(), idx.exp2(), lib.log10(idx), T([8.0, 1024.0, 0.125], 'float64').log2()"),
    ("products", "result = x.prod(), x.prod(1), x.prod(0, keepdim=True), lib.prod(x3, -1), xf.prod(1), idx.prod(), idx.prod(1), (x > 0).prod(1), x.cumprod(1), lib.cumprod(x3, 0), idx.cumprod(-1), (x > 0).cumprod(1), xf.cumprod(0), x.prod(1, dtype=lib.float32), T([], 'float64').prod()"),
    ("scatters", "z = lib.zeros(3, 4, dtype=lib.float64); i2 = T([[0, 1, 2, 0], [2, 0, 1, 1]], 'int64'); src = T([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]], 'float64'); result = z.scatter(0, i2, src), z.scatter_add(0, i2, src), lib.scatter_add(z, 0, i2, src), z.scatter(1, T([[3], [0]], 'int64'), 9.5), z.scatter(0, i2, src, reduce='add'), z.clone().scatter_(0, i2, src), z.clone().scatter_add_(0, i2, src), lib.scatter(z, 1, i2[:, :2], src), idx.scatter(1, T([[0, 0], [1, 2]], 'int64'), T([[7, 8], [9, 10]], 'int64'))"),
    ("index_writes", "z = lib.zeros(4, 3, dtype=lib.float64); i1 = T([2, 0, 2], 'int64'); result = z.index_add(0, i1, x3[0, :, :3].repeat(2, 1)[:3]), z.index_add(0, i1, x3[0, :, :3].repeat(2, 1)[:3], alpha=2.0), z.index_add(1, T([1, 1], 'int64'), lib.ones(4, 2, dtype=lib.float64)), z.clone().index_add_(0, i1, lib.ones(3, 3, dtype=lib.float64)), z.index_copy(0, T([3, 1], 'int64'), x), z.clone().index_copy_(1, T([0], 'int64'), lib.ones(4, 1, dtype=lib.float64)), z.index_fill(1, T([0, 2], 'int64'), -1.5), x.index_fill(0, T([1], 'int64'), 0.0), z.clone().index_fill_(0, T([0, 3], 'int64'), 2.0)"),
    ("selections_by_value", "result = x.masked_select(x > 0), lib.masked_select(x, T([True, False, True], 'bool')), x.nonzero(), (x > 0).nonzero(), lib.nonzero(x3 > 0.5), (x > 0).nonzero(as_tuple=True), lib.argwhere(idx > 2), T([0.0, 1.0, 0.0, 2.0], 'float64').nonzero()"),
    ("grad_modes", "log = []; log.append(lib.is_grad_enabled())\nwith lib.no_grad():\n    log.append(lib.is_grad_enabled())\n    with lib.enable_grad():\n        log.append(lib.is_grad_enabled())\n    log.append(lib.is_grad_enabled())\nlog.append(lib.is_grad_enabled())\nwith lib.set_grad_enabled(False):\n    log.append(lib.is_grad_enabled())\nlog.append(lib.is_grad_enabled())\nwith lib.inference_mode():\n    log.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))\nwith lib.inference_mode(False):\n    log.append(lib.is_grad_enabled())\nf = lib.no_grad()(lambda t: (t * 2, lib.is_grad_enabled()))\ng = lib.no_grad(lambda t: (t + 1, lib.is_grad_enabled()))\nh = lib.inference_mode(lambda t: (t - 1, lib.is_grad_enabled(), lib.is_inference_mode_enabled()))\nlog.append((f(x), g(x), h(x), lib.is_grad_enabled(), lib.is_inference_mode_enabled()))\nlib.set_grad_enabled(False); log.append(lib.is_grad_enabled()); lib.set_grad_enabled(True); log.append(lib.is_grad_enabled())\nresult = tuple(log)"),
    ("similarities", "result = F.cosine_similarity(x, x.flip(0)), F.cosine_similarity(x3, x3.flip(2), dim=-1), F.cosine_similarity(x, x * 0.0), nn.CosineSimilarity(dim=0)(x, x + 1.0), F.pairwise_distance(x, x.flip(1)), nn.PairwiseDistance(p=1.0, keepdim=True)(x, x * 2.0), x.norm(float('inf'), dim=1), x3.norm(float('inf'), 2, keepdim=True)"),
    ("pixel_shuffles", "s = F.pixel_shuffle(img.reshape(1, 12, 2, 5)[:, :8], 2); result = s, F.pixel_unshuffle(s, 2), nn.PixelShuffle(2)(img[:, :, :2, :2].repeat(1, 4, 1, 1)[:, :8]), nn.PixelUnshuffle(2)(img[:, :, :4, :4])"),
    ("factory_keywords", "result = lib.arange(start=0, end=5), lib.arange(2, end=7, step=2), lib.arange(end=4, dtype=lib.float64), lib.full(size=(2, 2), fill_value=-1.5), lib.full((3,), fill_value=2), F.softmax(x, dim=-1, dtype=lib.float32), F.log_softmax(xf, dim=0, dtype=lib.float64), F.softmax(x3), lib.long is lib.int64, lib.double is lib.float64, lib.float is lib.float32, lib.arange(3, dtype=lib.long).dtype == lib.int64"),
    ("windows_and_buckets", "bounds = T([-0.5, 0.0, 0.5, 2.0], 'float64'); result = x3.unfold(2, 2, 1), x.unfold(0, 2, 1), x.unfold(-1, 2, 2), x3.unfold(1, 1, 3), lib.bucketize(x, bounds), lib.bucketize(x3, bounds, right=True), lib.searchsorted(bounds, x), lib.searchsorted(bounds, x, side='right'), lib.searchsorted(x.sort(-1).values, x * 0.5), lib.searchsorted(bounds, 0.0), lib.bucketize(T([float('nan'), 2.0], 'float64'), bounds)"),
    ("im2col", "result = F.unfold(img, 2), F.unfold(img, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)), nn.Unfold(3, padding=1)(img[0]), nn.Unfold((1, 2), stride=2)(img)"),
    ("im2col_too_small", "result = F.unfold(img, 5)"),
    ("unique_values", "t = T([[3, 1, 2], [1, 3, 3]], 'int64'); result = lib.unique(t), t.unique(return_inverse=True), lib.unique(t, return_counts=True), lib.unique(x3.round(), return_inverse=True, return_counts=True), lib.unique(T([2.5, -1.0, 2.5], 'float64'), sorted=False)"),
    ("forward_hooks", "m = nn.Linear(3, 4); load(m, {'weight': W_DATA, 'bias': B_DATA}); seen = []; h1 = m.register_forward_hook(lambda mod, inp, out: seen.append(tuple(out.shape))); h2 = m.register_forward_hook(lambda mod, inp, out: out * 2.0); h3 = m.register_forward_pre_hook(lambda mod, inp: (inp[0] + 1.0,)); h4 = m.register_forward_hook(lambda mod, inp, out: out - 1.0, prepend=True); a = m(x); h2.remove(); b = m(x); h3.remove(); h4.remove(); c = m(x); h5 = m.register_forward_pre_hook(lambda mod, args, kwargs: ((args[0] * 0.5,), kwargs), with_kwargs=True); h6 = m.register_forward_hook(lambda mod, args, kwargs, out: out.sum(), with_kwargs=True); d = m(x); h1.remove(); h5.remove(); h6.remove(); result = a, b, c, d, m(x), tuple(seen)"),
]

W_DATA = [[0.2, -0.1, 0.4], [0.5, 0.3, -0.2], [-0.6, 0.1, 0.9], [0.05, 0.7, -0.3]]
B_DATA = [0.1, -0.2, 0.3, 0.0]
SQ_DATA = [[0.5, 0.1, 0.0], [-0.2, 0.4, 0.3], [0.1, 0.0, 0.6]]
CONV_W = [[[[((o * 5 + c * 3 + i * 2 + j) % 7 - 3) / 5 for j in range(3)] for i in range(3)] for c in range(3)] for o in range(2)]
GROUP_W = [[[[((g + i * 2 + j) % 5 - 2) / 3 for j in range(2)] for i in range(2)]] for g in range(3)]

MHA_STATE = {
    "in_proj_weight": [[0.3, -0.2], [0.1, 0.4], [-0.5, 0.2], [0.25, 0.35], [0.6, -0.1], [-0.2, 0.45]],
    "in_proj_bias": [0.05, -0.1, 0.0, 0.2, -0.15, 0.1],
    "out_proj.weight": [[0.7, -0.3], [0.2, 0.5]],
    "out_proj.bias": [0.01, -0.02],
}



def FILLED(module):
    """Every parameter of `module` as nested lists of small values, each a function of the
    parameter's name and position only (the same under both libraries, in any order)."""
    def build(dims, base):
        if len(dims) == 1:
            return [((base + j) * 37 % 23 - 11) / 25 for j in range(dims[0])]
        return [build(dims[1:], base + r * 7) for r in range(dims[0])]
    return {name: build(list(p.shape), sum(ord(c) for c in name)) for name, p in module.named_parameters()}


CONSTANTS = {"FILLED": FILLED, "MHA_STATE": MHA_STATE, "W_DATA": W_DATA, "B_DATA": B_DATA, "SQ_DATA": SQ_DATA, "CONV_W": CONV_W, "GROUP_W": GROUP_W}
