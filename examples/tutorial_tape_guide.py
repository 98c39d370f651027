"""The GradientTape guide, snippet by snippet: ``tf`` became ``fw``, nothing else changed.

Seed tutorial "GradientTape" (the guide to the tape's arguments and methods): first derivatives,
nested tapes for second derivatives, persistent tapes, ``watch_accessed_variables=False``, a layer
that is not built yet, ``batch_jacobian``, ``jacobian``, ``reset`` and ``stop_recording``.

Run: ``python examples/tutorial_tape_guide.py``
"""
import framework as fw
from layers import Dense

# y = x * x at x = 3: dy/dx = 2x = 6.
x = fw.constant(3.0)
with fw.GradientTape() as tape:
    tape.watch(x)
    y = x * x
dy_dx = tape.gradient(y, x)
print("dy_dx =", dy_dx)  # Tensor(6.0, shape=(), dtype=float32)

# Nested tapes: the outer one records the inner one's gradient, so it can differentiate it again.
x = fw.constant(2.0)
with fw.GradientTape() as tape:
    tape.watch(x)
    with fw.GradientTape() as tt:
        tt.watch(x)
        y = x * x
    dy_dx = tt.gradient(y, x)
dy2_dx2 = tape.gradient(dy_dx, x)
print("dy_dx =", dy_dx)  # 4.0
print("dy2_dx2 =", dy2_dx2)  # 2.0

# A persistent tape answers several gradient() calls; delete it when done.
x = fw.constant(3.0)
with fw.GradientTape(persistent=True) as tape:
    tape.watch(x)
    y = x * x
    z = y * y
dz_dx = tape.gradient(z, x)  # 4x^3 = 108
dy_dx = tape.gradient(y, x)  # 2x = 6
print("dz_dx =", dz_dx)
print("dy_dx =", dy_dx)
del tape

# watch_accessed_variables=False: only what is watched explicitly gets a gradient.
variable_a = fw.Variable(2.0, name="variable_a")
variable_b = fw.Variable(3.0, name="variable_b")
with fw.GradientTape(watch_accessed_variables=False, persistent=True) as tape:
    tape.watch(variable_a)
    y = variable_a ** 2  # gradients flow to variable_a
    z = variable_b ** 3  # variable_b is not watched: no gradient
print("dy_da =", tape.gradient(y, variable_a))  # 2a = 4.0
print("dz_db =", tape.gradient(z, variable_b))  # None
del tape

# A layer creates its variables on its first call: watching a.variables before that watches
# nothing, so every gradient is None.
a = Dense(32)
b = Dense(32)
inputs = fw.ones((1, 8))
with fw.GradientTape(watch_accessed_variables=False) as tape:
    tape.watch(a.variables)  # a is not built yet: a.variables == [], nothing is watched
    result = b(a(inputs))
    unwatched = tape.gradient(result, a.variables)
print("gradients of a's variables =", unwatched)  # [None, None]

# batch_jacobian: one Jacobian per example.
with fw.GradientTape() as g:
    x = fw.constant([[1.0, 2.0], [3.0, 4.0]], dtype=fw.float32)
    g.watch(x)
    y = x * x
batch_jacobian = g.batch_jacobian(y, x)
print("batch_jacobian =", batch_jacobian.numpy().tolist())  # [[[2, 0], [0, 4]], [[6, 0], [0, 8]]]

# jacobian: every output element against every input element.
with fw.GradientTape() as g:
    x = fw.constant([1.0, 2.0])
    g.watch(x)
    y = x * x
jacobian = g.jacobian(y, x)
print("jacobian =", jacobian.numpy().tolist())  # [[2, 0], [0, 4]]

# reset(): everything recorded so far is forgotten, exactly as if the tape were entered anew.
w = fw.Variable(2.0, name="w")


def loss_fn():
    return w ** 2


def other_loss_fn():
    return 3.0 * w


with fw.GradientTape() as t:
    loss = loss_fn()
with fw.GradientTape() as t:
    loss += other_loss_fn()
print("two tapes:", t.gradient(loss, w))  # 3.0: only other_loss_fn is differentiated

with fw.GradientTape() as t:
    loss = loss_fn()
    t.reset()
    loss += other_loss_fn()
print("reset:", t.gradient(loss, w))  # 3.0 again

# stop_recording(): the gradient computed inside is not itself recorded, which saves memory.
model = Dense(1)
features = fw.constant([[1.0, 2.0], [3.0, 4.0]])


def compute_loss(model):
    return fw.reduce_mean(fw.square(model(features)))


with fw.GradientTape(persistent=True) as t:
    loss = compute_loss(model)
    with t.stop_recording():
        grads = t.gradient(loss, model.variables)
print("gradient shapes =", [g.shape for g in grads])  # [(2, 1), (1,)]
