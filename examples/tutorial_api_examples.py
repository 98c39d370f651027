"""The examples of the ``tf.GradientTape`` API page, with ``fw`` in place of ``tf``.

Seed tutorial "GradientTape" (notes on the API reference): d(x^2)/dx, a second derivative from
nested tapes, ``watch_accessed_variables=False``, ``batch_jacobian``, ``reset`` and
``stop_recording``.

Run: ``python examples/tutorial_api_examples.py``
"""
import framework as fw

# y = x * x: the gradient at x = 3.0 is 6.0.
x = fw.constant(3.0)
with fw.GradientTape() as g:
    g.watch(x)
    y = x * x
dy_dx = g.gradient(y, x)
print(dy_dx)  # Tensor(6.0, shape=(), dtype=float32)

# Tapes nest for higher-order derivatives.
x = fw.constant(5.0)
with fw.GradientTape() as g:
    g.watch(x)
    with fw.GradientTape() as gg:
        gg.watch(x)
        y = x * x
    dy_dx = gg.gradient(y, x)  # dy_dx = 2 * x
d2y_dx2 = g.gradient(dy_dx, x)  # d2y_dx2 = 2
print(dy_dx)  # 10.0
print(d2y_dx2)  # 2.0

# Trainable variables are watched when accessed, unless watch_accessed_variables=False.
x = fw.Variable(2.0)
w = fw.Variable(5.0)
with fw.GradientTape(watch_accessed_variables=False, persistent=True) as tape:
    tape.watch(x)
    y = x ** 2  # gradients will be available for x
    z = w ** 3  # no gradients will be available, as w isn't being watched
dy_dx = tape.gradient(y, x)
print(dy_dx)  # 4.0
dz_dw = tape.gradient(z, w)
print(dz_dw)  # None

# batch_jacobian: per-example Jacobians, stacked.
with fw.GradientTape() as g:
    x = fw.constant([[1.0, 2.0], [3.0, 4.0]], dtype=fw.float32)
    g.watch(x)
    y = x * x
batch_jacobian = g.batch_jacobian(y, x)
print(batch_jacobian)  # [[[2, 0], [0, 4]], [[6, 0], [0, 8]]]

# reset(): drop what was recorded when a condition says the pass should start over.
x = fw.Variable(3.0)
k = 5.0
with fw.GradientTape() as t:
    loss = x * x
    if loss > k:
        t.reset()
        loss = 2.0 * x  # only this is differentiated
print("after reset:", t.gradient(loss, x))  # 2.0

# stop_recording(): operations inside are not recorded.
x = fw.constant(4.0)
with fw.GradientTape() as tape:
    with tape.stop_recording():
        y = x ** 2
dy_dx = tape.gradient(y, x)
print(dy_dx)  # None
