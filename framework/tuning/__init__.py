"""Speed beside the definitions, never in their place: host forms of a training step's ops for
NumPy arrays (``host``) and fused GPU kernels for CuPy arrays (``kernels``), each registered on
the op it serves and tested equal to its definition.
"""
