"""``fw.summary``: TensorFlow 2's summaries, written as TensorBoard event files.

A TF2 training loop logs with ``writer = fw.summary.create_file_writer(logdir)`` and, inside
``with writer.as_default():``, ``fw.summary.scalar("loss", loss, step=epoch)`` (also ``text``
and ``histogram``). The file is what TensorFlow 2.21 writes, record for record: TFRecord framing
(length, masked CRC32-C, data, masked CRC32-C) around ``Event`` protocol buffers whose values
are tensors tagged with the TensorBoard plugin that reads them ("scalars", "text",
"histograms"), so TensorBoard, ``tf.compat.v1.train.summary_iterator`` or ``tf.data`` read it
as theirs. The few protocol-buffer fields involved are encoded here by hand (no dependency).

Under ``fw.function`` each write is a replayed step: it happens on every call, with that call's
values, as TensorFlow's summary ops do inside a graph.
"""
import os
import socket
import struct
import threading
import time
from contextlib import contextmanager
from types import SimpleNamespace

import numpy as np

from .engine import backend
from .engine.tensor import Tensor
from .engine.context import replayed

__all__ = ["SummaryWriter", "create_file_writer", "experimental", "flush", "histogram",
           "record_if", "scalar", "should_record_summaries", "text"]


class _State(threading.local):
    def __init__(self):
        self.writers = []  # the default writers (as_default), innermost last, with their step
        self.step = None  # experimental.set_step's
        self.record = [True]  # record_if's conditions, innermost last


_state = _State()


# --- the file format ------------------------------------------------------------------------------
def _crc32c_table():
    table = []
    for n in range(256):
        crc = n
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_CRC_TABLE = _crc32c_table()


def _masked_crc(data):
    """TFRecord's checksum: CRC-32C (Castagnoli), rotated and offset."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _CRC_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _record(data):
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", _masked_crc(length)) + data + struct.pack(
        "<I", _masked_crc(data))


def _varint(n):
    out = bytearray()
    n &= (1 << 64) - 1  # (a negative int64 as protobuf writes it: ten bytes)
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number, payload):
    """A length-delimited field (wire type 2)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


_DATA_TYPES = {"float32": 1, "float64": 2, "int32": 3, "object": 7, "int64": 9, "bool": 10}


def _tensor(array):
    """A ``TensorProto``: its dtype, shape, and the values (strings as ``string_val``, numbers
    as little-endian ``tensor_content``)."""
    shape = b"".join(_field(2, _varint(1 << 3) + _varint(d)) for d in array.shape)
    proto = _varint(1 << 3) + _varint(_DATA_TYPES[array.dtype.name]) + _field(2, shape)
    if array.dtype == object:
        return proto + b"".join(_field(8, s if isinstance(s, bytes) else str(s).encode())
                                for s in array.reshape(-1))
    return proto + _field(4, np.ascontiguousarray(array, array.dtype.newbyteorder("<")).tobytes())


def _event(step, value=None, file_version=None):
    event = struct.pack("<Bd", 1 << 3 | 1, time.time())
    if file_version is not None:
        return event + _field(3, file_version) + _field(10, _field(1, b"fw.summary"))
    return event + _varint(2 << 3) + _varint(step) + _field(5, _field(1, value))


def _value(tag, array, plugin, description):
    metadata = _field(1, _field(1, plugin.encode()))
    if description:
        metadata += _field(3, description.encode())
    return _field(1, tag.encode()) + _field(8, _tensor(array)) + _field(9, metadata)


# --- writers ---------------------------------------------------------------------------------------
class SummaryWriter:
    """An event file under ``logdir`` (created with it), named as TensorFlow names them."""

    _count = 0

    def __init__(self, logdir, filename_suffix=None):
        os.makedirs(logdir, exist_ok=True)
        SummaryWriter._count += 1
        name = (f"events.out.tfevents.{int(time.time())}.{socket.gethostname()}."
                f"{os.getpid()}.{SummaryWriter._count}.v2{filename_suffix or ''}")
        self.path = os.path.join(logdir, name)
        self._file = open(self.path, "wb")
        self._lock = threading.Lock()
        self._write(_event(0, file_version=b"brain.Event:2"))

    def _write(self, event):
        with self._lock:
            if self._file is None:
                raise ValueError(f"fw.summary: the writer for {self.path} is closed")
            self._file.write(_record(event))

    @contextmanager
    def as_default(self, step=None):
        """Make this the writer the summary functions write to (and ``step`` their step)."""
        _state.writers.append((self, step))
        try:
            yield self
        finally:
            _state.writers.pop()
            self.flush()

    def set_as_default(self, step=None):
        _state.writers.append((self, step))

    def init(self):
        """(Opened on creation already: nothing to do, as a second ``init`` in TensorFlow.)"""

    def flush(self):
        with self._lock:
            if self._file is not None:
                self._file.flush()

    def close(self):
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None,
                       name=None, experimental_trackable=False, experimental_mesh=None):
    """A ``SummaryWriter`` to a new event file in ``logdir`` (written as each value comes)."""
    return SummaryWriter(logdir, filename_suffix)


