"""A TensorFlow 2 training loop ported by renaming alone: ``examples/tf2_original.py`` with
``tf`` replaced as the README's porting table says, and nothing else changed.

A tf.data-style pipeline, a Keras-style model, a loss object, metrics, a compiled step
(``fw.function``) and a checkpoint manager, on scikit-learn's wine data.

Run: ``python examples/tf2_port.py`` (``--epochs 2`` for a quick run)
"""
import argparse
import tempfile

import numpy as np
from sklearn.datasets import load_wine
from sklearn.model_selection import train_test_split

import framework as fw

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

fw.random.set_seed(0)
train_ds = fw.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(len(x_train)).batch(16)
test_ds = fw.data.Dataset.from_tensor_slices((x_test, y_test)).batch(64)

# ---- model, loss, optimizer, metrics ----------------------------------------------------------
model = fw.keras.Sequential([
    fw.keras.layers.Dense(32, activation="relu"),
    fw.keras.layers.Dense(3),
])
loss_object = fw.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = fw.keras.optimizers.Adam(learning_rate=0.01)

train_loss = fw.keras.metrics.Mean(name="train_loss")
train_accuracy = fw.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
test_accuracy = fw.keras.metrics.SparseCategoricalAccuracy(name="test_accuracy")

directory = args.checkpoints or tempfile.mkdtemp()
checkpoint = fw.train.Checkpoint(model=model, optimizer=optimizer)
manager = fw.train.CheckpointManager(checkpoint, directory, max_to_keep=3)


@fw.function
def train_step(x, y):
    with fw.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_object(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    train_loss(loss)
    train_accuracy(y, logits)


@fw.function
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
print(f"saved {path}; latest {fw.train.latest_checkpoint(directory) == path}")
print(f"test accuracy: {test_accuracy.result():.4f}")
