"""Speed beside the definitions, never in their place: host forms of a training step's ops for
NumPy arrays (``host``) and fused GPU kernels for CuPy arrays (``kernels``), each registered on
the op it serves and tested equal to its definition; and host memory kept between steps
(``memory``: freed blocks stay with the process instead of being faulted back in every step).
"""
from .memory import keep_freed_memory

keep_freed_memory()
