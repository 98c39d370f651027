"""TF's "Text classification with an RNN" (https://www.tensorflow.org/text/tutorials/text_classification_rnn):
Embedding(mask_zero=True) -> Bidirectional(LSTM) -> Dense(relu) -> Dense(1), compiled with
BinaryCrossentropy(from_logits=True) and metrics=["accuracy"], fit, evaluate and predict on
a padded sequence. Shrunk: 32 synthetic zero-padded integer sequences (vocabulary 20, length 7)
instead of the IMDB reviews through TextVectorization, 8 units instead of 64, 2 epochs, the
tutorial's Adam(1e-4) (the Embedding's sparse gradient repeats ids within a batch: Keras 3's
second moments of such a gradient are followed, see optimizers/sparse.py); the initial weights
come from ``init``."""
import numpy as np


def main(tf, init=None, epochs=2):
    rng = np.random.default_rng(3)
    lengths = rng.integers(2, 8, 32)
    x = np.zeros((32, 7), "int32")
    for i, n in enumerate(lengths):
        x[i, :n] = rng.integers(1, 20, n)
    y = (lengths > 4).astype("float32")

    model = tf.keras.Sequential([
        tf.keras.Input((7,), dtype="int32"),
        tf.keras.layers.Embedding(input_dim=20, output_dim=8, mask_zero=True),
        tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(8)),
        tf.keras.layers.Dense(8, activation="relu"),
        tf.keras.layers.Dense(1)])
    if init is not None:
        model.set_weights(init(model.get_weights()))
    model.compile(loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
                  optimizer=tf.keras.optimizers.Adam(1e-4), metrics=["accuracy"])
    history = model.fit(x, y, epochs=epochs, batch_size=8, shuffle=False, verbose=0)
    test_loss, test_acc = model.evaluate(x, y, verbose=0)
    padded = np.array([[3, 5, 7, 0, 0, 0, 0]], "int32")
    unpadded = np.array([[3, 5, 7]], "int32")
    return {"loss": [float(v) for v in history.history["loss"]],
            "accuracy": [float(v) for v in history.history["accuracy"]],
            "test": [float(test_loss), float(test_acc)],
            "padded": float(model.predict(padded, verbose=0)[0, 0]),
            "unpadded": float(model.predict(unpadded, verbose=0)[0, 0])}
