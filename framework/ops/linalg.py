"""Matrix products: ``matmul`` (cuBLAS on the GPU, BLAS on the host) and ``einsum``."""
import string


from ..engine import backend
from ..tuning.host import matmul as _product
from ..engine.primitive import primitive
from ..engine.tensor import convert_to_tensor, wrap_constant
from .shape import _same_dtype, broadcast_to, expand_dims, reshape, transpose


def _t(x, flag):
    return x.swapaxes(-1, -2) if flag else x


def matmul_vjp_a(g, out, a, b, transpose_a, transpose_b):
    if a.ndim == 1 and b.ndim == 1:  # inner product
        return expand_dims(g, -1) * b
    if a.ndim == 1 and b.ndim == 2:  # (k) @ (k, p): every row of g times b^T in one GEMM
        return matmul(g, b, transpose_b=not transpose_b)
    if a.ndim == 1:  # (k) @ (..., k, p): b @ g as a column, summed over b's batch by the tape
        return _drop_axis(matmul(b, expand_dims(g, -1), transpose_a=transpose_b), -1)
    if b.ndim == 1:  # (m, k) @ (k): outer product of g and b
        ga = expand_dims(g, -1) * b
        return _swap_last(ga) if transpose_a else ga
    if not transpose_a:
        return matmul(g, b, transpose_b=not transpose_b)
    return matmul(b, g, transpose_a=transpose_b, transpose_b=True)


def matmul_vjp_b(g, out, a, b, transpose_a, transpose_b):
    if b.ndim == 1:  # (..., m, k) @ (k): g as a row @ a, or with a vector a the product g * a
        if a.ndim == 1:
            return expand_dims(g, -1) * a
        if a.ndim == 2:  # every row of g times a in one GEMM
            return matmul(g, a, transpose_b=transpose_a)
        return _drop_axis(matmul(expand_dims(g, -2), a, transpose_b=transpose_a), -2)
    if a.ndim == 1:  # (k) @ (k, p): outer product of a and g
        gb = expand_dims(a, -1) * expand_dims(g, -2)
        return _swap_last(gb) if transpose_b else gb
    if not transpose_b:
        return matmul(a, g, transpose_a=not transpose_a)
    return matmul(g, a, transpose_a=True, transpose_b=transpose_a)


def matmul_array_vjp(g, out, needs, a, b, transpose_a, transpose_b):
    """Both products of the matrix rule; a vector argument is a matrix of one row (``a``) or
    one column (``b``), its axis added to ``g`` and dropped again from its gradient."""
    vector_a, vector_b = a.ndim == 1, b.ndim == 1
    if vector_b:
        b, g = b[:, None], g[..., None]
    if vector_a:
        a, g = a[None], g[..., None, :]
    ga = gb = None
    if needs[0]:
        ga = _t(_product(g, _t(b, not transpose_b)), transpose_a)
        ga = ga[..., 0, :] if vector_a else ga
    if needs[1]:
        gb = _t(_product(_t(a, not transpose_a), g), transpose_b)
        gb = gb[..., 0] if vector_b else gb
    return ga, gb


@primitive(matmul_vjp_a, matmul_vjp_b, array_vjp=matmul_array_vjp, same_dtype=True)
def _matmul(a, b, transpose_a, transpose_b):
    return _product(_t(a, transpose_a), _t(b, transpose_b))


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, output_type=None, name=None):
    """The matrix product of the last two axes (batched over leading axes, NumPy's rules)."""
    transpose_a, transpose_b = transpose_a or adjoint_a, transpose_b or adjoint_b  # (real)
    a, b = convert_to_tensor(a), convert_to_tensor(b)
    if (transpose_a and a.ndim < 2) or (transpose_b and b.ndim < 2):
        raise ValueError(f"matmul: transposing needs rank >= 2, got shapes {a.shape}, {b.shape}")
    return _matmul(a, b, transpose_a=bool(transpose_a), transpose_b=bool(transpose_b))


def _drop_axis(x, axis):
    """``x`` without its size-1 axis ``axis`` (-1 or -2)."""
    return reshape(x, x.shape[:axis] + x.shape[axis:][1:])


def _swap_last(x):
    perm = list(range(x.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return transpose(x, perm)


# --- einsum ----------------------------------------------------------------------------------------
def _parse(equation, shapes):
    """Explicit subscripts (ellipses spelled out in letters) for each input and the output."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(shapes):
        raise ValueError(f"einsum: '{equation}' names {len(inputs)} operands, got {len(shapes)}")
    used = set(equation) - set(".,->")
    spare = [c for c in string.ascii_letters if c not in used]
    ell_rank = max((len(s) - len(sub.replace("...", "")) for sub, s in zip(inputs, shapes)
                    if "..." in sub), default=0)
    ell = "".join(spare[:ell_rank])
    spelled = []
    for sub, shape in zip(inputs, shapes):
        if "..." in sub:
            k = len(shape) - len(sub.replace("...", ""))
            sub = sub.replace("...", ell[ell_rank - k:])
        if len(sub) != len(shape):
            raise ValueError(f"einsum: subscripts '{sub}' do not fit an operand of shape {shape}")
        spelled.append(sub)
    if arrow:
        out = rhs.replace("...", ell)
    else:
        letters = "".join(spelled)
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ell))
    return spelled, out


def _einsum_vjp(k, g, out, *operands, equation):
    subs, out_sub = _parse(equation, [o.shape for o in operands])
    target, shape = subs[k], operands[k].shape
    unique = "".join(dict.fromkeys(target))  # a repeated subscript reads a diagonal
    ushape = tuple(shape[target.index(c)] for c in unique)
    lead = g.ndim - out.ndim
    spare = [c for c in string.ascii_letters if c not in "".join(subs) + out_sub]
    lead_sub = "".join(spare[:lead])
    others = [s for i, s in enumerate(subs) if i != k]
    present = set(out_sub).union(*others) if others else set(out_sub)
    reduced = "".join(c for c in unique if c in present)
    eq = ",".join([lead_sub + out_sub] + others) + "->" + lead_sub + reduced
    grad = einsum(eq, g, *[o for i, o in enumerate(operands) if i != k])
    if reduced != unique:  # letters summed away in the forward come back by broadcasting
        kept = tuple(d if c in present else 1 for c, d in zip(unique, ushape))
        grad = broadcast_to(reshape(grad, g.shape[:lead] + kept), g.shape[:lead] + ushape)
    if unique != target:  # put the diagonal's gradient back on the diagonal, through identities
        fresh, spelled, eyes = iter(spare[lead:]), "", []
        for i, c in enumerate(target):
            r = next(fresh) if c in target[:i] else c
            if r != c:
                eyes.append((c + r, wrap_constant(backend.array_module(g._value).eye(
                    shape[i], dtype=g.dtype))))
            spelled += r
        eq = ",".join([lead_sub + unique] + [s for s, _ in eyes]) + "->" + lead_sub + spelled
        grad = einsum(eq, grad, *[e for _, e in eyes])
    return grad


@primitive(each_arg=_einsum_vjp)
def _einsum(*operands, equation):
    return backend.array_module(operands[0]).einsum(equation, *operands)


def einsum(equation, *inputs, name=None, **kwargs):
    """Einstein summation, NumPy's notation (ellipses included)."""
    inputs = [convert_to_tensor(x) for x in inputs]
    _same_dtype("einsum", inputs)
    subs, out = _parse(equation, [x.shape for x in inputs])
    return _einsum(*inputs, equation=",".join(subs) + "->" + out)


