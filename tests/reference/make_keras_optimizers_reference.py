"""Write keras_optimizers_reference.json: Keras 3's numbers for the wider optimizer surface.

Run it where TensorFlow and Keras 3 are installed (the tests do not need them):
``python tests/reference/make_keras_optimizers_reference.py``. It records

- ``problem``: two float32 variables' initial values, and the curvature, minimum and noise
  that make each step's gradient (``gradient`` below, exact in float32, which the tests repeat);
- ``trajectories``: 50 steps of each optimizer configuration (defaults, other arguments, weight
  decay, moving averages, accumulation, loss scaling) on that problem, with the weights after
  every step, the final slots, ``iterations`` and the raw call counter, and the weights after
  ``finalize_variable_values``;
- ``schedules``: each schedule's value at steps 0 to 60 and a few far ones, and its config;
- ``initializers``: statistics of large seeded draws (mean, std, min, max; for ``Orthogonal``
  the largest deviation of ``q^T q`` from the identity) and each initializer's config.
"""
import json
import os

import keras
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = 50
SHAPES = [(4, 3), (3,)]


def problem():
    """Initial weights, the curvature ``a``, the minimum ``c`` and each step's noise."""
    rng = np.random.default_rng(18)
    start = [rng.normal(0, 1, s).astype(np.float32) for s in SHAPES]
    curvature = [rng.uniform(0.5, 2.0, s).astype(np.float32) for s in SHAPES]
    minimum = [rng.normal(0, 1, s).astype(np.float32) for s in SHAPES]
    noise = [[rng.normal(0, 0.3, s).astype(np.float32) for s in SHAPES] for _ in range(STEPS)]
    return start, curvature, minimum, noise


def gradient(weights, curvature, minimum, noise):
    """``a (w - c) + noise``, in float32: exact, so both sides get the same bits."""
    return [a * (w - c) + n for w, a, c, n in zip(weights, curvature, minimum, noise)]


SCHEDULE = {"class_name": "ExponentialDecay",
            "config": {"initial_learning_rate": 0.05, "decay_steps": 4, "decay_rate": 0.7}}

TRAJECTORIES = {
    "nadam": ("Nadam", {}),
    "nadam_args": ("Nadam", {"learning_rate": 0.05, "beta_1": 0.8, "beta_2": 0.95,
                             "epsilon": 1e-4}),
    "adamax": ("Adamax", {}),
    "adamax_args": ("Adamax", {"learning_rate": 0.05, "beta_1": 0.7, "beta_2": 0.9,
                               "epsilon": 1e-3}),
    "adadelta": ("Adadelta", {}),
    "adadelta_args": ("Adadelta", {"learning_rate": 1.0, "rho": 0.8, "epsilon": 1e-5}),
    "lion": ("Lion", {}),
    "lion_args": ("Lion", {"learning_rate": 0.01, "beta_1": 0.8, "beta_2": 0.95}),
    "ftrl": ("Ftrl", {}),
    "ftrl_args": ("Ftrl", {"learning_rate": 0.2, "learning_rate_power": -0.7,
                           "initial_accumulator_value": 0.3, "l1_regularization_strength": 0.05,
                           "l2_regularization_strength": 0.1,
                           "l2_shrinkage_regularization_strength": 0.02, "beta": 0.5}),
    "adam_beta_rounding": ("Adam", {"learning_rate": 0.03, "beta_1": 0.85, "beta_2": 0.9}),
    # weight decay, decoupled, on every optimizer
    "sgd_weight_decay": ("SGD", {"learning_rate": 0.05, "momentum": 0.5, "weight_decay": 0.1}),
    "adam_weight_decay": ("Adam", {"learning_rate": 0.02, "weight_decay": 0.2}),
    "rmsprop_weight_decay": ("RMSprop", {"learning_rate": 0.01, "weight_decay": 0.1}),
    "adagrad_weight_decay": ("Adagrad", {"learning_rate": 0.1, "weight_decay": 0.1}),
    "nadam_weight_decay": ("Nadam", {"learning_rate": 0.02, "weight_decay": 0.1}),
    "adamax_weight_decay": ("Adamax", {"learning_rate": 0.02, "weight_decay": 0.1}),
    "adadelta_weight_decay": ("Adadelta", {"learning_rate": 1.0, "weight_decay": 0.05}),
    "lion_weight_decay": ("Lion", {"learning_rate": 0.01, "weight_decay": 0.3}),
    "ftrl_weight_decay": ("Ftrl", {"learning_rate": 0.2, "weight_decay": 0.1}),
    # moving averages
    "adam_ema": ("Adam", {"learning_rate": 0.02, "use_ema": True}),
    "sgd_ema_overwrite": ("SGD", {"learning_rate": 0.05, "use_ema": True, "ema_momentum": 0.9,
                                  "ema_overwrite_frequency": 7}),
    "lion_ema": ("Lion", {"learning_rate": 0.01, "use_ema": True, "ema_momentum": 0.8}),
    # accumulation: iterations counts updates, the schedule reads the raw call counter
    "adam_accumulation": ("Adam", {"learning_rate": 0.02, "gradient_accumulation_steps": 3}),
    "sgd_accumulation_schedule": ("SGD", {"learning_rate": SCHEDULE, "momentum": 0.9,
                                          "gradient_accumulation_steps": 4}),
    "nadam_accumulation": ("Nadam", {"learning_rate": 0.02, "gradient_accumulation_steps": 2}),
    "ftrl_accumulation_clipnorm": ("Ftrl", {"learning_rate": 0.2, "clipnorm": 0.5,
                                            "gradient_accumulation_steps": 3}),
    "adam_accumulation_ema_decay": ("Adam", {"learning_rate": 0.02, "weight_decay": 0.1,
                                             "use_ema": True, "ema_momentum": 0.9,
                                             "ema_overwrite_frequency": 3,
                                             "gradient_accumulation_steps": 2}),
    # loss scaling: the gradients given are divided by the factor
    "sgd_loss_scale": ("SGD", {"learning_rate": 0.05, "loss_scale_factor": 128.0}),
    "adamax_loss_scale": ("Adamax", {"learning_rate": 0.05, "loss_scale_factor": 4.0}),
    "adagrad_schedule": ("Adagrad", {"learning_rate": SCHEDULE}),
}

