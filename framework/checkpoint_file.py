"""The checkpoint file: named arrays plus a JSON header in one ``.npz`` archive, written atomically.

Every checkpoint of the framework (``fw.train.Checkpoint``, ``Model.save_weights``) goes through
``write`` and ``read`` here, so there is one format and one set of guarantees:

* ``write`` puts the archive in a temporary file beside the target (its name ends in
  ``TEMP_SUFFIX``), flushes and fsyncs it, then renames it over the target and fsyncs the
  directory. An interrupted or failed write therefore leaves the previous file whole; the
  temporary file is removed on failure, and one left by a killed process is removed by the next
  write to that file (``remove_stale``; ``CheckpointManager`` removes those of all its files).
* ``read`` loads every array at once, so a truncated or corrupted file is one
  ``CheckpointReadError`` (a ``CheckpointError``) naming the file, never a half-read state;
  ``read_header`` reads the JSON header alone, so a caller can check what a file describes
  before it builds anything to restore into. A file that is not a zip archive (a text file, a
  ``.npy`` array) is refused by its first bytes, and nothing pickled is ever loaded.
* The file gets the mode any new file of the process gets (``0o666`` less the umask), as the
  run's other files do, not the private ``0o600`` of a temporary file; an error of the final
  rename (the target is a folder) names the target, not the temporary file.
"""
import errno
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


class CheckpointReadError(CheckpointError):
    """The file is missing, truncated, corrupted or not a checkpoint; the message names it."""


# What reading a damaged archive can raise: the file system, the zip layer, the compressed
# stream, NumPy's header parser, a missing entry, the header's text and JSON; TypeError: a
# ``.npy`` file, which ``np.load`` returns as an array rather than an archive.
_READ_ERRORS = (OSError, EOFError, KeyError, ValueError, TypeError, zipfile.BadZipFile,
                zlib.error, UnicodeDecodeError)


def write(path, arrays, header):
    """Write ``arrays`` ({key: array}) and the JSON-able ``header`` to ``path`` atomically."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    remove_stale(directory, temporary_prefix(path))
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
    """``(arrays, header)`` from a file ``write`` made; ``CheckpointReadError`` naming the file
    if it is missing, truncated, corrupted or not a checkpoint."""
    return _load(path, header_only=False)


def read_header(path):
    """The header of a file ``write`` made, without reading its arrays (errors as ``read``)."""
    return _load(path, header_only=True)[1]


def _load(path, header_only):
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise CheckpointReadError(f"{path}: no such checkpoint file")
    if not is_checkpoint_file(path):
        raise CheckpointReadError(f"{path} is not a checkpoint (not an .npz archive: "
                                  f"{_described(_start(path))})")
    try:
        with np.load(path, allow_pickle=False) as archive:
            if _HEADER not in archive.files:
                raise CheckpointReadError(f"{path} is not a checkpoint of format {_FORMAT} (it "
                                          f"has no {_HEADER} entry)")
            keys = [_HEADER] if header_only else archive.files
            arrays = {key: archive[key] for key in keys}
        header = json.loads(arrays.pop(_HEADER).tobytes().decode())
    except CheckpointReadError:
        raise
    except _READ_ERRORS as error:
        reason = ("it holds pickled Python objects, which a checkpoint never has (they are not "
                  "loaded: unpickling runs code)" if "pickle" in str(error)
                  else f"{type(error).__name__}: {error}")
        raise CheckpointReadError(f"{path}: not a readable checkpoint (truncated or corrupted?): "
                                  f"{reason}") from None
    if not isinstance(header, dict) or header.pop("format", None) != _FORMAT:
        raise CheckpointReadError(f"{path} is not a checkpoint of format {_FORMAT}")
    return arrays, header


def is_checkpoint_file(path):
    """Whether ``path`` starts like the archive ``write`` makes (a zip file)."""
    return _start(path, 4) == b"PK\x03\x04"


def _described(start):
    """What a file that is not an archive is, from its first bytes."""
    if not start:
        return "it is empty"
    if start.startswith(b"\x93NUMPY"):
        return "it is a single .npy array"
    if all(32 <= byte < 127 or byte in b"\t\r\n" for byte in start):
        return f"it is text, starting {start.decode()!r}"
    return f"it starts with {start!r}"


def _start(path, count=16):
    with open(path, "rb") as f:
        return f.read(count)


def temporary_prefix(path):
    """How the names of the temporary files of writes to ``path`` begin (``.{name}.``, then a
    random part without dots, then ``TEMP_SUFFIX``)."""
    return f".{os.path.basename(os.fspath(path))}."


def remove_stale(directory, prefix="."):
    """Delete the temporary files killed writes left in ``directory`` whose names begin with
    ``prefix`` (all of them by default; ``temporary_prefix(path)``: those of writes to
    ``path``); return their names, sorted. Only where no such write is under way."""
    removed = []
    for name in sorted(os.listdir(directory)):
        if name.startswith(prefix) and name.endswith(TEMP_SUFFIX):
            try:
                os.unlink(os.path.join(directory, name))
                removed.append(name)
            except FileNotFoundError:
                pass  # (another process cleaned it up first)
    return removed


def write_text(path, text):
    """A small text file (the ``checkpoint`` state file), replaced atomically too."""
    with _replacing(path, "w") as f:
        f.write(text)


@contextmanager
def _replacing(path, mode):
    """A file opened in ``mode`` that replaces ``path`` once the block completes: written as a
    temporary file beside it, fsynced, renamed over it; removed instead if the block fails."""
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, f"{os.strerror(errno.EISDIR)}, not a file to write",
                                os.fspath(path))
    handle, temporary = tempfile.mkstemp(prefix=temporary_prefix(path),
                                         suffix=TEMP_SUFFIX, dir=directory)
    try:
        if hasattr(os, "fchmod"):  # (POSIX)
            os.fchmod(handle, 0o666 & ~_umask())
        with os.fdopen(handle, mode) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        try:
            os.replace(temporary, path)
        except OSError as error:  # named by the target, not the temporary file
            raise type(error)(error.errno, error.strerror, os.fspath(path)) from None
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    _sync_directory(directory)


def _umask():
    """The process's umask (read by setting it, then setting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _sync_directory(directory):
    """Make a rename durable (POSIX; elsewhere the rename is all there is)."""
    if hasattr(os, "O_DIRECTORY"):
        handle = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)
