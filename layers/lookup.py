"""Keras 3's lookup layers: ``IntegerLookup`` and ``StringLookup``, tokens to indices in a
vocabulary and back, with Keras's arguments, defaults, config keys and index layout.

``call`` is made of framework ops (a binary search in the sorted vocabulary, traced by
``fw.function``); ``adapt`` counts the tokens of the host data given to it. Unlike Keras,
which keeps an adapted vocabulary as an asset of the ``.keras`` file, ``get_config`` holds it
under ``vocabulary``, so a saved model keeps it.
"""
import numpy as np

import framework as fw

from .base import LAYERS, Layer
from .preprocessing import ENCODINGS, _batches, _choice, _encode, _encoded_shape, _positive_int


class _IndexLookup(Layer):
    """Tokens to their index (int64, as Keras): ``mask_token``, when set, is index 0; then
    ``num_oov_indices`` indices for tokens not in the vocabulary; then the vocabulary.
    ``invert=True`` maps indices back to tokens (``oov_token`` for the OOV ones and those out
    of range). ``output_mode`` ``one_hot``, ``multi_hot`` or ``count`` encode the indices over
    the vocabulary size as ``CategoryEncoding`` does.

    ``adapt(data)`` takes the vocabulary from data by decreasing count (ties: the larger
    token first, Keras's order), at most ``max_tokens`` indices in all. With
    ``num_oov_indices=0`` a token not in the vocabulary gives -1 (Keras raises while running).
    ``sparse``, ``tf_idf``, idf weights and ``pad_to_max_tokens`` are not supported."""

    token_kind, token_name = None, None  # NumPy kinds of the tokens, and their name

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=None,
                 vocabulary=None, idf_weights=None, invert=False, output_mode="int",
                 sparse=False, pad_to_max_tokens=False, oov_method="floormod", salt=None,
                 vocabulary_size=None, **kwargs):
        super().__init__(**kwargs)
        where = type(self).__name__
        self.num_oov_indices = _positive_int(num_oov_indices, "num_oov_indices", where, 0)
        for what, value in (("mask_token", mask_token), ("oov_token", oov_token)):
            if value is not None and not self._is_token(value):
                raise ValueError(f"{where}: {what} must be {self.token_name} or None, got "
                                 f"{value!r}")
        self.output_mode = _choice(output_mode, ("int",) + ENCODINGS, "output_mode", where)
        _choice(oov_method, ("floormod",), "oov_method", where)
        for what, value in (("idf_weights", idf_weights), ("sparse", sparse or None),
                            ("pad_to_max_tokens", pad_to_max_tokens or None), ("salt", salt)):
            if value is not None:
                raise ValueError(f"{where}: {what}={value!r} is not supported")
        if invert and output_mode != "int":
            raise ValueError(f"{where}: invert=True needs output_mode='int', got "
                             f"{output_mode!r}")
        self.mask_token, self.oov_token, self.invert = mask_token, oov_token, bool(invert)
        self.max_tokens = None if max_tokens is None else \
            _positive_int(max_tokens, "max_tokens", where, self._specials() + 1)
        self.vocabulary = None
        if vocabulary is not None:
            self.set_vocabulary(vocabulary)

    def _is_token(self, value):
        return not isinstance(value, bool) and np.asarray(value).dtype.kind in self.token_kind \
            and np.ndim(value) == 0

    def _specials(self):
        return self.num_oov_indices + (self.mask_token is not None)

    def set_vocabulary(self, vocabulary):
        """Use ``vocabulary`` (distinct tokens, without the mask and OOV tokens)."""
        tokens = list(vocabulary) if isinstance(vocabulary, (list, tuple, np.ndarray)) else None
        if not tokens or not all(self._is_token(t) for t in tokens) or \
                len(set(tokens)) != len(tokens) or \
                {self.mask_token, self.oov_token} & set(tokens):
            raise ValueError(f"{type(self).__name__}: vocabulary must be a list of distinct "
                             f"{self.token_name}s without the mask and OOV tokens, got "
                             f"{vocabulary!r}")
        self.vocabulary = [t.item() if isinstance(t, np.generic) else t for t in tokens]

    def get_vocabulary(self):
        """Every index's token, Keras's way: the mask token, the OOV token (once, however many
        OOV indices), then the vocabulary."""
        return ([] if self.mask_token is None else [self.mask_token]) + \
            ([self.oov_token] if self.num_oov_indices else []) + list(self.vocabulary or [])

    def vocabulary_size(self):
        return self._specials() + len(self.vocabulary or [])

    def adapt(self, data, steps=None):
        """Take the vocabulary from ``data`` (an array, a tensor, or an iterable of batches read
        up to ``steps``): its tokens by decreasing count, ties broken by the larger token."""
        where = f"{type(self).__name__} '{self.name}'"
        batches = [b.reshape(-1) for b in _batches(data, where, steps)]
        if any(b.dtype.kind not in self.token_kind for b in batches):
            raise ValueError(f"{where}.adapt: data must hold {self.token_name}s, got "
                             f"{next(b.dtype for b in batches)}")
        tokens, counts = np.unique(np.concatenate(batches), return_counts=True)
        specials = [t for t in (self.mask_token, self.oov_token) if t is not None]
        keep = ~np.isin(tokens, np.asarray(specials, tokens.dtype)) if specials else \
            np.ones(tokens.shape, bool)
        tokens, counts = tokens[keep], counts[keep]
        order = np.lexsort((tokens, counts))[::-1]
        limit = None if self.max_tokens is None else self.max_tokens - self._specials()
        self.vocabulary = [t.item() for t in tokens[order][:limit]]

    def call(self, inputs):
        if self.vocabulary is None:
            raise ValueError(f"{type(self).__name__} '{self.name}' was called before adapt(): "
                             f"give it a vocabulary, or call adapt(data) first")
        if self.invert:  # (the table's last entry: the OOV token, for indices out of range)
            size = self.vocabulary_size()
            table = fw.constant(np.asarray(self.get_vocabulary() + [self.oov_token]))
            inputs = fw.cast(inputs, fw.int64)
            inside = (inputs >= 0) & (inputs < size)
            return fw.gather(table, fw.where(inside, inputs, fw.zeros_like(inputs) + size))
        indices = self._indices(self._tokens(inputs))
        if self.output_mode == "int":
            return indices
        return _encode(indices, self.vocabulary_size(), self.output_mode, np.dtype(np.int64))

    def _indices(self, tokens):
        """The lookup as ops: a binary search in the sorted vocabulary, then a check that the
        token found is the token asked for."""
        if not self.vocabulary:  # (adapted to nothing but the special tokens)
            indices = self._oov_indices(tokens)
            return indices if self.mask_token is None else \
                fw.where(tokens == self.mask_token, fw.zeros_like(indices), indices)
        order = np.argsort(np.asarray(self.vocabulary), kind="stable")
        ordered = fw.constant(np.asarray(self.vocabulary)[order])
        flat = fw.reshape(tokens, [-1])
        at = fw.minimum(fw.searchsorted(ordered, flat, out_type=fw.int64), len(order) - 1)
        found = fw.reshape(fw.gather(ordered, at) == flat, tokens.shape)
        known = fw.reshape(fw.gather(fw.constant(order.astype(np.int64) + self._specials()),
                                     at), tokens.shape)
        indices = fw.where(found, known, self._oov_indices(tokens))
        if self.mask_token is not None:
            indices = fw.where(tokens == self.mask_token, fw.zeros_like(indices), indices)
        return indices

    def _oov_indices(self, tokens):
        """The index of a token not in the vocabulary: the first OOV index (-1 without)."""
        first = int(self.mask_token is not None) if self.num_oov_indices else -1
        return fw.zeros_like(tokens, fw.int64) + first

    def compute_output_shape(self, input_shape):
        return _encoded_shape(input_shape, self.vocabulary_size(), self.output_mode)

    def get_config(self):
        return {**super().get_config(), "invert": self.invert, "max_tokens": self.max_tokens,
                "num_oov_indices": self.num_oov_indices, "oov_token": self.oov_token,
                "mask_token": self.mask_token, "output_mode": self.output_mode,
                "sparse": False, "pad_to_max_tokens": False, "idf_weights": None,
                "vocabulary": self.vocabulary, "vocabulary_size": self.vocabulary_size(),
                "oov_method": "floormod", "salt": None}