SCHEDULES = {
    "polynomial": ("PolynomialDecay", {"initial_learning_rate": 0.1, "decay_steps": 20}),
    "polynomial_power_cycle": ("PolynomialDecay", {"initial_learning_rate": 0.1,
                                                   "decay_steps": 7, "end_learning_rate": 0.01,
                                                   "power": 0.5, "cycle": True}),
    "polynomial_power": ("PolynomialDecay", {"initial_learning_rate": 0.3, "decay_steps": 9,
                                             "end_learning_rate": 0.02, "power": 2.0}),
    "inverse_time": ("InverseTimeDecay", {"initial_learning_rate": 0.1, "decay_steps": 5,
                                          "decay_rate": 0.5}),
    "inverse_time_staircase": ("InverseTimeDecay", {"initial_learning_rate": 0.1,
                                                    "decay_steps": 5, "decay_rate": 0.5,
                                                    "staircase": True}),
    "cosine_restarts": ("CosineDecayRestarts", {"initial_learning_rate": 0.1,
                                                "first_decay_steps": 6}),
    "cosine_restarts_args": ("CosineDecayRestarts", {"initial_learning_rate": 0.1,
                                                     "first_decay_steps": 5, "t_mul": 1.5,
                                                     "m_mul": 0.8, "alpha": 0.1}),
    "cosine_restarts_t_mul_1": ("CosineDecayRestarts", {"initial_learning_rate": 0.2,
                                                        "first_decay_steps": 4, "t_mul": 1.0,
                                                        "m_mul": 0.5}),
    "cosine": ("CosineDecay", {"initial_learning_rate": 0.1, "decay_steps": 30, "alpha": 0.1}),
    "cosine_warmup": ("CosineDecay", {"initial_learning_rate": 0.0, "decay_steps": 30,
                                      "warmup_target": 0.1, "warmup_steps": 10}),
    "cosine_warmup_alpha": ("CosineDecay", {"initial_learning_rate": 0.01, "decay_steps": 20,
                                            "alpha": 0.2, "warmup_target": 0.05,
                                            "warmup_steps": 7}),
    "exponential": ("ExponentialDecay", {"initial_learning_rate": 0.1, "decay_steps": 3,
                                         "decay_rate": 0.5}),
    "piecewise": ("PiecewiseConstantDecay", {"boundaries": [2, 5], "values": [1.0, 0.5, 0.1]}),
}
SCHEDULE_STEPS = list(range(61)) + [99, 100, 101, 250, 1000, 12345]

INITIALIZERS = {
    "truncated_normal": ("TruncatedNormal", {"stddev": 1.0, "seed": 3}),
    "truncated_normal_default": ("TruncatedNormal", {"seed": 3}),
    "random_normal": ("RandomNormal", {"mean": 0.5, "stddev": 2.0, "seed": 3}),
    "random_uniform": ("RandomUniform", {"minval": -1.0, "maxval": 3.0, "seed": 3}),
    "lecun_normal": ("LecunNormal", {"seed": 3}),
    "lecun_uniform": ("LecunUniform", {"seed": 3}),
    "glorot_normal": ("GlorotNormal", {"seed": 3}),
    "glorot_uniform": ("GlorotUniform", {"seed": 3}),
    "he_normal": ("HeNormal", {"seed": 3}),
    "he_uniform": ("HeUniform", {"seed": 3}),
    "orthogonal": ("Orthogonal", {"seed": 3}),
    "orthogonal_gain": ("Orthogonal", {"gain": 2.0, "seed": 3}),
    "identity": ("Identity", {}),
    "identity_gain": ("Identity", {"gain": 3.0}),
}
for _mode in ("fan_in", "fan_out", "fan_avg"):
    for _distribution in ("truncated_normal", "untruncated_normal", "uniform"):
        INITIALIZERS[f"variance_scaling_{_mode}_{_distribution}"] = ("VarianceScaling", {
            "scale": 2.5, "mode": _mode, "distribution": _distribution, "seed": 3})
