"""Record how often TensorFlow traces a ``tf.function`` into tracing_reference.json.

Each case is a function (one TF2 line of Python source, with ``tf``), how it is decorated (an
``input_signature`` of shapes, or ``reduce_retracing``) and the shapes of the float32 tensors of
each call; recorded: the tracing count after each call. ``tests/test_free_sizes.py`` runs the same
calls with ``tf`` bound to ``framework``. Run with TensorFlow 2.21 (``/tmp/tfenv/bin/python``):

    python tests/reference/make_tracing_reference.py
"""
import json
import os

import tensorflow as tf

CASES = [
    {"name": "relaxed_batch_then_labels", "source": "lambda x, y: tf.reduce_sum(x, axis=1) * 2.0 "
     "+ tf.reduce_mean(y)", "reduce_retracing": True,
     "calls": [[[4, 3], [3]], [[5, 3], [3]], [[7, 3], [3]], [[2, 3], [3]], [[3, 3], [6]],
               [[8, 3], [2]]]},
    {"name": "relaxed_one_axis_then_both", "source": "lambda x: x * 2.0",
     "reduce_retracing": True,
     "calls": [[[4, 3]], [[4, 5]], [[6, 5]], [[2]], [[3]], [[7, 9]]]},
    {"name": "exact_shapes", "source": "lambda x: x * 2.0", "reduce_retracing": False,
     "calls": [[[4, 3]], [[4, 5]], [[4, 3]], [[6, 5]]]},
    {"name": "signature_with_a_fixed_input", "source": "lambda x, w: tf.matmul(x, w)",
     "input_signature": [[None, 3], [3, 2]],
     "calls": [[[4, 3], [3, 2]], [[9, 3], [3, 2]], [[2, 3], [3, 2]]]},
    {"name": "signature_every_dimension_none", "source": "lambda x: tf.reduce_mean(x, axis=-1)",
     "input_signature": [[None, None]],
     "calls": [[[4, 3]], [[5, 7]], [[2, 9]], [[6, 2]]]},
    # the tf.function guide's (https://www.tensorflow.org/guide/function): reduce_retracing
    {"name": "guide_reduce_retracing", "source": "lambda x: x", "reduce_retracing": True,
     "calls": [[[3]], [[5]], [[7]], [[9]]]},
    # and its next_collatz, under input_signature=[TensorSpec([None])]
    {"name": "guide_collatz", "source": "lambda x: tf.where(x % 2 == 0, x // 2, 3 * x + 1)",
     "input_signature": [[None]], "calls": [[[2]], [[5]], [[3]]]},
]


def record(case):
    fn = eval(case["source"], {"tf": tf})  # noqa: S307 - our own recorded lines
    if "input_signature" in case:
        signature = [tf.TensorSpec(shape, tf.float32) for shape in case["input_signature"]]
        traced = tf.function(fn, input_signature=signature)
    else:
        traced = tf.function(fn, reduce_retracing=case["reduce_retracing"])
    counts = []
    for shapes in case["calls"]:
        traced(*[tf.ones(shape) for shape in shapes])
        counts.append(int(traced.experimental_get_tracing_count()))
    return dict(case, counts=counts)


def main():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tracing_reference.json")
    with open(path, "w") as f:
        json.dump({"tensorflow": tf.__version__, "cases": [record(c) for c in CASES]}, f,
                  indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
