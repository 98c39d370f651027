"""Fused CuPy kernels for the hot paths of training an MLP, used only on arrays on the GPU.

On the GPU each NumPy call an op makes is one kernel launch: one more pass over memory and, from
Python, several microseconds of launch cost. These kernels do in one launch what the unfused
path does in several:

- ``bias_add_relu``: a Dense layer's bias add and ReLU (2 launches -> 1);
- ``relu_grad``: the ReLU's backward ``g * (y > 0)`` (2 -> 1);
- ``sparse_xent`` and ``sparse_xent_grad``: softmax cross-entropy with integer labels, forward
  (about 8 launches -> 1) and gradient (about 9 -> 1), for any number of classes: one thread
  per example up to ``XENT_THREAD_CLASSES`` classes, else one block per example, whose threads
  share the row and reduce its maximum and its sum of exponentials in shared memory;
- ``adam``, ``sgd``, and ``update`` for Nadam, Adamax, Adadelta, Lion and FTRL: an optimizer's
  whole update of one variable and its slots (about 10 to 20 launches -> 1).

Matmuls need nothing here: CuPy hands them to cuBLAS. So does ``sum_rows``, the bias gradient
(a cotangent summed over the batch), as a product with a vector of ones: CuPy's own reduction
over the first axis of a (batch, units) array runs one block per 32 units, a few dozen blocks
for a whole GPU, while cuBLAS reads the matrix at full bandwidth.

Each kernel evaluates the formulas of the NumPy path it replaces, in the same order and in the
arrays' own dtype, so both agree to rounding (the GPU may contract a multiply and an add into
one FMA). Only float32 and float64 are fused (``fits``); other dtypes and cotangents carrying a
Jacobian's leading axes take the unfused path, which CuPy runs through NumPy's dispatch
protocols.

The sources are data: ``SOURCES``, CuPy elementwise kernels, and ``ROW_SOURCES``, whole CUDA
kernels (``cupy.RawKernel``) written for types ``T`` (the logits) and ``L`` (the labels) that a
typedef before the text sets. A kernel object is built from its entry on first use and cached,
and CuPy compiles it once per dtype (keeping the binary in its disk cache). Being data, the
same sources are also compiled with nvcc and run on the CPU by the tests, where no GPU is.
"""
import math
from collections import namedtuple

import numpy as np

from ..engine import backend

__all__ = ["ROW_SOURCES", "SOURCES", "XENT_BLOCK", "XENT_THREAD_CLASSES", "adam",
           "bias_add_relu", "fits", "fits_xent", "relu_grad", "row_source", "sgd", "sparse_xent",
           "sparse_xent_grad", "sum_rows", "update"]

# The arguments of cupy.ElementwiseKernel, in its order.
Elementwise = namedtuple("Elementwise", "in_params out_params operation")

# Up to this many classes one thread walks a whole row of logits, three times: ideal for a
# classifier's few classes and many examples. Wider rows get a block of XENT_BLOCK threads each.
XENT_THREAD_CLASSES = 256
XENT_BLOCK = 256  # a power of two: the block's reductions halve it

_ROW_MAX_AND_TOTAL = """
const ptrdiff_t start = i * n;
T top = logits[start];
for (ptrdiff_t j = 1; j < n; ++j) {
  top = logits[start + j] > top ? logits[start + j] : top;
}
T total = 0;
for (ptrdiff_t j = 0; j < n; ++j) {
  total += exp(logits[start + j] - top);
}
"""

