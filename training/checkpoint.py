"""Save and restore a training run's state: model weights, optimizer state and the runner's
own ``extra`` (epoch, step, RNG state, config), as one ``fw.train`` checkpoint.

The file is ``fw.train.Checkpoint(model=model, optimizers={key: optimizer}, extra=extra)``
written by ``Checkpoint.write``: the one format the framework has (``fw.train`` and
``Model.save_weights`` write it too), so a run's checkpoint opens with ``fw.train`` and the
guarantees are that module's. Arrays are keyed by structural paths, so a checkpoint restores
into a fresh model built the same way, in this process or another::

    model/dense1/kernel                                   a model variable
    optimizers/<key>/iterations                           an optimizer's step count
    optimizers/<key>/slots/model/dense1/kernel/momentum   a slot, by the path of its variable

and the optimizers' numeric learning rates and ``extra`` are in the file's JSON header.
``<key>`` is the name the optimizer has in the ``optimizers`` dict, so one optimizer per layer
works. A save writes a temporary file beside the target and renames it over the target, so an
interrupted save leaves the previous checkpoint whole. A restore checks everything first (names,
shapes, dtypes) and reports every mismatch in one ``CheckpointMismatchError``; then nothing has
been changed.

A file that cannot be read as a checkpoint at all (cut short by a full disk, damaged, not a
checkpoint, or one of the runner's own format from before it shared ``fw.train``'s) raises
``CheckpointReadError`` naming the file. ``read_extra`` reads only the header, so a caller can
compare what ``extra`` describes (the runner: the config) before building anything into it. A
save killed outright (``kill -9``, a power cut) can leave its temporary file beside the target;
``remove_stale_temporaries`` clears those before the next save.
"""
import json
import os
import warnings
import zipfile
from contextlib import contextmanager

import framework as fw
from framework import checkpoint_file
from framework.train import CheckpointMismatchError, CheckpointReadError

__all__ = ["CheckpointMismatchError", "CheckpointReadError", "read_extra",
           "remove_stale_temporaries", "restore_checkpoint", "save_checkpoint"]

# The entries of the runner's first format, an archive of its own (kept only to name it).
_OLDER_FORMAT_ENTRIES = {"__format__.npy", "__extra__.npy"}


def save_checkpoint(path, model, optimizers=None, extra=None):
    """Write ``model``'s weights, the optimizers' state and ``extra`` (a JSON-able dict) to
    ``path`` atomically. ``optimizers`` is a dict ``{name: optimizer}`` or one optimizer."""
    try:  # (as JSON reads it back: tuples become lists, keys strings)
        extra = json.loads(json.dumps({} if extra is None else extra))
    except (TypeError, ValueError) as e:
        raise TypeError(f"save_checkpoint: extra must be JSON-serialisable: {e}") from None
    model._require_built("save_checkpoint()")  # (unbuilt: the error says to call or build it)
    _checkpoint(model, optimizers, extra).write(os.fspath(path))


def restore_checkpoint(path, model, optimizers=None, strict=True):
    """Load a checkpoint written by ``save_checkpoint`` into ``model`` and ``optimizers`` (the
    same keys as when saving) and return its ``extra`` dict.

    The model must be built (call it once, or ``model.build(input_shape)``). Entries the
    checkpoint lacks (missing) or has in excess (unexpected) raise one
    ``CheckpointMismatchError`` listing them all; with ``strict=False`` they are a warning and
    the matching part is restored. Shape and dtype mismatches always raise.
    """
    model._require_built("restore_checkpoint()")
    path, extra = os.fspath(path), {}
    with _naming_an_older_format(path):
        if strict:
            fw.train.restore_exactly(path, **_objects(model, optimizers, extra))
        else:
            status = _checkpoint(model, optimizers, extra).read(path)
            try:
                status.assert_consumed()
            except AssertionError as difference:
                warnings.warn(f"restore_checkpoint({path!r}): {difference}; restored the rest",
                              stacklevel=2)
    return extra


def read_extra(path):
    """The ``extra`` dict of the checkpoint at ``path``, without reading its arrays."""
    path = os.fspath(path)
    with _naming_an_older_format(path):
        return checkpoint_file.read_header(path).get("json", {}).get("extra", {})


def remove_stale_temporaries(path):
    """Delete the temporary files that saves to ``path`` killed mid-write left beside it; return
    their names. Call it only where no save to ``path`` is under way."""
    return checkpoint_file.remove_stale(os.path.dirname(os.path.abspath(path)),
                                        checkpoint_file.temporary_prefix(path))


def _objects(model, optimizers, extra):
    """The checkpoint's objects: no ``optimizers`` entry without optimizers (an empty dict
    would be a JSON value of its own)."""
    if optimizers is None:
        optimizers = {}
    elif not isinstance(optimizers, dict):
        optimizers = {"optimizer": optimizers}
    objects = {"model": model, "extra": extra}
    if optimizers:
        objects["optimizers"] = optimizers
    return objects


def _checkpoint(model, optimizers, extra):
    return fw.train.Checkpoint(**_objects(model, optimizers, extra))


@contextmanager
def _naming_an_older_format(path):
    """Turn the read error of a file in the runner's first format into one that says so."""
    try:
        yield
    except CheckpointReadError:
        if not _is_older_format(path):
            raise
        raise CheckpointReadError(
            f"{path} is a checkpoint of the runner's older format (from before its checkpoints "
            f"were fw.train's), which this version does not read") from None


def _is_older_format(path):
    try:
        with zipfile.ZipFile(path) as archive:
            return _OLDER_FORMAT_ENTRIES <= set(archive.namelist())
    except (OSError, zipfile.BadZipFile):
        return False
