"""Keras's guide "Customizing what happens in fit()"
(https://keras.io/guides/custom_train_step_in_tensorflow/): a ``keras.Model`` subclass whose
``train_step`` computes the loss with ``compute_loss``, applies the gradients and updates the
compiled metrics, and whose ``test_step`` does the same without gradients; compiled with
optimizer="adam", loss="mse", metrics=["mae"], trained by fit and evaluated. Shrunk: 64 random
rows of 8 features instead of 1000 of 32, Dense(4) -> Dense(1), 3 epochs; the initial weights
come from ``init``."""
import numpy as np


def main(tf, init=None, epochs=3):
    keras = tf.keras

    class CustomModel(keras.Model):
        def train_step(self, data):
            x, y = data
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            trainable_vars = self.trainable_variables
            gradients = tape.gradient(loss, trainable_vars)
            self.optimizer.apply(gradients, trainable_vars)
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

        def test_step(self, data):
            x, y = data
            y_pred = self(x, training=False)
            loss = self.compute_loss(y=y, y_pred=y_pred)
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    inputs = keras.Input(shape=(8,))
    hidden = keras.layers.Dense(4, activation="relu")(inputs)
    outputs = keras.layers.Dense(1)(hidden)
    model = CustomModel(inputs, outputs)
    if init is not None:
        model.set_weights(init(model.get_weights()))
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    rng = np.random.default_rng(1)
    x = rng.random((64, 8)).astype("float32")
    y = rng.random((64, 1)).astype("float32")
    history = model.fit(x, y, epochs=epochs, batch_size=16, shuffle=False, verbose=0)
    evaluated = model.evaluate(x, y, batch_size=16, verbose=0, return_dict=True)
    return {"history": {k: [float(v) for v in vals] for k, vals in history.history.items()},
            "evaluate": {k: float(v) for k, v in evaluated.items()},
            "weights": [w.astype(float).ravel().tolist()[:6] for w in model.get_weights()]}
