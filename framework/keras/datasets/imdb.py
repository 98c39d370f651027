"""IMDB reviews as word indices, from ``imdb.npz``: shuffled, offset, cut to ``num_words`` and
filtered by ``maxlen`` exactly as Keras's ``load_data`` does."""
import json

import numpy as np

from ._cache import cached


def load_data(path="imdb.npz", num_words=None, skip_top=0, maxlen=None, seed=113, start_char=1,
              oov_char=2, index_from=3):
    # (the file holds ragged lists as object arrays: a file Keras's own origin provides)
    with np.load(cached(path), allow_pickle=True) as f:
        x_train, labels_train, x_test, labels_test = (f["x_train"], f["y_train"], f["x_test"],
                                                      f["y_test"])
    rng = np.random.RandomState(seed)
    order = np.arange(len(x_train))
    rng.shuffle(order)
    x_train, labels_train = x_train[order], labels_train[order]
    order = np.arange(len(x_test))
    rng.shuffle(order)
    x_test, labels_test = x_test[order], labels_test[order]
    head = [] if start_char is None else [start_char]
    x_train = [head + [w + index_from for w in x] for x in x_train]
    x_test = [head + [w + index_from for w in x] for x in x_test]
    if maxlen:
        x_train, labels_train = _shorter_than(maxlen, x_train, labels_train)
        x_test, labels_test = _shorter_than(maxlen, x_test, labels_test)
        if not x_train or not x_test:
            raise ValueError(f"After filtering for sequences shorter than maxlen={maxlen}, no "
                             f"sequence was kept. Increase maxlen.")
    xs = x_train + x_test
    labels = np.concatenate([labels_train, labels_test])
    num_words = num_words or max(max(x) for x in xs)
    if oov_char is not None:
        xs = [[w if skip_top <= w < num_words else oov_char for w in x] for x in xs]
    else:
        xs = [[w for w in x if skip_top <= w < num_words] for x in xs]
    cut = len(x_train)
    return ((np.array(xs[:cut], dtype="object"), labels[:cut]),
            (np.array(xs[cut:], dtype="object"), labels[cut:]))


def _shorter_than(maxlen, xs, labels):
    kept = [(x, y) for x, y in zip(xs, labels) if len(x) < maxlen]
    return [x for x, _ in kept], np.array([y for _, y in kept], dtype=labels.dtype)


def get_word_index(path="imdb_word_index.json"):
    with open(cached(path)) as f:
        return json.load(f)
