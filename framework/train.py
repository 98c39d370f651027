"""``fw.train``: checkpoints of whole training states (``tf.train.Checkpoint`` and its manager).

A ``Checkpoint(**objects)`` saves what its objects hold, keyed by attribute path from the
keyword names, as TensorFlow's object graph is:

* a ``fw.Variable``: its value, under its path (``step``);
* a layer or model (anything with ``named_variables()``): each variable under the layer's
  structural path (``model/dense1/kernel``), so a fresh model built the same way restores;
* an optimizer (anything with ``get_state``/``set_state``): ``iterations``, a numeric learning
  rate and every slot, the slot keyed by the path of its variable
  (``optimizer/slots/model/dense1/kernel/m``), so the variable must be tracked too;
* objects with attributes (an ``fw.Module``, a plain object), lists, tuples, dicts and nested
  ``Checkpoint``\\ s: walked, each part under ``name/attribute``, ``name/0``, ``name/key``;
* beyond TensorFlow, for a training loop's own bookkeeping: a ``numpy.random.Generator`` (its
  state) and a dict of JSON values (epoch, step, a config), restored in place.

``restore`` checks everything before it changes anything: a variable whose shape or dtype
differs (``CheckpointMismatchError``), or a file that is truncated or corrupted
(``CheckpointReadError``), is one ``CheckpointError`` (a ``ValueError``) naming the variable or
the file, and then nothing has been restored. ``restore_exactly`` also refuses a partial match,
listing in the same error what the file lacks and what it holds in excess. Files are
written atomically (``framework.checkpoint_file``): a failed save leaves the last one whole.
"""
import json
import os
import re

import numpy as np

from . import checkpoint_file
from .engine import backend
from .checkpoint_file import CheckpointError, CheckpointReadError
from .engine.tensor import Variable, wrap

__all__ = ["Checkpoint", "CheckpointError", "CheckpointManager", "CheckpointMismatchError",
           "CheckpointReadError", "latest_checkpoint", "restore_exactly"]

_STATE_FILE = "checkpoint"
_JSON_LEAVES = (str, int, float, bool, type(None))


class CheckpointMismatchError(CheckpointError):
    """The file and the objects restored from it differ; the message lists every difference."""


class Checkpoint:
    """Groups objects to save and restore together (``tf.train.Checkpoint``)."""

    def __init__(self, root=None, **kwargs):
        if root is not None:
            kwargs["root"] = root
        if "save_counter" in kwargs:
            raise ValueError("Checkpoint: 'save_counter' is the checkpoint's own counter; "
                             "give the object another name")
        for name, value in kwargs.items():
            _check_trackable(name, value)
        self._objects = dict(kwargs)
        self.save_counter = Variable(wrap(np.zeros((), np.int64)), trainable=False,
                                     name="save_counter")

    def __getattr__(self, name):
        objects = self.__dict__.get("_objects", {})
        if name in objects:
            return objects[name]
        raise AttributeError(f"'Checkpoint' object has no attribute '{name}'")

    # --- writing ---------------------------------------------------------------------------------
    def save(self, file_prefix, options=None):
        """Write ``{file_prefix}-{n}`` (n counts this checkpoint's saves from 1), record it as
        the directory's latest checkpoint, and return its path."""
        number = int(self.save_counter) + 1
        path = f"{os.fspath(file_prefix)}-{number}"
        self.save_counter.assign(number)
        try:
            self.write(path)
        except BaseException:
            self.save_counter.assign(number - 1)
            raise
        _write_state(os.path.dirname(os.path.abspath(path)), path, [path])
        return path

    def write(self, file_prefix, options=None):
        """Write the checkpoint to exactly ``file_prefix`` (no numbering, no state file)."""
        arrays, header = _collect(_Graph(self._objects))
        header["save_counter"] = int(self.save_counter)
        return checkpoint_file.write(file_prefix, arrays, header)

    # --- reading ---------------------------------------------------------------------------------
    def read(self, save_path, options=None):
        """Restore from a file ``write`` made; returns the status of the match."""
        return self._load(save_path, with_counter=False)

    def restore(self, save_path, options=None):
        """Restore from a file ``save`` made (None: nothing, as a fresh start); returns a status
        whose ``assert_consumed()`` checks that file and objects matched exactly."""
        if save_path is None:
            return LoadStatus([], [])
        return self._load(save_path, with_counter=True)

    def _load(self, save_path, with_counter, exact=False):
        save_path = os.fspath(save_path)
        if os.path.isdir(save_path):
            raise CheckpointReadError(f"{save_path} is a directory, not a checkpoint; use "
                                      f"fw.train.latest_checkpoint({save_path!r}) to find one in it")
        arrays, header = checkpoint_file.read(save_path)
        graph = _Graph(self._objects)
        plan = _Restore(arrays, header)
        plan.match(graph)
        errors = list(plan.errors)
        if exact and (plan.unused or plan.unmatched):
            errors.insert(0, _differences(sorted(plan.unused), plan.unmatched))
        if errors:
            raise CheckpointMismatchError(f"{save_path}: does not fit the objects restored into "
                                          f"it: " + "; ".join(errors) + " (nothing was restored)")
        plan.apply()
        if with_counter:
            self.save_counter.assign(int(header.get("save_counter", 0)))
        return LoadStatus(sorted(plan.unused), plan.unmatched)


