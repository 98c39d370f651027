"""The seed tutorial's MLP, written as a TensorFlow 2 user writes it (shared by the layer tests)."""
import framework as fw
from layers import Dense, Flatten, Model


class SeedMLP(Model):
    """Flatten, Dense(100, relu), Dense(10), softmax."""

    def __init__(self):
        super().__init__()
        self.flatten = Flatten()
        self.dense1 = Dense(units=100, activation="relu")
        self.dense2 = Dense(units=10)

    def call(self, inputs):
        x = self.flatten(inputs)
        x = self.dense1(x)
        x = self.dense2(x)
        return fw.nn.softmax(x)
