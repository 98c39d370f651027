"""Run the ported TF2 programs of tests/programs/ on TensorFlow 2.21 / Keras 3 and record their
numbers in programs_reference.json for tests/test_ported_programs.py: the deterministic ones
from the same NumPy initial weights (``init``), the ones that draw random numbers while training
(the VAE's noise, the GAN's noise and dropout) over a few seeds, whose range the framework's
run must fall in.

    /tmp/tfenv/bin/python tests/reference/make_programs_reference.py
"""
import importlib.util
import json
import os
import sys

import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from programs_setup import DETERMINISTIC, SEEDED, init_weights  # noqa: E402


def load(name):
    path = os.path.join(os.path.dirname(HERE), "programs", f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"program_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    out = {"tensorflow": tf.__version__, "deterministic": {}, "seeded": {}}
    for name, kwargs in DETERMINISTIC.items():
        tf.keras.backend.clear_session()
        out["deterministic"][name] = load(name).main(tf, **kwargs, **(
            {"init": init_weights} if name != "custom_training_basics" else {}))
        tf.keras.backend.set_floatx("float32")
        print(name, "done")
    for name, (kwargs, seeds) in SEEDED.items():
        out["seeded"][name] = [load(name).main(tf, seed=seed, **kwargs) for seed in seeds]
        print(name, "done")
    with open(os.path.join(HERE, "programs_reference.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