def restore_exactly(save_path, **objects):
    """Restore ``objects`` from ``save_path`` only if every value in the file finds an object
    and every object a value; else one ``CheckpointMismatchError`` and nothing restored (what a
    weights file or a resumed run needs, where TensorFlow's ``restore`` matches partially)."""
    Checkpoint(**objects)._load(save_path, with_counter=False, exact=True)


def _differences(unused, unmatched):
    """The words for a partial match, shared by ``restore_exactly`` and ``assert_consumed``."""
    return (f"unexpected in the checkpoint (values no object takes): {unused or 'none'}; "
            f"missing from the checkpoint (objects with no value): {unmatched or 'none'}")


class LoadStatus:
    """What a restore matched: ``assert_consumed`` checks that every value in the file found
    an object and every object a value; ``expect_partial`` accepts a partial match."""

    def __init__(self, unused, unmatched):
        self._unused, self._unmatched = unused, unmatched

    def assert_consumed(self):
        if self._unused or self._unmatched:
            raise AssertionError("checkpoint and objects differ: "
                                 + _differences(self._unused, self._unmatched))
        return self

    def assert_existing_objects_matched(self):
        if self._unmatched:
            raise AssertionError(f"objects the checkpoint has no value for: {self._unmatched}")
        return self

    def expect_partial(self):
        return self


def _check_trackable(name, value):
    if isinstance(value, (Variable, Checkpoint, list, tuple, dict, np.random.Generator)) \
            or hasattr(value, "named_variables") or hasattr(value, "get_state") \
            or hasattr(value, "variables") or (hasattr(value, "__dict__") and not callable(value)):
        return  # (a plain object: its public attributes are walked)
    raise TypeError(f"Checkpoint: '{name}' is a {type(value).__name__}, which holds nothing to "
                    f"checkpoint; give variables, layers, models, modules, optimizers, "
                    f"numpy Generators, or dicts of JSON values")


