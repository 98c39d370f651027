"""The checkpoint file: named arrays plus a JSON header in one ``.npz`` archive, written atomically.

Every checkpoint of the framework (``fw.train.Checkpoint``, ``Model.save_weights``) goes through
``write`` and ``read`` here, so there is one format and one set of guarantees:

* ``write`` puts the archive in a temporary file beside the target (its name ends in
  ``TEMP_SUFFIX``), flushes and fsyncs it, then renames it over the target and fsyncs the
  directory. An interrupted or failed write therefore leaves the previous file whole; the
  temporary file is removed on failure, and one left by a killed process is removed by the next
  write into that directory (``remove_stale``).
* ``read`` loads every array at once, so a truncated or corrupted file is one
  ``CheckpointError`` naming the file, never a half-read state.
"""
import json
import os
import tempfile
import zipfile
import zlib
from contextlib import contextmanager

import numpy as np

TEMP_SUFFIX = ".fwckpt-tmp"
_HEADER = "__header__"
_FORMAT = "framework-checkpoint-1"


class CheckpointError(ValueError):
    """A checkpoint file cannot be read or does not fit the objects it is restored into."""


def write(path, arrays, header):
    """Write ``arrays`` ({key: array}) and the JSON-able ``header`` to ``path`` atomically."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    remove_stale(directory)
    document = json.dumps({"format": _FORMAT, **header})
    content = {_HEADER: np.frombuffer(document.encode(), np.uint8)}
    for key, value in arrays.items():
        if key == _HEADER:
            raise ValueError(f"checkpoint key {_HEADER!r} is reserved")
        content[key] = np.asarray(value)
    with _replacing(path, "wb") as f:
        np.savez(f, **content)
    return path


def read(path):
    """``(arrays, header)`` from a file ``write`` made; ``CheckpointError`` naming the file if
    it is missing, truncated, corrupted or not a checkpoint."""
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise CheckpointError(f"{path}: no such checkpoint file")
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in archive.files}
        header = json.loads(arrays.pop(_HEADER).tobytes().decode())
    except (OSError, EOFError, KeyError, ValueError, zipfile.BadZipFile, zlib.error,
            UnicodeDecodeError) as error:
        raise CheckpointError(f"{path}: not a readable checkpoint (truncated or corrupted?): "
                              f"{type(error).__name__}: {error}") from None
    if header.pop("format", None) != _FORMAT:
        raise CheckpointError(f"{path}: not a checkpoint of format {_FORMAT}")
    return arrays, header


def is_checkpoint_file(path):
    """Whether ``path`` starts like the archive ``write`` makes (a zip file)."""
    with open(path, "rb") as f:
        return f.read(4) == b"PK\x03\x04"


def remove_stale(directory):
    """Delete the temporary files a killed write left in ``directory``."""
    for name in os.listdir(directory):
        if name.endswith(TEMP_SUFFIX):
            try:
                os.unlink(os.path.join(directory, name))
            except FileNotFoundError:
                pass  # (another process cleaned it up first)


def write_text(path, text):
    """A small text file (the ``checkpoint`` state file), replaced atomically too."""
    with _replacing(path, "w") as f:
        f.write(text)


@contextmanager
def _replacing(path, mode):
    """A file opened in ``mode`` that replaces ``path`` once the block completes: written as a
    temporary file beside it, fsynced, renamed over it; removed instead if the block fails."""
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.",
                                         suffix=TEMP_SUFFIX, dir=directory)
    try:
        with os.fdopen(handle, mode) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    _sync_directory(directory)


def _sync_directory(directory):
    """Make a rename durable (POSIX; elsewhere the rename is all there is)."""
    if hasattr(os, "O_DIRECTORY"):
        handle = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)
