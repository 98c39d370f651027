"""Each layer of an MLP with an optimizer of its own: the tutorials' partial-update example.

Seed tutorial "tf.GradientTape 详解", last section ("对神经网络的各层变量独立求导"):
one persistent tape records the forward pass, ``model.dense1.variables`` and
``model.dense2.variables`` get their gradients from it separately, and two Adam optimizers with
different learning rates (1e-3 and 1e-2) update them. The tutorial's MNIST is replaced by
scikit-learn's bundled digits (8x8 images), so nothing is downloaded.

Both layers' gradients are taken before either update. This framework refuses to differentiate
through a variable that changed after the tape read it (TensorFlow would answer from the values
the forward pass saw), so "gradient, update, gradient, update" is an error here.

The same training from a config file: ``tape-train configs/layerwise_mlp.toml``.

Run: ``python examples/layerwise_mlp.py`` (``--steps 20`` for a quick run)
"""
import argparse

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import framework as fw
from layers import Dense, Flatten, Layer
from optimizers import Adam


class MLP(Layer):
    def __init__(self):
        super().__init__()
        self.flatten = Flatten()  # (batch, 8, 8, 1) images -> (batch, 64)
        self.dense1 = Dense(units=100, activation=fw.nn.relu)
        self.dense2 = Dense(units=10)

    def call(self, inputs):  # [batch_size, 8, 8, 1]
        x = self.flatten(inputs)  # [batch_size, 64]
        x = self.dense1(x)  # [batch_size, 100]
        x = self.dense2(x)  # [batch_size, 10]
        output = fw.nn.softmax(x)
        return output


class DigitsLoader:
    """The tutorial's ``MNISTLoader`` for the digits: images scaled to 0..1 with a channel
    axis, a held-out test split, and ``get_batch`` drawing random training examples."""

    def __init__(self, seed=0):
        images, labels = load_digits(return_X_y=True)
        images = np.expand_dims(images.reshape(-1, 8, 8) / 16.0, axis=-1).astype(np.float32)
        (self.train_data, self.test_data,
         self.train_label, self.test_label) = train_test_split(
            images, labels, test_size=0.2, random_state=seed, stratify=labels)
        self.num_train_data, self.num_test_data = len(self.train_data), len(self.test_data)
        self.rng = np.random.default_rng(seed)

    def get_batch(self, batch_size):
        # Draw batch_size random examples from the training set.
        index = self.rng.integers(0, self.num_train_data, batch_size)
        return self.train_data[index, :], self.train_label[index]


parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--steps", type=int, default=None,
                    help="train for this many batches instead of num_epochs' worth")
args = parser.parse_args()

num_epochs = 10
batch_size = 50
learning_rate_1 = 0.001
learning_rate_2 = 0.01

fw.random.set_seed(0)  # the initializers draw from fw.random: the same weights every run
model = MLP()
data_loader = DigitsLoader()
# Two optimizers with different learning rates, for the first and the second layer.
optimizer_1 = Adam(learning_rate=learning_rate_1)
optimizer_2 = Adam(learning_rate=learning_rate_2)
num_batches = int(data_loader.num_train_data // batch_size * num_epochs)
if args.steps is not None:
    num_batches = args.steps
for batch_index in range(num_batches):
    X, y = data_loader.get_batch(batch_size)
    with fw.GradientTape(persistent=True) as tape:  # persistent: gradient() is called twice
        y_pred = model(X)
        loss = fw.losses.sparse_categorical_crossentropy(y_true=y, y_pred=y_pred)
        loss = fw.reduce_mean(loss)
    if batch_index % 50 == 0:
        print("batch %d: loss %f" % (batch_index, loss.numpy()))
    grads_1 = tape.gradient(loss, model.dense1.variables)  # the first layer's gradients
    grads_2 = tape.gradient(loss, model.dense2.variables)  # the second layer's gradients
    optimizer_1.apply_gradients(grads_and_vars=zip(grads_1, model.dense1.variables))  # lr 0.001
    optimizer_2.apply_gradients(grads_and_vars=zip(grads_2, model.dense2.variables))  # lr 0.01
    del tape

y_pred = model(data_loader.test_data)
accuracy = np.mean(np.argmax(y_pred.numpy(), axis=-1) == data_loader.test_label)
print("batches trained: %d" % num_batches)
print("test accuracy: %.4f" % accuracy)
