"""Record how TensorFlow refuses Python values it cannot convert to a tensor, into
conversion_errors_reference.json: each case's exception type and message from ``tf.constant``
and ``tf.convert_to_tensor``. ``tests/test_tensor_conversion_errors.py`` reads the file with no
TensorFlow and holds ``fw.constant`` and ``fw.convert_to_tensor`` to the same refusal.
Run with TensorFlow 2.21 (``/tmp/tfenv/bin/python``):

    python tests/reference/make_conversion_errors_reference.py
"""
import json
import os

import tensorflow as tf

CASES = {  # name: the Python expression of the value
    "ragged_rows": "[[1, 2], [3]]",
    "ragged_floats": "[[1.0], [2.0, 3.0]]",
    "ragged_depth": "[1, [2, 3]]",
    "none": "None",
}


def refusal(function, value):
    try:
        function(value)
    except Exception as error:  # noqa: BLE001 - what TensorFlow raises is what is recorded
        return {"type": type(error).__name__, "message": str(error)}
    raise AssertionError(f"TensorFlow converted {value!r}")


def main():
    cases = {name: {"value": text,
                    "constant": refusal(tf.constant, eval(text)),  # noqa: S307 - literals above
                    "convert_to_tensor": refusal(tf.convert_to_tensor, eval(text))}  # noqa: S307
             for name, text in CASES.items()}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "conversion_errors_reference.json")
    with open(path, "w") as f:
        json.dump({"tensorflow": tf.__version__, "cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
