"""Jacobians with ``tape.jacobian`` and ``tape.batch_jacobian``, checked against closed forms.

``jacobian(y, x)`` has shape ``y.shape + x.shape``: every output element differentiated against
every input element. With ``experimental_use_pfor=True`` (the default) all rows come from one
vectorized backward pass; ``parallel_iterations`` splits it into chunks to bound memory; with
``False`` it runs one backward pass per row. ``batch_jacobian`` is the per-example version for a
batch whose outputs depend only on their own example.

Run: ``python examples/jacobian.py``
"""
import numpy as np

import framework as fw

# ---- y = W x: the Jacobian is W itself ---------------------------------------------------------
W = fw.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
x = fw.constant([0.5, -1.0, 2.0])
with fw.GradientTape() as tape:
    tape.watch(x)
    y = fw.reshape(fw.matmul(W, fw.reshape(x, (3, 1))), (2,))
J = tape.jacobian(y, x)
print("jacobian of W x, shape", J.shape, ":", J.numpy().tolist())  # equals W

# ---- softmax: J = diag(s) - s s^T, by all three strategies -----------------------------------
logits = fw.constant([1.0, 2.0, 0.5, -1.0], dtype=fw.float64)
exact = None
for options in ({}, {"parallel_iterations": 2}, {"experimental_use_pfor": False}):
    with fw.GradientTape() as tape:
        tape.watch(logits)
        s = fw.nn.softmax(logits)
    J = tape.jacobian(s, logits, **options).numpy()
    if exact is None:
        probabilities = s.numpy()
        exact = np.diag(probabilities) - np.outer(probabilities, probabilities)
    print(f"softmax jacobian {options or 'one vectorized pass'}: "
          f"max error {np.abs(J - exact).max():.1e}")

# ---- per-example Jacobians of a tanh layer: diag(1 - y^2) W^T for each example ---------------
rng = np.random.default_rng(0)
kernel = fw.constant(rng.normal(size=(3, 2)), dtype=fw.float64)
batch = fw.constant(rng.normal(size=(4, 3)), dtype=fw.float64)
with fw.GradientTape() as tape:
    tape.watch(batch)
    outputs = fw.tanh(fw.matmul(batch, kernel))
per_example = tape.batch_jacobian(outputs, batch)
closed_form = np.stack([np.diag(1 - y ** 2) @ kernel.numpy().T for y in outputs.numpy()])
print("batch_jacobian shape", per_example.shape,
      f"max error {np.abs(per_example.numpy() - closed_form).max():.1e}")

# ---- the Jacobian of a function of two sources at once ----------------------------------------
a = fw.constant([1.0, 2.0])
b = fw.constant(3.0)
with fw.GradientTape() as tape:
    tape.watch([a, b])
    product = a * b  # d/da = b I, d/db = a
da, db = tape.jacobian(product, [a, b])
print("d(a*b)/da =", da.numpy().tolist(), " d(a*b)/db =", db.numpy().tolist())
