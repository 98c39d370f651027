"""The fused kernels' sources, checked without a GPU: their parameters, and that they compile
for the GPU as CuPy generates them, and the row kernels as they stand (with nvcc; skipped,
saying why, without CuPy or nvcc).

Their arithmetic is checked against the NumPy path in test_gpu.py, on a GPU and on the CuPy
emulator, which compiles the same sources for the CPU.
"""
import importlib.machinery
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cupy_emulator
from framework.tuning import kernels

# The real CuPy, found on sys.path (a session may have put the emulator in sys.modules).
CUPY_INSTALLED = importlib.machinery.PathFinder.find_spec("cupy") is not None


def test_kernel_sources_declare_known_parameters():
    """Each source has CuPy's fields, and parameters ``[raw] TYPE name`` of known types."""
    for name, spec in kernels.SOURCES.items():
        assert re.fullmatch(r"fw_[a-z0-9_]+", name) and all(spec), name
        for params in (spec.in_params, spec.out_params):
            for param in params.split(","):
                assert re.fullmatch(r"\s*(raw\s+)?([A-Z]|float32|float64|int64|bool)\s+"
                                    r"[a-z_][a-z0-9_]*\s*", param), (name, param)


def test_kernel_sources_compile_with_nvcc(tmp_path):
    """The sources as CuPy generates them, for every dtype they serve, compile for the GPU.

    This uses CuPy's own (private) code generator, so it needs the real CuPy (not a GPU) and
    nvcc; it says nothing about the numbers, which the emulator and the GPU tests check.
    """
    nvcc = shutil.which("nvcc")
    if not CUPY_INSTALLED:
        pytest.skip("CuPy is not installed (its code generator writes the CUDA source)")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH")
    if sys.modules.get("cupy") is cupy_emulator:
        pytest.skip("this session runs on the CuPy emulator")
    import cupy
    from cupy._core import _kernel
    if not hasattr(_kernel, "_get_elementwise_kernel_code"):
        pytest.skip(f"CuPy {cupy.__version__}'s code generator is not the one this test knows")
    include = Path(cupy.__file__).parent / "_core" / "include"
    headers = "".join(f"#include <cupy/{h}>\n" for h in (
        "complex.cuh", "carray.cuh", "atomics.cuh", "math_constants.h"))
    units = [headers + _generated_source(_kernel, name, spec, np.dtype(dtype))
             for name, spec in kernels.SOURCES.items() for dtype in ("float32", "float64")]
    for i, unit in enumerate(units):
        (tmp_path / f"k{i}.cu").write_text(unit)
    built = subprocess.run([nvcc, "-std=c++17", "-arch=compute_80", "-I", str(include), "-ptx",
                            *[str(tmp_path / f"k{i}.cu") for i in range(len(units))],
                            "-odir", str(tmp_path)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr


def test_row_kernels_compile_with_nvcc(tmp_path):
    """The whole-CUDA row kernels, for every dtype pair they serve, compile for the GPU as they
    stand (no CuPy header): nvcc here, NVRTC on the GPU (benchmarks/gpu_check.py)."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not on PATH")
    units = []
    for name in kernels.ROW_SOURCES:
        for dtype in ("float32", "float64"):
            for label_dtype in ("int32", "int64"):
                units.append(tmp_path / f"{name}_{dtype}_{label_dtype}.cu")
                units[-1].write_text(kernels.row_source(name, dtype, label_dtype))
    built = subprocess.run([nvcc, "-std=c++17", "-arch=compute_80", "-ptx", *map(str, units),
                            "-odir", str(tmp_path)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr


# The parameters that the kernels' Python wrappers pass as numbers, not arrays.
SCALAR_PARAMS = {"n", "alpha", "one_minus_beta_1", "one_minus_beta_2", "epsilon",
                 "learning_rate", "momentum", "nesterov"}


def _generated_source(_kernel, name, spec, dtype):
    """CuPy's source for ``spec`` on C-contiguous 2-D arrays of ``dtype`` (int64 labels)."""
    ndarray_kind, indexer_kind, scalar_kind = 1, 2, 3  # CuPy's _ArgKind values
    ins = _kernel._get_param_info(spec.in_params, True)
    outs = _kernel._get_param_info(spec.out_params, False)
    bound = {"T": dtype, "L": np.dtype(np.int64)}

    def arginfo(p):
        param_dtype = p.dtype if p.dtype is not None else bound[p.ctype]
        if p.name in SCALAR_PARAMS:
            return _kernel._ArgInfo(scalar_kind, object, param_dtype, 0, True, True)
        return _kernel._ArgInfo(ndarray_kind, object, param_dtype, 2, True, True)

    placeholders = sorted({p.ctype for p in ins + outs if p.dtype is None})
    type_map = _kernel._TypeMap(tuple((c, bound[c]) for c in placeholders))
    params = ins + outs + _kernel._get_param_info("CIndexer _ind", False)
    infos = tuple(arginfo(p) for p in ins + outs)
    infos += (_kernel._ArgInfo(indexer_kind, object, None, 2, True, True),)
    return _kernel._get_elementwise_kernel_code(infos, type_map, params, spec.operation,
                                                f"{name}_{dtype}", "")
