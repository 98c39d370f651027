"""Write weights_reference.json: how Keras 3 lays out a ``.weights.h5`` file, and what the
models saved in it predict, for tests that load such files without TensorFlow or Keras.

Run it where Keras 3 and h5py are installed: ``python tests/reference/make_weights_reference.py``.
Each model is trained by Keras for a few steps (so its weights are Keras's, not ours), saved
with ``save_weights``, and the file's every dataset (path, shape, values) is recorded with the
model's predictions on fixed inputs. The models: a Sequential of Dense layers, and a
subclassed model whose attributes exercise Keras's naming (attributes in sorted order, a list
of layers named by class, a layer first reached through the ``layers`` list).
"""
import json
import os
import tempfile

import h5py
import keras
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


class Subclassed(keras.Model):
    """``hidden`` sorts before ``layers``, ``out`` after it: Keras saves ``out`` under
    ``layers/dense_1`` (``hidden`` took ``dense`` in that list)."""

    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(5, activation="tanh")
        self.blocks = [keras.layers.Dense(5, activation="relu"), keras.layers.Dense(4)]
        self.out = keras.layers.Dense(2)

    def call(self, x):
        x = self.hidden(x)
        for block in self.blocks:
            x = block(x)
        return self.out(x)


def _sequential():
    return keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="relu"),
                             keras.layers.Dense(2)])


def _record(model, x, y):
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
    model.fit(x, y, epochs=3, batch_size=4, verbose=0)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.weights.h5")
        model.save_weights(path)
        datasets = {}
        with h5py.File(path) as f:
            f.visititems(lambda name, obj: datasets.__setitem__(name, obj[()].tolist())
                         if isinstance(obj, h5py.Dataset) else None)
    return {"datasets": datasets, "x": x.tolist(),
            "predictions": model.predict(x, verbose=0).tolist()}


def main():
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 3)).astype(np.float32)
    y = rng.standard_normal((8, 2)).astype(np.float32)
    subclassed = Subclassed()
    subclassed(x[:1])
    out = {"keras_version": keras.__version__,
           "sequential": _record(_sequential(), x, y),
           "subclassed": _record(subclassed, x, y)}
    with open(os.path.join(HERE, "weights_reference.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
