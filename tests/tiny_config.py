"""The tiny config the runner's tests train on: iris (120 train / 30 test examples, 8 steps
of 16 per epoch), two optimizers with different rules and a schedule, so that optimizer state
and step counts matter, and by default a dropout layer, so that the random streams matter."""

DROPOUT = '[[model.layers]]\ntype = "dropout"\nrate = 0.25\n\n'

TEMPLATE = """
seed = 5
epochs = 2
batch_size = 16
metrics = ["accuracy"]

[data]
name = "iris"
standardize = true

[[model.layers]]
name = "hidden"
type = "dense"
units = 16
activation = "relu"

{dropout}[[model.layers]]
name = "out"
type = "dense"
units = 3

[loss]
name = "sparse_categorical_crossentropy"

[[optimizers]]
layers = ["hidden"]
type = "adam"
learning_rate = 0.01

[[optimizers]]
layers = ["out"]
type = "sgd"
learning_rate = 0.1
momentum = 0.9

[optimizers.schedule]
type = "exponential_decay"
decay_steps = 5
decay_rate = 0.9

[output]
plot = false
"""


def tiny_config(dropout=True, step_metrics=False):
    """The config's TOML text, with or without the dropout layer and per-step metrics."""
    text = TEMPLATE.format(dropout=DROPOUT if dropout else "")
    return text + "step_metrics = true\n" if step_metrics else text
