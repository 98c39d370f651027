"""The misuses of a TensorArray whose errors are recorded from TensorFlow and replayed with
``framework``: one table for both, over the module given (``tf`` or ``fw``, which spell these
names alike)."""


def misuses(module):
    """Each misuse by name: a function that should raise."""
    def ta(**kwargs):
        return module.TensorArray(module.float32, **kwargs)

    def read_twice():
        array = ta(size=1).write(0, 1.0)
        array.read(0)
        array.read(0)

    return {
        "write_past_size": lambda: ta(size=2).write(2, 1.0),
        "write_negative": lambda: ta(size=2).write(-1, 1.0),
        "read_past_size": lambda: ta(size=2).read(5),
        "read_negative": lambda: ta(size=2).read(-1),
        "read_twice": read_twice,
        "read_unwritten_unknown_shape": lambda: ta(size=2).read(1),
        "shape_mismatch": lambda: ta(size=2).write(0, module.ones(3)).write(1, module.ones(4)),
        "element_shape_mismatch": lambda: ta(size=2, element_shape=[3]).write(
            0, module.ones(2)),
        "dtype_mismatch": lambda: ta(size=2).write(0, module.constant(1, module.int32)),
        "unstack_too_many": lambda: ta(size=2).unstack(module.ones((3, 2))),
        "concat_scalars": lambda: ta(size=2).write(0, 1.0).write(1, 2.0).concat(),
        "size_missing": lambda: module.TensorArray(module.float32),
    }
