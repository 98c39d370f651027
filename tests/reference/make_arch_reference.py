"""Record TensorFlow's answers at the tape's edges into ``arch_reference.json``.

What ``tests/test_tape_watching.py`` compares with: the gradient of a target that is itself a
source (a Python ``max`` of variables, a variable returned unchanged, a never-watched constant),
the Jacobians of a source by itself, unconnected Jacobians (of a never-watched constant too),
which shapes ``batch_jacobian`` refuses, which reads make a variable watched, and each dtype's
attributes. Run with TensorFlow 2.21 (``/work/tfenv/bin/python``):

    python tests/reference/make_arch_reference.py
"""
import json
import os

import numpy as np
import tensorflow as tf


def value(t):
    return None if t is None else np.asarray(t).tolist()


def target_is_source():
    v, w = tf.Variable(2.0), tf.Variable(3.0)
    out = {}
    with tf.GradientTape() as tape:
        y = max([v, w])
    out["python_max"] = [value(g) for g in tape.gradient(y, [v, w])]
    vec = tf.Variable([2.0, 3.0])
    with tf.GradientTape() as tape:
        y = vec
    out["variable_unchanged"] = value(tape.gradient(y, vec))
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    c = tf.constant([1.0, 2.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * 2.0
    out["target_list_with_source"] = value(tape.gradient([y, x], x))
    out["unwatched_constant"] = value(tape.gradient(c, c))
    out["unwatched_constant_twice"] = value(tape.gradient([c, c], c))
    out["with_output_gradients"] = value(tape.gradient(c, c, output_gradients=tf.constant(
        [5.0, 6.0])))
    m = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape(persistent=True) as tape:
        pass
    out["jacobian_of_itself"] = value(tape.jacobian(vec, vec))
    out["jacobian_of_itself_loop"] = value(tape.jacobian(vec, vec, experimental_use_pfor=False))
    out["batch_jacobian_of_itself"] = value(tape.batch_jacobian(m, m))
    return out


def unconnected_jacobians():
    """A Jacobian gathers rows of its target: of a never-watched constant nothing records that,
    so even the constant by itself is unconnected; ``batch_jacobian`` answers an unconnected
    source with zeros whatever ``unconnected_gradients`` says (kept for compatibility)."""
    out = {}
    c = tf.constant([1.0, 2.0])
    m = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    a, b = tf.constant([[1.0, 2.0]]), tf.constant([[3.0, 4.0]])
    d = tf.constant(np.ones((2, 3), np.float32))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([b, d])
        y = a * 2.0  # does not depend on b (and a is not watched)
        tape.watch(m)
        z = m * 3.0
    out["jacobian_of_unwatched_constant"] = value(tape.jacobian(c, c))
    out["jacobian_of_unwatched_constant_loop"] = value(
        tape.jacobian(c, c, experimental_use_pfor=False))
    out["batch_jacobian_of_unwatched_constant"] = value(tape.batch_jacobian(a, a))
    out["batch_jacobian_unconnected"] = value(tape.batch_jacobian(y, b))
    out["batch_jacobian_unconnected_loop"] = value(
        tape.batch_jacobian(y, b, experimental_use_pfor=False))
    out["batch_jacobian_unconnected_of_tracked_target"] = value(tape.batch_jacobian(z, d))
    out["jacobian_unconnected"] = value(tape.jacobian(z, d))
    try:
        tape.batch_jacobian(z, d, unconnected_gradients="raise")
        out["batch_jacobian_unconnected_raise"] = None
    except ValueError as error:
        out["batch_jacobian_unconnected_raise"] = type(error).__name__
    return out


def dtypes():
    """Each dtype's TensorFlow attributes (what ported code reads: ``x.dtype.is_floating``,
    ``tf.float32.min`` for masks)."""
    out = {}
    for dtype in (tf.float16, tf.float32, tf.float64, tf.int8, tf.int16, tf.int32, tf.int64,
                  tf.uint8, tf.uint16, tf.uint32, tf.uint64, tf.bool, tf.complex64,
                  tf.complex128):
        record = {key: getattr(dtype, key) for key in (
            "is_floating", "is_integer", "is_unsigned", "is_bool", "is_complex", "is_quantized",
            "is_numpy_compatible", "size", "name")}
        record.update(str=str(dtype), repr=repr(dtype),
                      as_numpy_dtype=np.dtype(dtype.as_numpy_dtype).name,
                      real_dtype=dtype.real_dtype.name, base_dtype=dtype.base_dtype.name)
        try:
            record.update(min=float(dtype.min) if dtype.is_floating else int(dtype.min),
                          max=float(dtype.max) if dtype.is_floating else int(dtype.max))
        except TypeError as error:
            record.update(min=type(error).__name__, max=type(error).__name__)
        out[dtype.name] = record
    out["equal"] = {"float32 == np.float32": tf.float32 == np.float32,
                    "float32 == 'float32'": tf.float32 == "float32",
                    "float32 == float64": tf.float32 == tf.float64,
                    "constant dtype is float32": tf.constant(1.0).dtype == tf.float32,
                    "as_dtype('int64') == int64": tf.as_dtype("int64") == tf.int64}
    return out


def batch_jacobian_refusals():
    out = {}
    for target_shape, source_shape in [((3, 2), (4, 2)), ((3,), (3, 2)), ((3, 2), (3,)),
                                       ((3, 2), (3, 2))]:
        x = tf.ones(source_shape)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(x) * tf.ones(target_shape)
        try:
            tape.batch_jacobian(y, x)
            refused = None
        except ValueError as error:
            refused = type(error).__name__
        out[f"{list(target_shape)} {list(source_shape)}"] = refused
    return out


def watched_by_reads():
    out = {}
    reads = {"argmax": tf.argmax, "argmin": tf.argmin, "comparison": lambda v: v > 1.0,
             "equal": lambda v: tf.equal(v, 2.0), "cast to int": lambda v: tf.cast(v, tf.int32),
             "stop_gradient": tf.stop_gradient}
    for name, read in reads.items():
        v = tf.Variable([[1.0, 2.0], [3.0, 0.5]])
        with tf.GradientTape() as tape:
            read(v)
        out[name] = len(tape.watched_variables())
    return out


def after_an_update():
    """A persistent tape differentiated after an update of a variable it read: TensorFlow's
    tape differentiates what it recorded, at the values read then (the seed's layer-wise step
    with the second layer's gradient taken after the first optimizer's update; an assign)."""
    rng = np.random.default_rng(0)
    x = tf.constant(rng.standard_normal((5, 3)))
    w1 = tf.Variable(rng.standard_normal((3, 4)))
    w2 = tf.Variable(rng.standard_normal((4, 2)))
    initial = {"x": value(x), "w1": value(w1), "w2": value(w2)}
    with tf.GradientTape(persistent=True) as tape:
        logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1)), w2)
        loss = tf.reduce_sum(tf.nn.softmax(logits) ** 2)
    first = tape.gradient(loss, [w1])
    tf.keras.optimizers.SGD(0.5).apply_gradients(zip(first, [w1]))
    second = tape.gradient(loss, [w1, w2])
    w2.assign(w2 * 3.0)
    third = tape.gradient(loss, [w1, w2])
    return {**initial, "first": value(first[0]),
            "after_sgd": [value(g) for g in second], "after_assign": [value(g) for g in third]}


def main():
    record = {"target_is_source": target_is_source(),
              "after_an_update": after_an_update(),
              "unconnected_jacobians": unconnected_jacobians(),
              "dtypes": dtypes(),
              "batch_jacobian_refusals": batch_jacobian_refusals(),
              "watched_by_reads": watched_by_reads(),
              "tensorflow": tf.__version__}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "arch_reference.json")
    with open(path, "w") as file:
        json.dump(record, file, indent=1, sort_keys=True)
        file.write("\n")


if __name__ == "__main__":
    main()