@LAYERS.register
class IntegerLookup(_IndexLookup):
    """Integer tokens to indices (see ``_IndexLookup``); with several OOV indices a token goes
    to ``token mod num_oov_indices`` among them, Keras's ``floormod``."""

    token_kind, token_name = "iu", "an integer"

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=-1,
                 vocabulary=None, vocabulary_dtype="int64", idf_weights=None, invert=False,
                 output_mode="int", sparse=False, pad_to_max_tokens=False, **kwargs):
        _choice(vocabulary_dtype, ("int64",), "vocabulary_dtype", "IntegerLookup")
        super().__init__(max_tokens, num_oov_indices, mask_token, oov_token, vocabulary,
                         idf_weights, invert, output_mode, sparse, pad_to_max_tokens, **kwargs)

    def _tokens(self, inputs):
        return fw.cast(inputs, fw.int64)

    def _oov_indices(self, tokens):
        if self.num_oov_indices <= 1:
            return super()._oov_indices(tokens)
        return fw.math.floormod(tokens, fw.constant(self.num_oov_indices, fw.int64)) + \
            int(self.mask_token is not None)

    def get_config(self):
        return {**super().get_config(), "vocabulary_dtype": "int64"}


@LAYERS.register
class StringLookup(_IndexLookup):
    """String tokens to indices (see ``_IndexLookup``), on the framework's string tensors
    (NumPy's ``str`` arrays: a list of Python strings converts to one); ``invert=True`` gives
    ``str`` tokens where Keras gives bytes. Keras hashes tokens among several OOV indices with
    FarmHash, which is not reproduced: ``num_oov_indices`` is 0 or 1 here."""

    token_kind, token_name = "U", "a string"

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token="[UNK]",
                 vocabulary=None, idf_weights=None, invert=False, output_mode="int",
                 pad_to_max_tokens=False, sparse=False, encoding="utf-8", **kwargs):
        if not isinstance(num_oov_indices, bool) and isinstance(num_oov_indices, int) and \
                num_oov_indices > 1:
            raise ValueError(f"StringLookup: num_oov_indices must be 0 or 1 (Keras hashes "
                             f"strings among more with FarmHash, not reproduced), got "
                             f"{num_oov_indices}")
        _choice(encoding, ("utf-8",), "encoding", "StringLookup")
        super().__init__(max_tokens, num_oov_indices, mask_token, oov_token, vocabulary,
                         idf_weights, invert, output_mode, sparse, pad_to_max_tokens, **kwargs)

    def _tokens(self, inputs):
        if inputs.dtype.kind != "U":
            raise ValueError(f"StringLookup '{self.name}' takes string tensors, got "
                             f"{inputs.dtype.name}")
        return inputs

    def get_config(self):
        return {**super().get_config(), "encoding": "utf-8"}
