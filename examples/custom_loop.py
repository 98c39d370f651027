"""A custom training loop with a learning-rate schedule and gradient clipping.

What ``model.fit`` would hide, written out: shuffled mini-batches each epoch, a forward pass
under the tape with dropout on, the gradient, its global norm (worth watching: a spike means a
step that clipping tamed), an update through an optimizer whose learning rate follows a cosine
schedule and whose gradients are clipped to a global norm, and an evaluation with dropout off.

Run: ``python examples/custom_loop.py`` (``--epochs 1`` for a quick run)
"""
import argparse

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import framework as fw
from layers import Dense, Dropout, Sequential
from optimizers import SGD
from optimizers.schedules import CosineDecay

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--epochs", type=int, default=10)
args = parser.parse_args()

# ---- data: digits, standardized with the training split's statistics ------------------------
features, labels = load_digits(return_X_y=True)
x_train, x_test, y_train, y_test = train_test_split(
    features.astype(np.float32), labels, test_size=0.2, random_state=0, stratify=labels)
mean, std = x_train.mean(axis=0), x_train.std(axis=0) + 1e-6
x_train, x_test = (x_train - mean) / std, (x_test - mean) / std

# ---- model and optimizer --------------------------------------------------------------------
fw.random.set_seed(0)  # initializers and dropout
model = Sequential([
    Dense(128, activation="relu", kernel_initializer="he_uniform"),
    Dropout(0.2),
    Dense(10),
])
batch_size = 32
steps_per_epoch = -(-len(x_train) // batch_size)
schedule = CosineDecay(initial_learning_rate=0.1, decay_steps=args.epochs * steps_per_epoch,
                       alpha=0.01)
optimizer = SGD(learning_rate=schedule, momentum=0.9, global_clipnorm=1.0)


def loss_fn(y_true, logits):
    return fw.reduce_mean(fw.losses.sparse_categorical_crossentropy(y_true, logits,
                                                                    from_logits=True))


def global_norm(tensors):
    return fw.sqrt(sum(fw.reduce_sum(fw.square(t)) for t in tensors))


# ---- the loop ---------------------------------------------------------------------------------
rng = np.random.default_rng(0)  # shuffling
for epoch in range(1, args.epochs + 1):
    order = rng.permutation(len(x_train))
    losses, norms = [], []
    for start in range(0, len(x_train), batch_size):
        batch = order[start:start + batch_size]
        x, y = x_train[batch], y_train[batch]
        with fw.GradientTape() as tape:
            logits = model(x, training=True)  # dropout on
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        norms.append(float(global_norm(grads)))  # before clipping: apply_gradients clips
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
    logits = model(x_test, training=False)  # dropout off
    accuracy = np.mean(np.argmax(logits.numpy(), axis=-1) == y_test)
    learning_rate = optimizer.learning_rate  # the schedule at the optimizer's step count
    print(f"epoch {epoch}: loss {np.mean(losses):.4f}  max gradient norm {max(norms):.2f}  "
          f"next learning rate {learning_rate:.4f}  test accuracy {accuracy:.4f}")
print(f"test accuracy: {accuracy:.4f}")