def _is_json(value):
    """Whether ``value`` is a dict whose leaves are all JSON values (a loop's bookkeeping)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if not all(isinstance(k, str) for k in item):
                return False
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif not isinstance(item, _JSON_LEAVES):
            return False
    return True


class _Graph:
    """The objects of a checkpoint by path: variables, optimizers, generators, JSON dicts."""

    def __init__(self, objects):
        self.variables, self.optimizers, self.generators, self.json = {}, {}, {}, {}
        seen = set()
        stack = list(reversed(list(objects.items())))
        while stack:  # (iterative: a deep object graph is fine)
            path, obj = stack.pop()
            if id(obj) in seen and not isinstance(obj, _JSON_LEAVES):
                continue
            seen.add(id(obj))
            stack.extend(reversed(self._visit(path, obj)))

    def _visit(self, path, obj):
        """Record ``obj`` if it is a leaf of the graph; else the children to walk."""
        if isinstance(obj, Variable):
            self.variables.setdefault(path, obj)
        elif isinstance(obj, Checkpoint):
            return [(f"{path}/{k}", v) for k, v in obj._objects.items()]
        elif isinstance(obj, np.random.Generator):
            self.generators[path] = obj
        elif hasattr(obj, "get_state") and hasattr(obj, "set_state") \
                and hasattr(obj, "get_slot_names"):
            self.optimizers[path] = obj
        elif hasattr(obj, "named_variables"):
            for sub, variable in obj.named_variables().items():
                self.variables.setdefault(f"{path}/{sub}", variable)
        elif isinstance(obj, dict):
            if _is_json(obj):
                self.json[path] = obj
                return []
            return [(f"{path}/{k}", v) for k, v in obj.items()]
        elif isinstance(obj, (list, tuple)):
            return [(f"{path}/{i}", v) for i, v in enumerate(obj)]
        elif hasattr(obj, "__dict__") and not isinstance(obj, type):
            return [(f"{path}/{k}", v) for k, v in vars(obj).items() if not k.startswith("_")]
        return []


def _collect(graph):
    """The arrays and the JSON header of a checkpoint of ``graph``."""
    arrays = {path: variable.numpy() for path, variable in graph.variables.items()}
    paths = {id(v): p for p, v in graph.variables.items()}
    header = {"optimizers": {}, "generators": {}, "json": {}}
    for key, optimizer in graph.optimizers.items():
        state = optimizer.get_state()
        arrays[f"{key}/iterations"] = np.asarray(state["iterations"], np.int64)
        header["optimizers"][key] = {"learning_rate": state.get("learning_rate")}
        for variable, slots in state["slots"].items():
            if id(variable) not in paths:
                raise ValueError(f"optimizer '{key}' keeps slots for variable "
                                 f"'{variable.path}', which this checkpoint does not track: "
                                 f"add the model (or the variable) to the Checkpoint")
            for slot, value in slots.items():
                arrays[f"{key}/slots/{paths[id(variable)]}/{slot}"] = value
    for key, generator in graph.generators.items():
        header["generators"][key] = generator.bit_generator.state
    for key, value in graph.json.items():
        header["json"][key] = value
    json.dumps(header)  # (a state that JSON cannot hold fails here, before any file is made)
    return arrays, header


class _Restore:
    """The assignments a restore makes, all checked before any is done."""

    def __init__(self, arrays, header):
        self.arrays, self.header = dict(arrays), header
        self.unused = set(arrays)
        self.unmatched, self.errors, self.steps = [], [], []

    def _take(self, key, variable):
        """The stored array for ``variable`` under ``key``, checked (None if absent)."""
        if key not in self.arrays:
            self.unmatched.append(key)
            return None
        self.unused.discard(key)
        value = self.arrays[key]
        if value.shape != variable.shape or value.dtype != variable.dtype:
            self.errors.append(f"variable '{key}' ('{variable.name}') is "
                               f"{variable.dtype.name}{list(variable.shape)}, the checkpoint "
                               f"holds {value.dtype.name}{list(value.shape)}")
            return None
        return value

    def match(self, graph):
        for key, variable in graph.variables.items():
            value = self._take(key, variable)
            if value is not None:
                self.steps.append(lambda v=variable, a=value: v.assign(
                    backend.to_device(a, v.device)))
        for key, optimizer in graph.optimizers.items():
            self._match_optimizer(key, optimizer, graph.variables)
        for key, generator in graph.generators.items():
            self._match_state(key, "generators", lambda s, g=generator: setattr(
                g.bit_generator, "state", s))
        for key, target in graph.json.items():
            self._match_state(key, "json", lambda s, d=target: (d.clear(), d.update(s)))

    def _match_state(self, key, kind, assign):
        states = self.header.get(kind, {})
        if key in states:
            self.steps.append(lambda s=states[key]: assign(s))
        else:
            self.unmatched.append(key)

    def _match_optimizer(self, key, optimizer, variables):
        state, names = {"slots": {}}, optimizer.get_slot_names()
        current = optimizer.get_state()
        iterations = self.arrays.get(f"{key}/iterations")
        if iterations is None:
            self.unmatched.append(f"{key}/iterations")
        else:
            self.unused.discard(f"{key}/iterations")
            state["iterations"] = int(iterations)
        rate = self.header.get("optimizers", {}).get(key, {}).get("learning_rate")
        if current["learning_rate"] is not None:  # (a schedule's rate follows ``iterations``)
            if rate is None:
                self.unmatched.append(f"{key}/learning_rate")
            else:
                state["learning_rate"] = rate
        for path, variable in variables.items():
            keys = [f"{key}/slots/{path}/{name}" for name in names]
            present = [k for k in keys if k in self.arrays]
            if not present:  # (slots the optimizer has made already are expected in the file)
                self.unmatched.extend(keys if variable in current["slots"] else ())
                continue
            values = [self._take(k, variable) for k in keys]
            if all(v is not None for v in values):
                state["slots"][variable] = dict(zip(names, values))
        stored = {k.rsplit("/", 1)[1] for k in self.arrays if k.startswith(f"{key}/slots/")}
        if stored - set(names):
            self.errors.append(f"optimizer '{key}' keeps slots {names}, the checkpoint has "
                               f"{sorted(stored)}")
        self.steps.append(lambda: optimizer.set_state(state))

    def apply(self):
        for step in self.steps:
            step()


# --- the directory's state file and the manager ------------------------------------------------
def _write_state(directory, latest, paths):
    """TensorFlow's ``checkpoint`` state file: the latest path and all kept ones, relative."""
    def line(key, path):
        return f'{key}: "{os.path.relpath(path, directory)}"\n'

    text = line("model_checkpoint_path", latest) + "".join(
        line("all_model_checkpoint_paths", p) for p in paths)
    checkpoint_file.write_text(os.path.join(directory, _STATE_FILE), text)