SOURCES = {
    # relu(x + b), with b broadcast along the last axis; NaN passes through as in np.maximum.
    "fw_bias_add_relu": Elementwise(
        "T x, T b", "T y",
        "const T z = x + b; y = z < (T)0 ? (T)0 : z"),
    # The ReLU's VJP, g * (y > 0), written as the same product so NaN and inf behave alike.
    "fw_relu_grad": Elementwise(
        "T g, T y", "T dx",
        "dx = g * (T)(y > (T)0)"),
    # Per example: log(sum(exp(row - max))) - (row[label] - max); NaN for a label outside
    # [0, n), where the CPU path raises (TensorFlow's GPU kernel also answers NaN).
    "fw_sparse_xent": Elementwise(
        "raw T logits, L label, int64 n", "T loss",
        _ROW_MAX_AND_TOTAL + """
loss = (label < 0 || label >= n) ? (T)nan("")
                                 : log(total) - (logits[start + label] - top);
"""),
    # Per example: (softmax(row) - one_hot(label)) * g, the row written by its own thread.
    "fw_sparse_xent_grad": Elementwise(
        "raw T logits, L label, T g, int64 n", "raw T grad",
        _ROW_MAX_AND_TOTAL + """
const bool valid = label >= 0 && label < n;
for (ptrdiff_t j = 0; j < n; ++j) {
  T p = exp(logits[start + j] - top) / total;
  if (j == label) p -= (T)1;
  grad[start + j] = valid ? p * g : (T)nan("");
}
"""),
    # Keras's Adam: m += (g - m)(1 - beta_1); v += (g^2 - v)(1 - beta_2);
    # w -= m / (sqrt(v) + epsilon) alpha, alpha holding the bias corrections (the NumPy
    # path's order, so that both round alike).
    "fw_adam": Elementwise(
        "T g, T alpha, T one_minus_beta_1, T one_minus_beta_2, T epsilon", "T w, T m, T v",
        """
m += (g - m) * one_minus_beta_1;
v += (g * g - v) * one_minus_beta_2;
w -= m / (sqrt(v) + epsilon) * alpha;
"""),
    # AMSGrad divides by the running maximum of v instead.
    "fw_adam_amsgrad": Elementwise(
        "T g, T alpha, T one_minus_beta_1, T one_minus_beta_2, T epsilon",
        "T w, T m, T v, T v_hat",
        """
m += (g - m) * one_minus_beta_1;
v += (g * g - v) * one_minus_beta_2;
v_hat = v_hat < v ? v : v_hat;
w -= m / (sqrt(v_hat) + epsilon) * alpha;
"""),
    "fw_sgd": Elementwise(
        "T g, T learning_rate", "T w",
        "w -= g * learning_rate"),
    # Keras's momentum: velocity = momentum velocity - lr g; w += velocity, or with Nesterov
    # w += momentum velocity - lr g.
    "fw_sgd_momentum": Elementwise(
        "T g, T learning_rate, T momentum, bool nesterov", "T w, T velocity",
        """
const T scaled = g * learning_rate;
velocity = velocity * momentum - scaled;
w += nesterov ? velocity * momentum - scaled : velocity;
"""),
    # Keras's Nadam; the momentum schedule's scalars (u_{t+1}, 1 - u_t and the bias
    # corrections) come computed once per step.
    "fw_nadam": Elementwise(
        "T g, T one_minus_beta_1, T one_minus_beta_2, T u_next, T next_debias, "
        "T one_minus_u_t, T debias, T debias_2, T learning_rate, T epsilon", "T w, T m, T v",
        """
m += (g - m) * one_minus_beta_1;
v += (g * g - v) * one_minus_beta_2;
const T m_hat = m * u_next / next_debias + g * one_minus_u_t / debias;
w -= m_hat * learning_rate / (sqrt(v / debias_2) + epsilon);
"""),
    # Keras's Adamax: u = max(beta_2 u, |g|) (NaN kept, as np.maximum keeps it).
    "fw_adamax": Elementwise(
        "T g, T one_minus_beta_1, T beta_2, T learning_rate, T debias, T epsilon",
        "T w, T m, T u",
        """
m += (g - m) * one_minus_beta_1;
const T a = g < (T)0 ? -g : g;
const T b = u * beta_2;
u = (a != a || b < a) ? a : b;
w -= m * learning_rate / ((u + epsilon) * debias);
"""),
    # Keras's Adadelta; descent is -delta.
    "fw_adadelta": Elementwise(
        "T g, T rho, T one_minus_rho, T learning_rate, T epsilon",
        "T w, T accumulated_grad, T accumulated_delta_var",
        """
accumulated_grad = accumulated_grad * rho + g * g * one_minus_rho;
const T descent = sqrt(accumulated_delta_var + epsilon) * g / sqrt(accumulated_grad + epsilon);
accumulated_delta_var = accumulated_delta_var * rho + descent * descent * one_minus_rho;
w -= descent * learning_rate;
"""),
    # Keras's Lion: the sign of the interpolated momentum, then the momentum's update.
    "fw_lion": Elementwise(
        "T g, T beta_1, T one_minus_beta_1, T beta_2, T one_minus_beta_2, T learning_rate",
        "T w, T m",
        """
const T c = m * beta_1 + g * one_minus_beta_1;
w -= (T)((c > (T)0) - (c < (T)0)) * learning_rate;
m = m * beta_2 + g * one_minus_beta_2;
"""),
    # Keras's FTRL-Proximal; power is -learning_rate_power, two_l2 holds beta / (2 lr).
    "fw_ftrl": Elementwise(
        "T g, T learning_rate, T power, T l1, T shrinkage, T two_l2",
        "T w, T accumulator, T linear",
        """
const T n = accumulator + g * g;
const T powered = pow(n, power);
linear += w * shrinkage + g - (powered - pow(accumulator, power)) / learning_rate * w;
const T clipped = linear < -l1 ? -l1 : (linear > l1 ? l1 : linear);
w = (clipped - linear) / (powered / learning_rate + two_l2);
accumulator = n;
"""),
}

