"""Whether weights are finite: a checkpoint is never replaced by weights that are not (the
runner's rule, ``BackupAndRestore``'s too), so the last good one stays."""
import math

import numpy as np

__all__ = ["finite", "finite_weights"]


def finite(tensor):
    """One reduction per tensor, which NaN or infinity in any entry makes non-finite: on the
    host a dot product with itself (one BLAS call, the cheapest pass over the entries), on the
    GPU a sum, which stays there. Only a result that is not finite, which huge finite entries
    could also give, is confirmed entry by entry."""
    if tensor.device == "cpu":
        flat = np.asarray(tensor).ravel()  # the tensor's own array: no copy
        return math.isfinite(float(np.dot(flat, flat))) or bool(np.isfinite(flat).all())
    import framework as fw
    return math.isfinite(float(fw.reduce_sum(tensor))) or bool(np.isfinite(tensor.numpy()).all())


def finite_weights(variables):
    return all(finite(variable) for variable in variables)
