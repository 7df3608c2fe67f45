"""Cases of torch's API that NumPy has no counterpart of, written once for both back ends with
the inputs of cases.py: `make_torch_reference.py` evaluates them with PyTorch on CPython
(the committed `torch_reference.json`), `run_cases.py torch` with symtrace on the fork. `F`
is the library's module itself (`torch` or `symtrace`), so each case is spelled as torch
users spell it."""

CASES = [
    # splitting and stacking by axis name
    ("hsplit_sections", "F.hsplit(x3, 3)[1]"),
    ("hsplit_indices", "F.hsplit(a, [1])[1]"),
    ("hsplit_1d", "F.hsplit(b, 3)[2]"),
    ("vsplit", "F.vsplit(x3, 2)[1]"),
    ("dsplit_indices", "F.dsplit(x3, [1])[0]"),
    ("hsplit_method", "a.hsplit([2])[0]"),
    ("column_stack", "F.column_stack([b, v, a.T])"),
    ("dstack", "F.dstack([a, a * 2.0])"),
    ("atleast_3d_1d", "F.atleast_3d(b)"),
    ("atleast_3d_2d", "F.atleast_3d(a)"),
    ("atleast_2d_scalar", "F.atleast_2d(s)"),
    ("atleast_1d_many", "F.atleast_1d(s, b)[0]"),
    # products
    ("tensordot_dims", "F.tensordot(x3, x3, dims=([1, 2], [1, 2]))"),
    ("tensordot_count", "F.tensordot(a, x3.permute(1, 0, 2), dims=1)"),
    ("tensordot_zero", "F.tensordot(b, v, dims=0)"),
    ("kron_2d", "F.kron(a, w)"),
    ("kron_mixed", "F.kron(b, w)"),
    ("kron_method", "v.kron(b)"),
    ("vdot", "F.vdot(b, v)"),
    ("cartesian_prod", "F.cartesian_prod(b, v[:2])"),
    ("combinations", "F.combinations(v)"),
    ("combinations_replacement", "F.combinations(j, 2, with_replacement=True)"),
    # small spellings
    ("take", "F.take(a, T([0, 5, 2], 'int64'))"),
    ("take_method", "x3.take(T([[1, 11], [4, 0]], 'int64'))"),
    ("float_power_int", "F.float_power(j, 2)"),
    ("float_power_tensors", "F.float_power(f, f)"),
    ("bitwise_and_bool", "F.bitwise_and(m, m.logical_not())"),
    ("bitwise_xor_int", "F.bitwise_xor(i, i.abs())"),
    ("bitwise_not_bool", "F.bitwise_not(n)"),
    ("bitwise_or_method", "j.bitwise_or(j * 2)"),
    ("type_to_float32", "a.type(F.float32)"),
    ("index_put", "F.index_put(a, (T([0, 1], 'int64'), T([2, 0], 'int64')), T([9., 8.], None))"),
    ("where_condition_alone", "F.stack(F.where(x3 > 0.3))"),
    ("where_condition_alone_bool", "F.where(m)[1]"),
    ("where_method_keywords", "F.where(a > 0.5, input=a, other=b)"),
    ("fmod_tensors", "F.fmod(x3 * 7.0 - 3.0, a[:1] + 0.5)"),
    ("fmod_scalar_method", "(f * -3.5).fmod(1.25)"),
    ("fmod_int", "F.fmod(i * 7 - 3, j + 5)"),
    # errors
    # a bool mask among other indices: the indices of its true elements
    ("index_mask_then_int", "a[T([True, False], 'bool'), 1]"),
    ("index_slice_then_mask", "a[:, n]"),
    ("index_ellipsis_then_mask", "x3[..., T([False, True], 'bool')]"),
    ("index_2d_mask_then_int", "x3[m, 0]"),
    ("index_bool_list", "a[:, [True, False, True]]"),
    ("index_int_tensor_and_mask", "x3[T([1, 0], 'int64'), n]"),
    ("index_mask_none_slice", "a[n[:2], None, 1:]"),
    ("error_index_mask_shape", "a[:, T([True, False], 'bool')]"),
    ("error_hsplit_uneven", "F.hsplit(a, 2)"),
    ("error_vsplit_1d", "F.vsplit(b, 1)"),
    ("error_tensordot_sizes", "F.tensordot(a, a, dims=([1], [0]))"),
    ("error_vdot_2d", "F.vdot(a, a)"),
]

# In-place spellings: statement, then the tensor to compare.
ASSIGNMENTS = [
    ("sqrt_", "z = F.clone(a); z.sqrt_()", "z"),
    ("exp_", "z = F.clone(f); z.exp_()", "z"),
    ("log_", "z = F.clone(a); z.log_()", "z"),
    ("abs_neg_", "z = F.clone(i); z.abs_().neg_()", "z"),
    ("sigmoid_tanh_", "z = F.clone(x3); z.sigmoid_(); z.tanh_()", "z"),
    ("floor_ceil_round_", "z = F.clone(w) * 1.6; z.floor_(); y = F.clone(a) / 4.0; y.ceil_(); z.add_(y[:, :2].round_())", "z"),
    ("reciprocal_rsqrt_", "z = F.clone(a); z.reciprocal_(); z.rsqrt_()", "z"),
    ("pow_clamp_min_", "z = F.clone(t) - 3.0; z.pow_(2); z.clamp_min_(2.0)", "z"),
    ("index_put_", "z = F.clone(b); z.index_put_((T([2, 0], 'int64'),), T([5., 6.], None))", "z"),
    ("fmod_remainder_", "z = F.clone(a) * -1.5; z.fmod_(2.5); y = F.clone(i); y.remainder_(4); z.add_(y[:, :3])", "z"),
    ("mask_and_int_put", "z = F.clone(a); z[T([True, False], 'bool'), 1] = -1.0", "z"),
    ("slice_and_mask_put", "z = F.clone(a); z[:, n] = T([7., 8.], None)", "z"),
    ("error_sqrt_int", "z = F.clone(j); z.sqrt_()", "z"),
    ("error_exp_bool", "z = F.clone(n); z.exp_()", "z"),
]
