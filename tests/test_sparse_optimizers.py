"""Every optimizer on an ``Embedding``'s sparse gradient whose ids repeat, against Keras 3.

Keras 3 squares (and takes the absolute value of) each occurrence's row of an
``IndexedSlices`` before adding the occurrences up, so second moments differ from those of the
dense gradient when an id repeats (``optimizers.sparse``). The tables after three steps, and
the slots, are Keras 3.15's (``tests/reference/make_sparse_optimizers_reference.py``).
"""
import json
import os

import numpy as np
import pytest

import framework as fw
from framework.engine import backend

REFERENCE = json.load(open(os.path.join(os.path.dirname(__file__), "reference",
                                        "sparse_optimizers_reference.json")))
IDS = np.array(REFERENCE["ids"], np.int32)
TARGETS = np.array(REFERENCE["targets"], np.float32)
CONFIGS = sorted(REFERENCE["configs"])


def _optimizer(name):
    config = REFERENCE["configs"][name]
    return getattr(fw.keras.optimizers, config["class_name"])(**config["kwargs"])


def _embedding(rows=6):
    layer = fw.keras.layers.Embedding(rows, 3)
    layer.build((None, IDS.shape[1]))
    table = np.zeros((rows, 3), np.float32)
    table[:6] = REFERENCE["table"]
    layer.embeddings.assign(fw.constant(table))
    return layer


def _gradient(layer, ids, targets):
    with fw.GradientTape() as tape:
        loss = fw.reduce_mean(fw.square(layer(ids) - targets))
    (grad,) = tape.gradient(loss, [layer.embeddings])
    return grad


def _check(tables, name, kind="sparse"):
    np.testing.assert_allclose(np.array(tables), REFERENCE[kind][name]["tables"],
                               rtol=2e-6, atol=5e-7)


@pytest.mark.parametrize("name", CONFIGS)
def test_repeated_ids_update_as_keras(name):
    layer, optimizer = _embedding(), _optimizer(name)
    tables = []
    for _ in range(3):
        grad = _gradient(layer, IDS, TARGETS)
        assert isinstance(grad, fw.IndexedSlices)
        optimizer.apply([grad], [layer.embeddings])
        tables.append(layer.embeddings.numpy())
    _check(tables, name)
    for slot, value in REFERENCE["sparse"][name]["slots"].items():
        np.testing.assert_allclose(optimizer.get_slot(layer.embeddings, slot).numpy(), value,
                                   rtol=2e-6, atol=5e-7)


@pytest.mark.parametrize("name", CONFIGS)
def test_the_dense_gradient_still_updates_as_keras_dense(name):
    """The same gradient made dense first: Keras's dense numbers, which differ (but for SGD
    and Lion, linear in the gradient) from the sparse ones."""
    layer, optimizer = _embedding(), _optimizer(name)
    tables = []
    for _ in range(3):
        grad = fw.convert_to_tensor(_gradient(layer, IDS, TARGETS))
        optimizer.apply([grad], [layer.embeddings])
        tables.append(layer.embeddings.numpy())
    _check(tables, name, "dense")


@pytest.mark.parametrize("name", ["adam", "adamax", "adadelta", "rmsprop_centered"])
def test_repeated_ids_in_a_group_of_small_variables(name):
    """Beside a small variable with a dense gradient, the table is updated in one flat group
    (``optimizers.layout``): the same numbers, and the other variable's as if alone."""
    layer, optimizer, alone = _embedding(), _optimizer(name), _optimizer(name)
    bias, twin = fw.Variable(np.ones(3, np.float32)), fw.Variable(np.ones(3, np.float32))
    tables = []
    for step in range(3):
        grad = _gradient(layer, IDS, TARGETS)
        dense = fw.constant(np.array([0.5, -1.0, 2.0], np.float32) * (step + 1))
        optimizer.apply([dense, grad], [bias, layer.embeddings])
        alone.apply([dense], [twin])
        tables.append(layer.embeddings.numpy())
    on_host = not backend.is_device_array(bias._value)  # (device arrays are never grouped)
    assert bool(optimizer._plan([bias, layer.embeddings]).groups) is on_host
    _check(tables, name)
    np.testing.assert_array_equal(bias.numpy(), twin.numpy())


@pytest.mark.parametrize("name", ["adam", "adamax"])
def test_a_big_variable_after_a_group_with_repeated_ids_updates_as_if_alone(name):
    """The table's repeated-id moments belong to its group only: a big variable updated after
    it on its own (``plan.singles``) takes its own dense gradient's squares."""
    layer, optimizer, alone = _embedding(), _optimizer(name), _optimizer(name)
    big, twin = (fw.Variable(np.ones((64, 200), np.float32)) for _ in range(2))
    for step in range(3):
        dense = fw.constant(np.full((64, 200), 0.5 * (step + 1), np.float32))
        optimizer.apply([_gradient(layer, IDS, TARGETS), dense], [layer.embeddings, big])
        alone.apply([dense], [twin])
    np.testing.assert_array_equal(big.numpy(), twin.numpy())


@pytest.mark.parametrize("name", ["adam", "ftrl"])
def test_repeated_ids_in_a_table_updated_by_blocks(name):
    """A table big enough to be updated a block at a time: its rows looked up as Keras's."""
    layer, optimizer = _embedding(rows=200_000), _optimizer(name)
    tables = []
    for _ in range(3):
        optimizer.apply([_gradient(layer, IDS, TARGETS)], [layer.embeddings])
        tables.append(layer.embeddings.numpy()[:6])
    _check(tables, name)


@pytest.mark.parametrize("name", ["adam", "adagrad", "adamax", "adadelta"])
def test_repeated_ids_under_function_on_a_second_call(name):
    """A traced step replays the update on each call's gradient: the second call, on other
    ids and targets, gives eager's numbers."""
    other_ids = np.array([[3, 3, 3, 0], [5, 0, 3, 2]], np.int32)
    other_targets = TARGETS[::-1].copy()
    results = []
    for traced in (False, True):
        layer, optimizer = _embedding(), _optimizer(name)

        def step(ids, targets):
            optimizer.apply([_gradient(layer, ids, targets)], [layer.embeddings])

        run = fw.function(step) if traced else step
        run(fw.constant(IDS), fw.constant(TARGETS))
        run(fw.constant(other_ids), fw.constant(other_targets))
        results.append(layer.embeddings.numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-6, atol=1e-7)
    assert not np.allclose(results[0], REFERENCE["table"])

