"""The TensorFlow 2 original of ``examples/tf2_port.py``: a training loop as the TensorFlow
guides write it (a tf.data pipeline, a Keras model, a loss object, Keras metrics, a tf.function
step and a checkpoint manager).

It runs only where TensorFlow is installed (``python examples/tf2_original.py``); it is kept
here so that the port can be read beside it, and ``tests/test_porting.py`` checks that the
README's renaming rule turns this file's code into the port's, line for line.
"""
import argparse
import tempfile

import numpy as np
from sklearn.datasets import load_wine
from sklearn.model_selection import train_test_split

import tensorflow as tf

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--epochs", type=int, default=20)
parser.add_argument("--checkpoints", default=None, help="a folder (default: a temporary one)")
args = parser.parse_args()

# ---- data -----------------------------------------------------------------------------------
features, labels = load_wine(return_X_y=True)
x_train, x_test, y_train, y_test = train_test_split(
    features.astype(np.float32), labels, test_size=0.25, random_state=0, stratify=labels)
mean, std = x_train.mean(axis=0), x_train.std(axis=0)
x_train, x_test = (x_train - mean) / std, (x_test - mean) / std

tf.random.set_seed(0)
train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(len(x_train)).batch(16)
test_ds = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(64)

# ---- model, loss, optimizer, metrics ----------------------------------------------------------
model = tf.keras.Sequential([
    tf.keras.layers.Dense(32, activation="relu"),
    tf.keras.layers.Dense(3),
])
loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)

train_loss = tf.keras.metrics.Mean(name="train_loss")
train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
test_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="test_accuracy")

directory = args.checkpoints or tempfile.mkdtemp()
checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer)
manager = tf.train.CheckpointManager(checkpoint, directory, max_to_keep=3)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_object(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    train_loss(loss)
    train_accuracy(y, logits)


@tf.function
def test_step(x, y):
    test_accuracy(y, model(x, training=False))


# ---- the loop -----------------------------------------------------------------------------------
for epoch in range(args.epochs):
    for metric in (train_loss, train_accuracy, test_accuracy):
        metric.reset_state()
    for x, y in train_ds:
        train_step(x, y)
    for x, y in test_ds:
        test_step(x, y)
    path = manager.save()
    print(f"epoch {epoch + 1}: loss {train_loss.result():.4f}  "
          f"accuracy {train_accuracy.result():.4f}  test accuracy {test_accuracy.result():.4f}")
print(f"saved {path}; latest {tf.train.latest_checkpoint(directory) == path}")
print(f"test accuracy: {test_accuracy.result():.4f}")