# One block per row of ``n`` logits (row r = blockIdx.x): its threads stride over the row, and a
# tree in shared memory reduces their partial maxima, then their partial sums of exp(x - max).
# The arithmetic is the per-thread kernels' (same formulas, same NaN for a label outside
# [0, n)); only the order of the sum differs, as the NumPy path's pairwise sum differs too.
_ROW_REDUCTIONS = """
#define FW_XENT_BLOCK %d
__device__ __forceinline__ float fw_exp(float x) { return expf(x); }
__device__ __forceinline__ double fw_exp(double x) { return exp(x); }
__device__ __forceinline__ float fw_log(float x) { return logf(x); }
__device__ __forceinline__ double fw_log(double x) { return log(x); }

// The row's maximum and sum of exp(x - maximum), the same in every thread of the block.
__device__ void fw_row_max_and_total(const T* row, long long n, T* shared, T* top, T* total) {
  const unsigned int t = threadIdx.x;
  T m = row[0];
  for (long long j = t; j < n; j += blockDim.x) m = row[j] > m ? row[j] : m;
  shared[t] = m;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s /= 2) {
    if (t < s && shared[t + s] > shared[t]) shared[t] = shared[t + s];
    __syncthreads();
  }
  *top = shared[0];
  __syncthreads();
  T sum = 0;
  for (long long j = t; j < n; j += blockDim.x) sum += fw_exp(row[j] - *top);
  shared[t] = sum;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s /= 2) {
    if (t < s) shared[t] += shared[t + s];
    __syncthreads();
  }
  *total = shared[0];
  __syncthreads();
}
""" % XENT_BLOCK

ROW_SOURCES = {
    # loss[r] = log(sum(exp(row - max))) - (row[label] - max), written by the block's thread 0.
    "fw_sparse_xent_rows": _ROW_REDUCTIONS + """
extern "C" __global__ void fw_sparse_xent_rows(const T* logits, const L* labels, long long n,
                                               T* loss) {
  __shared__ T shared[FW_XENT_BLOCK];
  const long long r = blockIdx.x;
  const T* row = logits + r * n;
  T top, total;
  fw_row_max_and_total(row, n, shared, &top, &total);
  if (threadIdx.x == 0) {
    const L label = labels[r];
    loss[r] = (label < 0 || label >= n) ? (T)nan("") : fw_log(total) - (row[label] - top);
  }
}
""",
    # grad[r, j] = (softmax(row)[j] - (j == label)) * g[r], the block's threads striding over j.
    "fw_sparse_xent_grad_rows": _ROW_REDUCTIONS + """
extern "C" __global__ void fw_sparse_xent_grad_rows(const T* logits, const L* labels,
                                                    const T* g, long long n, T* grad) {
  __shared__ T shared[FW_XENT_BLOCK];
  const long long r = blockIdx.x;
  const T* row = logits + r * n;
  T top, total;
  fw_row_max_and_total(row, n, shared, &top, &total);
  const L label = labels[r];
  const bool valid = label >= 0 && label < n;
  for (long long j = threadIdx.x; j < n; j += blockDim.x) {
    T p = fw_exp(row[j] - top) / total;
    if (j == label) p -= (T)1;
    grad[r * n + j] = valid ? p * g[r] : (T)nan("");
  }
}
""",
}
_C_TYPES = {"float32": "float", "float64": "double", "int32": "int", "int64": "long long"}

_FUSED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_LABEL_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))
_cache = {}


def _kernel(name):
    """The CuPy kernel object for ``SOURCES[name]``, built on first use."""
    kernel = _cache.get(name)
    if kernel is None:
        kernel = _cache[name] = backend.cupy_module().ElementwiseKernel(*SOURCES[name], name=name)
    return kernel


def row_source(name, dtype, label_dtype):
    """The CUDA text of ``ROW_SOURCES[name]`` with T and L set to these dtypes."""
    return (f"typedef {_C_TYPES[np.dtype(dtype).name]} T;\n"
            f"typedef {_C_TYPES[np.dtype(label_dtype).name]} L;\n" + ROW_SOURCES[name])


def _row_kernel(name, dtype, label_dtype):
    """The CuPy RawKernel for ``ROW_SOURCES[name]`` with T and L set to these dtypes."""
    key = name, dtype.name, label_dtype.name
    kernel = _cache.get(key)
    if kernel is None:
        kernel = _cache[key] = backend.cupy_module().RawKernel(
            row_source(name, dtype, label_dtype), name)
    return kernel


