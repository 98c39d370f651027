"""The seed tutorial's layer-wise example: one persistent tape per step, dense1's gradients
applied by Adam(1e-3) and dense2's by Adam(1e-2), on scikit-learn's digits."""
import numpy as np
import pytest

import framework as fw
from optimizers import Adam
from seed_model import SeedMLP

sklearn_datasets = pytest.importorskip("sklearn.datasets")


def digits():
    images, labels = sklearn_datasets.load_digits(return_X_y=True)
    images = (images / 16.0).astype(np.float32).reshape(-1, 8, 8, 1)
    return images[:1500], labels[:1500], images[1500:], labels[1500:]


def accuracy(model, images, labels):
    return float(np.mean(np.argmax(model(images).numpy(), axis=-1) == labels))


class ReferenceAdam:
    """Adam written out in NumPy, to check what each optimizer did to its layer."""

    def __init__(self, learning_rate):
        self.learning_rate, self.t, self.moments = learning_rate, 0, {}

    def step(self, weights, grads):
        self.t += 1
        out = []
        for i, (w, g) in enumerate(zip(weights, grads)):
            m, v = self.moments.get(i, (np.zeros_like(w), np.zeros_like(w)))
            m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
            self.moments[i] = (m, v)
            rate = self.learning_rate * np.sqrt(1 - 0.999 ** self.t) / (1 - 0.9 ** self.t)
            out.append(w - rate * m / (np.sqrt(v) + 1e-7))
        return out


def values(variables):
    return [v.numpy() for v in variables]


def test_layerwise_training_with_one_optimizer_per_layer():
    fw.random.set_seed(0)
    train_x, train_y, test_x, test_y = digits()
    model = SeedMLP()
    optimizer_1 = Adam(learning_rate=1e-3)
    optimizer_2 = Adam(learning_rate=1e-2)
    reference_1, reference_2 = ReferenceAdam(1e-3), ReferenceAdam(1e-2)
    model.build((None, 8, 8, 1))
    initial_accuracy = accuracy(model, test_x, test_y)
    batch_size, steps = 50, 150
    order = np.random.default_rng(0).permutation(np.tile(np.arange(len(train_x)), 5))
    for step in range(steps):
        index = order[step * batch_size:(step + 1) * batch_size]
        x, y = train_x[index], train_y[index]
        with fw.GradientTape(persistent=True) as tape:
            y_pred = model(x)
            loss = fw.losses.sparse_categorical_crossentropy(y_true=y, y_pred=y_pred)
            loss = fw.reduce_mean(loss)
        checked = step < 3
        if checked:
            before_1, before_2 = values(model.dense1.variables), values(model.dense2.variables)
        grads = tape.gradient(loss, model.dense1.variables)
        optimizer_1.apply_gradients(grads_and_vars=zip(grads, model.dense1.variables))
        if checked:
            expected = reference_1.step(before_1, values(grads))
            for w, e in zip(values(model.dense1.variables), expected):
                np.testing.assert_allclose(w, e, rtol=1e-5, atol=1e-6)
            assert all(np.array_equal(w, b) for w, b in zip(values(model.dense2.variables),
                                                            before_2))
            after_1 = values(model.dense1.variables)
        grads = tape.gradient(loss, model.dense2.variables)
        optimizer_2.apply_gradients(grads_and_vars=zip(grads, model.dense2.variables))
        del tape
        if checked:
            expected = reference_2.step(before_2, values(grads))
            for w, e in zip(values(model.dense2.variables), expected):
                np.testing.assert_allclose(w, e, rtol=1e-5, atol=1e-6)
            assert all(np.array_equal(w, b) for w, b in zip(values(model.dense1.variables),
                                                            after_1))
    for own, other, optimizer in ((model.dense1, model.dense2, optimizer_1),
                                  (model.dense2, model.dense1, optimizer_2)):
        assert all(optimizer.get_slot(v, "momentum").shape == v.shape for v in own.variables)
        for variable in other.variables:
            with pytest.raises(ValueError, match="no slots"):
                optimizer.get_slot(variable, "momentum")
    assert int(optimizer_1.iterations) == int(optimizer_2.iterations) == steps
    final_accuracy = accuracy(model, test_x, test_y)
    print(f"test accuracy {initial_accuracy:.3f} -> {final_accuracy:.3f}")
    assert initial_accuracy < 0.3 and final_accuracy > 0.85
