"""TF's "Basic classification: Classify images of clothing"
(https://www.tensorflow.org/tutorials/keras/classification): Sequential Flatten -> Dense(relu)
-> Dense(10), compile(optimizer="adam", SparseCategoricalCrossentropy(from_logits=True),
metrics=["accuracy"]), fit, evaluate, then a probability model (Sequential([model, Softmax()]))
predicting. Shrunk: 64 synthetic 28x28 images in [0, 1] instead of Fashion-MNIST, 16 hidden
units instead of 128, 3 epochs; the initial weights come from ``init``."""
import numpy as np


def main(tf, init=None, epochs=3):
    rng = np.random.default_rng(0)
    train_images = rng.random((64, 28, 28)).astype("float32")
    train_labels = rng.integers(0, 10, 64)
    test_images = rng.random((16, 28, 28)).astype("float32")
    test_labels = rng.integers(0, 10, 16)

    model = tf.keras.Sequential([
        tf.keras.layers.Input((28, 28)),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(16, activation="relu"),
        tf.keras.layers.Dense(10)])
    if init is not None:
        model.set_weights(init(model.get_weights()))
    model.compile(optimizer="adam",
                  loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    history = model.fit(train_images, train_labels, epochs=epochs, batch_size=16, shuffle=False,
                        verbose=0)
    test_loss, test_acc = model.evaluate(test_images, test_labels, verbose=0)
    probability_model = tf.keras.Sequential([model, tf.keras.layers.Softmax()])
    predictions = probability_model.predict(test_images[:4], verbose=0)
    return {"loss": [float(v) for v in history.history["loss"]],
            "accuracy": [float(v) for v in history.history["accuracy"]],
            "test": [float(test_loss), float(test_acc)],
            "predictions": predictions.astype(float).tolist(),
            "argmax": [int(i) for i in np.argmax(predictions, axis=1)]}