INITIALIZER_SHAPES = {"default": [400, 600], "orthogonal": [300, 500],
                      "orthogonal_tall": [3, 50, 40], "identity": [5, 7]}


def make_learning_rate(value):
    if isinstance(value, dict):
        return getattr(keras.optimizers.schedules, value["class_name"])(**value["config"])
    return value


def trajectory(class_name, config):
    start, curvature, minimum, noise = problem()
    variables = [keras.Variable(w, name=f"w{i}") for i, w in enumerate(start)]
    arguments = dict(config)
    if "learning_rate" in arguments:
        arguments["learning_rate"] = make_learning_rate(arguments["learning_rate"])
    optimizer = getattr(keras.optimizers, class_name)(**arguments)
    steps = []
    for step in range(STEPS):
        grads = gradient([v.numpy() for v in variables], curvature, minimum, noise[step])
        optimizer.apply_gradients(zip([keras.ops.convert_to_tensor(g) for g in grads],
                                      variables))
        steps.append([v.numpy().tolist() for v in variables])
    record = {"class_name": class_name, "config": config, "weights": steps,
              "iterations": int(optimizer.iterations.numpy()),
              "calls": int(optimizer._iterations.numpy()),
              "slots": {v.path.split("/")[-1]: v.numpy().tolist() for v in optimizer.variables
                        if v.shape != ()},  # "w0_momentum": slot momentum of w0
              "scalars": {v.path: float(v.numpy()) for v in optimizer.variables
                          if v.shape == () and "learning_rate" not in v.path}}
    optimizer.finalize_variable_values(variables)
    record["finalized"] = [v.numpy().tolist() for v in variables]
    record["keras_config"] = {k: v for k, v in optimizer.get_config().items()
                              if k != "learning_rate"}
    return record


def schedule(class_name, config):
    made = getattr(keras.optimizers.schedules, class_name)(**config)
    return {"class_name": class_name, "config": config,
            "keras_config": made.get_config(),
            "values": {str(s): float(made(s)) for s in SCHEDULE_STEPS}}


def initializer(key, class_name, config):
    made = getattr(keras.initializers, class_name)(**config)
    kind = "orthogonal" if class_name == "Orthogonal" else (
        "identity" if class_name == "Identity" else "default")
    shapes = [INITIALIZER_SHAPES[kind]] + (
        [INITIALIZER_SHAPES["orthogonal_tall"]] if kind == "orthogonal" else [])
    stats = []
    for shape in shapes:
        x = np.asarray(made(shape, dtype="float32"), np.float64)
        entry = {"shape": shape, "mean": x.mean(), "std": x.std(), "min": x.min(),
                 "max": x.max()}
        if kind == "orthogonal":
            q = x.reshape(-1, shape[-1])
            q = q if q.shape[0] >= q.shape[1] else q.T
            gram = q.T @ q
            gain = config.get("gain", 1.0)
            entry["gram_error"] = float(np.abs(gram - gain ** 2 * np.eye(len(gram))).max())
        if kind == "identity":
            entry["values"] = x.tolist()
        stats.append({k: (float(v) if isinstance(v, np.floating) else v)
                      for k, v in entry.items()})
    return {"class_name": class_name, "config": config, "keras_config": made.get_config(),
            "stats": stats}


def main():
    reference = {
        "keras_version": keras.__version__,
        "steps": STEPS,
        "problem": dict(zip(("start", "curvature", "minimum", "noise"), (
            [w.tolist() for w in part] if i < 3 else [[n.tolist() for n in step] for step in part]
            for i, part in enumerate(problem())))),
        "trajectories": {k: trajectory(*v) for k, v in TRAJECTORIES.items()},
        "schedules": {k: schedule(*v) for k, v in SCHEDULES.items()},
        "initializers": {k: initializer(k, *v) for k, v in INITIALIZERS.items()},
        "optimizer_defaults": {
            name: {k: v for k, v in getattr(keras.optimizers, name)().get_config().items()
                   if k != "name"}
            for name in ("Nadam", "Adamax", "Adadelta", "Lion", "Ftrl")},
    }
    with open(os.path.join(HERE, "keras_optimizers_reference.json"), "w") as f:
        json.dump(reference, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