def flush(writer=None, name=None):
    writer = writer if writer is not None else (_state.writers[-1][0] if _state.writers else None)
    if writer is not None:
        writer.flush()


# --- what is written -------------------------------------------------------------------------------
def _set_step(step):
    _state.step = step


def _get_step():
    return _state.step


experimental = SimpleNamespace(set_step=_set_step, get_step=_get_step)


@contextmanager
def record_if(condition):
    """Write summaries inside only while ``condition`` (a bool, or a function of nothing
    returning one) holds."""
    _state.record.append(condition)
    try:
        yield
    finally:
        _state.record.pop()


def should_record_summaries():
    """Whether a summary written now would be recorded: a default writer, and every
    ``record_if`` condition true."""
    if not _state.writers:
        return False
    return all(bool(c() if callable(c) else c) for c in _state.record)


def _array(data):
    value = data._value if isinstance(data, Tensor) else data
    return np.asarray(backend.to_host(value) if backend.is_device_array(value) else value)


def _step_of(step, what):
    """The step to write at: the argument, else the default writer's, else set_step's."""
    if step is None:
        step = _state.writers[-1][1] if _state.writers[-1][1] is not None else _state.step
    if step is None:
        raise ValueError(f"fw.summary.{what}: no step set. Give one as the step argument or "
                         f"through fw.summary.experimental.set_step() (or as_default(step=))")
    return step


@replayed  # (under fw.function: written on every call, with that call's data and step)
def _write(writer, name, plugin, convert, data, step, description):
    value = _value(name, convert(data), plugin, description)
    writer._write(_event(int(_array(step)), value))


def _emit(convert, name, data, step, description, plugin):
    if not should_record_summaries():
        return False
    writer = _state.writers[-1][0]
    _write(writer, name, plugin, convert, data, _step_of(step, plugin), description)
    return True


def _scalar_array(data):
    array = _array(data)
    if array.ndim:
        raise ValueError(f"fw.summary.scalar: data must be a scalar, got shape {array.shape}")
    return array.astype(np.float32)


def scalar(name, data, step=None, description=None):
    """Write ``data`` (a number or 0-d tensor, as float32) as a scalar named ``name``: True
    if it was written, False with no default writer or under a false ``record_if``."""
    return _emit(_scalar_array, name, data, step, description, "scalars")


def _text_array(data):
    return np.asarray(data if isinstance(data, (str, bytes)) else _array(data), dtype=object)


def text(name, data, step=None, description=None):
    """Write a string (or a tensor of strings) for TensorBoard's text dashboard."""
    return _emit(_text_array, name, data, step, description, "text")


def _buckets(data, count):
    """TensorBoard's histogram: ``count`` rows of (left edge, right edge, count), equal widths
    from the minimum to the maximum (the last edge the maximum itself); one value in the last
    bucket when all are equal; zeros for no data."""
    values = _array(data).astype(np.float64).reshape(-1)
    if not values.size:
        return np.zeros((count, 3))
    low, high = values.min(), values.max()
    if low == high:
        buckets = np.zeros((count, 3))
        buckets[:, :2] = low
        buckets[-1, 2] = values.size
        return buckets
    width = (high - low) / count
    index = np.minimum(np.floor((values - low) / width).astype(np.int64), count - 1)
    counts = np.bincount(index, minlength=count).astype(np.float64)
    edges = np.linspace(low, high, count + 1)
    edges[-1] = high
    return np.stack([edges[:-1], edges[1:], counts], axis=1)


def histogram(name, data, step=None, buckets=None, description=None):
    """Write the distribution of ``data``'s values in ``buckets`` (30) equal-width buckets."""
    count = 30 if buckets is None else int(buckets)
    return _emit(lambda d: _buckets(d, count), name, data, step, description, "histograms")
