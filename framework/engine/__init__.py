"""The engine: tensors and variables (``tensor``, ``dtypes``), the array backend (``backend``),
how an op runs and who hears it (``primitive``, ``recording``, ``context``), the tape and its
backward walk (``tape``), Jacobians (``jacobian``), unconnected and sparse gradients
(``unconnected``, ``indexed_slices``), custom gradients (``custom_gradient``) and nested
structures (``nest``). It depends on NumPy (and CuPy) and, for the ops its VJPs are written
with, on ``framework.ops``: nothing above.
"""
