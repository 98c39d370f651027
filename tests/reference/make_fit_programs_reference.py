"""Run the ported TF2 programs of tests/programs/ that train through compile/fit on TensorFlow
2.21 / Keras 3 from the same NumPy initial weights (programs_setup.init_weights), and record
their numbers in fit_programs_reference.json for tests/test_ported_fit_programs.py.

    /tmp/tfenv/bin/python tests/reference/make_fit_programs_reference.py
"""
import json
import os
import sys

import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from programs_setup import FIT_PROGRAMS, init_weights  # noqa: E402
from make_programs_reference import load  # noqa: E402


def main():
    out = {"tensorflow": tf.__version__}
    for name in FIT_PROGRAMS:
        tf.keras.backend.clear_session()
        out[name] = load(name).main(tf, init=init_weights)
        print(name, "done")
    with open(os.path.join(HERE, "fit_programs_reference.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
