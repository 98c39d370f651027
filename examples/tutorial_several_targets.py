"""Gradients of several targets with respect to several variables, with ``fw`` for ``tf``.

Seed tutorial "tf.GradientTape()": ``g.gradient([z1, z2], [w1, w2, w3, w4])`` gives one gradient
per variable, each the sum over the targets; then a persistent tape, ``stop_recording``, and a
second derivative from nested tapes.

Run: ``python examples/tutorial_several_targets.py``
"""
import framework as fw
from layers import Dense, initializers

initializer = initializers.GlorotNormal(seed=0)
w1 = fw.Variable(name="w1", initial_value=initializer(shape=[3]))
w2 = fw.Variable(name="w2", initial_value=initializer(shape=[3]))
w3 = fw.Variable(name="w3", initial_value=initializer(shape=[3]))
w4 = fw.Variable(name="w4", initial_value=initializer(shape=[3]))
with fw.GradientTape() as g:
    z1 = 3 * w1 + 2 * w2 + w3
    z2 = w1 + -1 * w3 + w4
    grads = g.gradient([z1, z2], [w1, w2, w3, w4])
print(type(grads))  # <class 'list'>
print(len(grads))  # 4: one per variable
print([g.numpy().tolist() for g in grads])  # [[4, 4, 4], [2, 2, 2], [0, 0, 0], [1, 1, 1]]
# dz1/dw1 + dz2/dw1 = 3 + 1 = 4, and likewise for the others.

# persistent=True: gradient() may be called several times; delete the tape at the end. The
# tutorial calls it inside the block, which records the backward pass too (the warning says so).
x = fw.Variable(3.0)
with fw.GradientTape(persistent=True) as tape:
    tape.watch(x)
    y = fw.pow(x, 4)  # y = x^4
    z = fw.multiply(x, 3)  # z = 3x
    dy_dx = tape.gradient(y, x)  # 4x^3 = 108
    dz_dx = tape.gradient(z, x)  # 3
    print(dy_dx)
    print(dz_dx)
del tape

# stop_recording: the gradient computed inside is not traced, saving memory.
model = Dense(2)
batch = fw.constant([[1.0, -1.0], [0.5, 2.0]])


def compute_loss(model):
    return fw.reduce_sum(fw.square(model(batch)))


with fw.GradientTape(persistent=True) as t:
    loss = compute_loss(model)
    with t.stop_recording():
        grads = t.gradient(loss, model.variables)
print("gradient shapes =", [g.shape for g in grads])  # [(2, 2), (2,)]

# Second derivative of y = x^4 at x = 1: y' = 4x^3 = 4, y'' = 12x^2 = 12.
x = fw.Variable(1.0)
with fw.GradientTape() as tape1:
    tape1.watch(x)
    with fw.GradientTape() as tape2:
        tape2.watch(x)
        y = fw.pow(x, 4)
        dy_dx = tape2.gradient(y, x)  # y' = 4x^3
        print(dy_dx)
    dy2_dx2 = tape1.gradient(dy_dx, x)  # y'' = 12x^2
    print(dy2_dx2)
del tape1, tape2
