"""Host memory: keep freed blocks for the next step instead of handing them back to the OS.

A training step allocates and frees the same large arrays every step. glibc's allocator serves
a block above its mmap threshold (128 KB at the start, raised to the largest block freed so
far) with pages of its own that it returns to the OS on free, and gives back the top of its
heap whenever more than twice that threshold lies free there. A step holding a few dozen
arrays of about 1 MB at its peak (a Transformer block's at batch 32) then frees them all at its
end and takes every page back, zeroed by the kernel, on the next step: a page fault each 4 KB,
a third of the W6 step's time in a fresh process. ``keep_freed_memory`` sets both thresholds
(``mallopt``): blocks up to 32 MB come from the heap, and up to 256 MB of it stays with the
process once freed, as PyTorch's and TensorFlow's own allocators keep theirs. The framework
calls it once at import; elsewhere than glibc it does nothing.
"""
import ctypes

__all__ = ["keep_freed_memory"]

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # (glibc's malloc.h)


def keep_freed_memory(mmap_threshold=32 << 20, trim_threshold=256 << 20):
    """Serve blocks up to ``mmap_threshold`` bytes from the heap and keep up to
    ``trim_threshold`` bytes of it free; True where the C library took both settings."""
    try:
        mallopt = ctypes.CDLL(None).mallopt  # (the C library the interpreter runs on)
    except (OSError, AttributeError, TypeError):  # (no mallopt: macOS, Windows)
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, mmap_threshold)) and bool(
        mallopt(_M_TRIM_THRESHOLD, trim_threshold))