def fits(*arrays):
    """Whether the kernels take these arrays: all on the GPU, all float32 or all float64."""
    dtype = arrays[0].dtype
    return dtype in _FUSED_DTYPES and all(
        backend.is_device_array(a) and a.dtype == dtype for a in arrays)


def fits_xent(labels, logits, g=None):
    """Whether the cross-entropy kernels take these arrays: float logits (and a cotangent ``g``
    of the labels' shape: no Jacobian axes) and int32/int64 labels, all on the GPU, with at
    least one class (any number)."""
    floats = (logits,) if g is None else (logits, g)
    return (fits(*floats) and (g is None or g.shape == labels.shape)
            and backend.is_device_array(labels) and labels.dtype in _LABEL_DTYPES
            and logits.shape[-1] > 0)


def bias_add_relu(value, bias):
    """``relu(value + bias)`` in one pass."""
    return _kernel("fw_bias_add_relu")(value, bias)


def relu_grad(g, y):
    """``g * (y > 0)`` in one pass (``g`` may carry extra leading axes)."""
    return _kernel("fw_relu_grad")(g, y)


def sum_rows(x, axes):
    """``x`` summed over ``axes``, consecutive and ending before its last axis (the leading
    axes, a Jacobian's rows, stay), as ``ones @ x`` on cuBLAS."""
    lead = axes[0] if axes else x.ndim - 1
    rows = math.prod(x.shape[lead:-1])
    ones = _cache.get(("ones", rows, x.dtype))
    if ones is None:
        ones = _cache["ones", rows, x.dtype] = backend.cupy_module().ones(rows, x.dtype)
    if not lead:
        return ones @ x.reshape(rows, x.shape[-1])
    summed = ones @ x.reshape(math.prod(x.shape[:lead]), rows, x.shape[-1])
    return summed.reshape(x.shape[:lead] + x.shape[-1:])


def sparse_xent(labels, logits):
    """Per-example softmax cross-entropy of ``logits`` (..., n) with integer ``labels`` (...)."""
    cupy = backend.cupy_module()
    logits = cupy.ascontiguousarray(logits)  # rows are read by flat index
    n = logits.shape[-1]
    if n <= XENT_THREAD_CLASSES:
        return _kernel("fw_sparse_xent")(logits, labels, n)
    loss = cupy.empty(labels.shape, logits.dtype)
    _launch_rows("fw_sparse_xent_rows", labels, logits, [np.int64(n), loss])
    return loss


def sparse_xent_grad(g, labels, logits):
    """``(softmax(logits) - one_hot(labels)) * g[..., None]``, each row by one thread, or by
    one block when the rows are wide."""
    cupy = backend.cupy_module()
    logits = cupy.ascontiguousarray(logits)
    grad = cupy.empty_like(logits)
    n = logits.shape[-1]
    if n <= XENT_THREAD_CLASSES:
        _kernel("fw_sparse_xent_grad")(logits, labels, g, n, grad)
    else:
        _launch_rows("fw_sparse_xent_grad_rows", labels, logits,
                     [cupy.ascontiguousarray(g), np.int64(n), grad])
    return grad


def _launch_rows(name, labels, logits, rest):
    """Launch a row kernel, one block of ``XENT_BLOCK`` threads per row of ``logits``."""
    rows = labels.size
    if rows:  # CUDA refuses an empty grid
        labels = backend.cupy_module().ascontiguousarray(labels)
        _row_kernel(name, logits.dtype, labels.dtype)((rows,), (XENT_BLOCK,),
                                                      (logits, labels, *rest))


def adam(gradient, variable, slots, alpha, beta_1, beta_2, epsilon):
    """One Adam step on ``variable`` and its slots (m, v and, for AMSGrad, v_hat), in place."""
    name = "fw_adam_amsgrad" if len(slots) == 3 else "fw_adam"
    _kernel(name)(gradient, alpha, 1 - beta_1, 1 - beta_2, epsilon, variable, *slots)


def sgd(gradient, variable, slots, learning_rate, momentum, nesterov):
    """One SGD step on ``variable`` (and its momentum slot, when it has one), in place."""
    if not slots:
        _kernel("fw_sgd")(gradient, learning_rate, variable)
    else:
        _kernel("fw_sgd_momentum")(gradient, learning_rate, momentum, nesterov, variable,
                                   *slots)



def update(name, gradient, variable, slots, constants):
    """One optimizer step by the kernel ``fw_<name>`` (nadam, adamax, adadelta, lion, ftrl) on
    ``variable`` and its slots, in place; ``constants``: the kernel's scalar parameters, in
    order, in the variable's dtype."""
    _kernel(f"fw_{name}")(gradient, *constants, variable, *slots)
