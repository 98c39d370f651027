"""``tf.GradientTape`` explained, with ``fw`` in place of ``tf``.

Seed tutorial "tf.GradientTape 详解" (the TensorFlow handbook's appendix on the tape). Its code
lives in files the text includes: the derivative of x^2, a tape used after its ``with`` block,
``stop_recording`` outside the block, watching constants, higher orders, a persistent tape, and
computing gradients outside the block for speed. Its last example, updating each layer of an MLP
with its own optimizer, is ``examples/layerwise_mlp.py``.

Run: ``python examples/tutorial_tape_explained.py``
"""
import framework as fw

# The derivative of y(x) = x^2 at x = 3.
x = fw.Variable(initial_value=3.0)
with fw.GradientTape() as tape:  # every step inside is recorded for differentiation
    y = fw.square(x)
y_grad = tape.gradient(y, x)  # dy/dx = 2x
print("y =", y, "y_grad =", y_grad)  # 9.0, 6.0

# Leaving the block stops the recording but keeps what was recorded: gradient() still works.
# stop_recording() pauses a recording tape; after the block there is nothing left to pause.
x = fw.Variable(initial_value=3.0)
with fw.GradientTape() as tape:
    y = fw.square(x)
    with tape.stop_recording():  # not recorded: y_2 has no gradient through this tape
        y_2 = fw.square(x)
y_grad = tape.gradient(y, x)
print("y_grad after the block =", y_grad)  # 6.0
try:
    with tape.stop_recording():
        y_3 = fw.square(x)
except ValueError as error:
    print("ValueError:", error)  # Tape is not recording.

# Watching: trainable variables are watched automatically, constants only when asked.
x = fw.Variable(initial_value=3.0)
c = fw.constant(3.0)
with fw.GradientTape(persistent=True) as tape:
    y = fw.square(x)
    z = fw.square(c)
print("dy_dx =", tape.gradient(y, x))  # 6.0
print("dz_dc unwatched =", tape.gradient(z, c))  # None
with fw.GradientTape() as tape:
    tape.watch(c)
    z = fw.square(c)
print("dz_dc watched =", tape.gradient(z, c))  # 6.0

# Higher orders: the gradient is a computation like any other, so an outer tape records it.
x = fw.Variable(initial_value=3.0)
with fw.GradientTape() as tape:
    with fw.GradientTape() as tape_2:
        y = fw.square(x)
    dy_dx = tape_2.gradient(y, x)  # 2x = 6
d2y_dx2 = tape.gradient(dy_dx, x)  # 2
print("dy_dx =", dy_dx, "d2y_dx2 =", d2y_dx2)

# A persistent tape differentiates twice: x^2 at x = 3, then x^3 at x = 2.
x_1 = fw.Variable(initial_value=3.0)
x_2 = fw.Variable(initial_value=2.0)
with fw.GradientTape(persistent=True) as tape:
    y_1 = fw.square(x_1)
    y_2 = fw.pow(x_2, 3)
y_grad_1 = tape.gradient(y_1, x_1)  # 2 * 3 = 6
y_grad_2 = tape.gradient(y_2, x_2)  # 3 * 2^2 = 12
print("y_grad_1 =", y_grad_1, "y_grad_2 =", y_grad_2)
del tape  # release what the persistent tape holds

# Speed: call gradient() after the block, so the backward pass itself is not recorded.
x = fw.Variable(initial_value=3.0)
with fw.GradientTape() as tape:
    y = fw.square(x)
    z = fw.pow(x, 3)
    loss = y + z
grad = tape.gradient(loss, x)  # 2x + 3x^2 = 33
print("grad outside the block =", grad)
