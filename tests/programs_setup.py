"""What the ported programs run with on both sides (tests/test_ported_programs.py and
tests/reference/make_programs_reference.py): their arguments, and the initial weights that
replace each program's own random ones so that the two frameworks can be compared number for
number."""
import numpy as np

DETERMINISTIC = {"custom_training_basics": {}, "custom_training_walkthrough": {},
                 "training_loop_from_scratch": {}, "pinn_burgers": {}, "maml_sinusoid": {}}
# programs that draw random numbers while training: their arguments and the recorded seeds
SEEDED = {"cvae": ({}, [0, 1, 2]), "dcgan": ({}, [0, 1, 2])}


def init_weights(weights):
    """Glorot-like draws for the kernels, small ones for the rest, from the shapes alone."""
    rng = np.random.default_rng(42)
    out = []
    for w in weights:
        scale = np.sqrt(2.0 / sum(w.shape[-2:])) if w.ndim >= 2 else 0.05
        out.append((rng.standard_normal(w.shape) * scale).astype(w.dtype))
    return out
# programs that train through compile/fit (tests/test_ported_fit_programs.py), all deterministic
FIT_PROGRAMS = ["basic_classification", "customizing_fit", "writing_callbacks",
                "text_classification_rnn", "text_classification_transformer"]