def _read_state(directory):
    """``(latest, [kept])`` from the state file (absolute paths), or ``(None, [])``."""
    try:
        with open(os.path.join(directory, _STATE_FILE)) as f:
            text = f.read()
    except FileNotFoundError:
        return None, []
    latest, kept = None, []
    for key, value in re.findall(r'^(\w+):\s*"(.*)"\s*$', text, re.MULTILINE):
        path = value if os.path.isabs(value) else os.path.join(directory, value)
        if key == "model_checkpoint_path":
            latest = path
        elif key == "all_model_checkpoint_paths":
            kept.append(path)
    return latest, kept


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The path of the newest checkpoint saved in ``checkpoint_dir``, or None."""
    latest, _ = _read_state(os.fspath(checkpoint_dir))
    return latest if latest is not None and os.path.isfile(latest) else None


class CheckpointManager:
    """Numbered saves of one checkpoint in one directory, keeping the last ``max_to_keep``
    (all with None) and deleting older ones (``tf.train.CheckpointManager``)."""

    def __init__(self, checkpoint, directory, max_to_keep=5, checkpoint_name="ckpt"):
        if not isinstance(checkpoint, Checkpoint):
            raise TypeError(f"CheckpointManager manages a fw.train.Checkpoint, got "
                            f"{type(checkpoint).__name__}")
        if max_to_keep is not None and (isinstance(max_to_keep, bool) or max_to_keep < 1):
            raise ValueError(f"max_to_keep must be a positive integer or None, got "
                             f"{max_to_keep!r}")
        self._checkpoint, self._max_to_keep = checkpoint, max_to_keep
        self._directory = os.fspath(directory)
        self._prefix = os.path.join(self._directory, checkpoint_name)
        latest, kept = _read_state(self._directory)
        self._checkpoints = [p for p in kept if os.path.isfile(p)]
        self._latest = latest if latest in self._checkpoints else (
            self._checkpoints[-1] if self._checkpoints else None)

    @property
    def directory(self):
        return self._directory

    @property
    def checkpoints(self):
        """The kept checkpoints' paths, oldest first."""
        return list(self._checkpoints)

    @property
    def latest_checkpoint(self):
        return self._latest

    def save(self, checkpoint_number=None):
        """Save ``{directory}/{checkpoint_name}-{n}``, n the checkpoint's save counter (or
        ``checkpoint_number``); drop the oldest beyond ``max_to_keep``; return the path."""
        counter = self._checkpoint.save_counter
        previous = int(counter)
        counter.assign(previous + 1)
        number = previous + 1 if checkpoint_number is None else int(checkpoint_number)
        path = f"{self._prefix}-{number}"
        for prefix in (f".{os.path.basename(self._prefix)}-",  # (what killed saves left)
                       checkpoint_file.temporary_prefix(_STATE_FILE)):
            checkpoint_file.remove_stale(self._directory, prefix)
        try:
            self._checkpoint.write(path)
        except BaseException:
            counter.assign(previous)
            raise
        kept = [p for p in self._checkpoints if p != path] + [path]
        dropped = []
        if self._max_to_keep is not None and len(kept) > self._max_to_keep:
            dropped, kept = kept[:-self._max_to_keep], kept[-self._max_to_keep:]
        _write_state(self._directory, path, kept)
        for old in dropped:  # (after the state file stops naming them)
            if os.path.isfile(old):
                os.unlink(old)
        self._checkpoints, self._latest = kept, path
        return path
