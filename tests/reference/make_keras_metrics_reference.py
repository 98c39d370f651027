"""Write keras_metrics_reference.json: Keras 3's numbers for ``fw.metrics`` and ``fw.losses``.

Run it where TensorFlow and Keras 3 are installed (the tests do not need them):
``python tests/reference/make_keras_metrics_reference.py``. Inputs are drawn with NumPy and
stored beside the results, so the tests replay exactly the calls recorded here:

- every metric through several ``update_state`` calls (with and without ``sample_weight``),
  its result after each, then ``reset_state`` and one more call, and its ``get_config()``;
- every loss function's per-example values, and every loss class under each reduction, with
  and without ``sample_weight``, ``from_logits`` and ``label_smoothing``.
"""
import json
import os

import keras
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def inputs():
    rng = np.random.default_rng(17)
    f = np.float32
    binary_true = np.array([0, 1, 1, 0, 1, 0, 1, 1], f)
    # 0.5 exactly (the strict ">" decides), the ends 0 and 1, and values on AUC's thresholds.
    binary_pred = np.array([0.5, 0.5, 0.9, 0.1, 0.3, 0.7, 1.0, 0.0], f)
    binary_pred2 = rng.uniform(0, 1, 8).astype(f)
    labels = rng.integers(0, 5, 6)
    probs = rng.dirichlet(np.ones(5), 6).astype(f)
    probs[0] = [0.2, 0.2, 0.2, 0.2, 0.2]  # ties: top-k counts them all in, argmax takes the first
    logits = rng.normal(0, 2, (6, 5)).astype(f)
    logits[1] = [80.0, -80.0, 0.0, 3.0, -3.0]
    regression_true = rng.normal(0, 1, (6, 3)).astype(f)
    regression_pred = rng.normal(0, 1, (6, 3)).astype(f)
    positive_true = rng.uniform(0, 3, (6, 3)).astype(f)
    positive_pred = rng.uniform(0.01, 3, (6, 3)).astype(f)
    multilabel_true = rng.integers(0, 2, (6, 3)).astype(f)
    multilabel_pred = rng.uniform(0, 1, (6, 3)).astype(f)
    return {
        "binary_true": binary_true, "binary_pred": binary_pred, "binary_pred2": binary_pred2,
        "binary_logits": rng.normal(0, 3, 8).astype(f),
        "labels": labels, "labels2": rng.integers(0, 5, 6), "one_hot": np.eye(5, dtype=f)[labels],
        "probs": probs, "probs2": rng.dirichlet(np.ones(5), 6).astype(f), "logits": logits,
        "regression_true": regression_true, "regression_pred": regression_pred,
        "regression_pred2": rng.normal(0, 1, (6, 3)).astype(f),
        "positive_true": positive_true, "positive_pred": positive_pred,
        "signed_true": np.sign(rng.normal(0, 1, (6, 3))).astype(f),
        "multilabel_true": multilabel_true, "multilabel_pred": multilabel_pred,
        "weights6": np.array([1.0, 0.5, 0.0, 2.0, 1.0, 3.0], f),
        "weights8": np.array([1.0, 0.5, 0.0, 2.0, 1.0, 3.0, 0.25, 1.0], f),
        "weights6x3": rng.uniform(0, 2, (6, 3)).astype(f),
        "values": rng.normal(0, 1, 6).astype(f), "values2d": rng.normal(0, 1, (6, 3)).astype(f),
    }


# name: (class, kwargs, [(y_true key, y_pred key, sample_weight key or None), ...]); the last
# call is repeated after reset_state. Mean and Sum take (values, sample_weight).
METRICS = {
    "mean": ("Mean", {}, [("values", None), ("values2d", None), ("values", "weights6")]),
    "mean_2d_weights": ("Mean", {}, [("values2d", "weights6"), ("values2d", "weights6x3")]),
    "sum": ("Sum", {}, [("values", None), ("values2d", "weights6"), ("values2d", None)]),
    "accuracy": ("Accuracy", {}, [("labels", "labels2", None), ("labels", "labels", "weights6")]),
    "binary_accuracy": ("BinaryAccuracy", {}, [("binary_true", "binary_pred", None),
                                               ("binary_true", "binary_pred2", "weights8")]),
    "binary_accuracy_threshold": ("BinaryAccuracy", {"threshold": 0.3},
                                  [("binary_true", "binary_pred", "weights8")]),
    "categorical_accuracy": ("CategoricalAccuracy", {}, [("one_hot", "probs", None),
                                                         ("one_hot", "probs2", "weights6")]),
    "sparse_categorical_accuracy": ("SparseCategoricalAccuracy", {},
                                    [("labels", "probs", None), ("labels", "logits", "weights6"),
                                     ("labels_column", "probs2", None)]),
    "top_k": ("TopKCategoricalAccuracy", {"k": 2}, [("one_hot", "probs", None),
                                                    ("one_hot", "probs2", "weights6")]),
    "top_k_default": ("TopKCategoricalAccuracy", {}, [("one_hot", "logits", None)]),
    "sparse_top_k": ("SparseTopKCategoricalAccuracy", {"k": 2},
                     [("labels", "probs", None), ("labels", "logits", "weights6")]),
    "mean_squared_error": ("MeanSquaredError", {}, [("regression_true", "regression_pred", None),
                                                    ("regression_true", "regression_pred2",
                                                     "weights6")]),
    "mean_absolute_error": ("MeanAbsoluteError", {}, [
        ("regression_true", "regression_pred", None),
        ("regression_true", "regression_pred2", "weights6")]),
    "root_mean_squared_error": ("RootMeanSquaredError", {}, [
        ("regression_true", "regression_pred", None),
        ("regression_true", "regression_pred2", "weights6x3")]),
    "precision": ("Precision", {}, [("binary_true", "binary_pred", None),
                                    ("binary_true", "binary_pred2", "weights8")]),
    "precision_thresholds": ("Precision", {"thresholds": [0.0, 0.3, 0.5, 0.7, 1.0]},
                             [("binary_true", "binary_pred", None),
                              ("binary_true", "binary_pred2", "weights8")]),
    "precision_even_thresholds": ("Precision", {"thresholds": [0.0, 0.25, 0.5, 0.75, 1.0]},
                                  [("binary_true", "binary_pred", None),
                                   ("multilabel_true", "multilabel_pred", "weights6")]),
    "precision_top_k": ("Precision", {"top_k": 2}, [("multilabel_true", "multilabel_pred", None),
                                                    ("multilabel_true", "multilabel_pred",
                                                     "weights6")]),
    "precision_class_id": ("Precision", {"class_id": 1, "thresholds": 0.4},
                           [("multilabel_true", "multilabel_pred", "weights6")]),
    "recall": ("Recall", {}, [("binary_true", "binary_pred", None),
                              ("binary_true", "binary_pred2", "weights8")]),
    "recall_thresholds": ("Recall", {"thresholds": [0.25, 0.5, 0.75]},
                          [("binary_true", "binary_pred", "weights8"),
                           ("multilabel_true", "multilabel_pred", None)]),
    "recall_even_thresholds": ("Recall", {"thresholds": [0.0, 0.5, 1.0]},
                               [("binary_true", "binary_pred", "weights8")]),
    "recall_top_k_class_id": ("Recall", {"top_k": 2, "class_id": 0},
                              [("multilabel_true", "multilabel_pred", None)]),
    "auc": ("AUC", {}, [("binary_true", "binary_pred", None),
                        ("binary_true", "binary_pred2", "weights8"),
                        ("multilabel_true", "multilabel_pred", None)]),
    "auc_pr": ("AUC", {"curve": "PR"}, [("binary_true", "binary_pred", None),
                                        ("binary_true", "binary_pred2", "weights8")]),
    "auc_few_thresholds": ("AUC", {"num_thresholds": 5}, [("binary_true", "binary_pred2", None),
                                                          ("binary_true", "binary_pred",
                                                           "weights8")]),
    "auc_majoring_pr": ("AUC", {"num_thresholds": 7, "curve": "PR",
                                "summation_method": "majoring"},
                        [("binary_true", "binary_pred2", "weights8")]),
    "auc_minoring": ("AUC", {"summation_method": "minoring"},
                     [("binary_true", "binary_pred2", None)]),
    "auc_given_thresholds": ("AUC", {"thresholds": [0.3, 0.5, 0.6]},
                             [("binary_true", "binary_pred2", None),
                              ("binary_true", "binary_pred", "weights8")]),
    "auc_from_logits": ("AUC", {"from_logits": True},
                        [("binary_true", "binary_logits", None)]),
}


def metric_cases(data):
    cases = {}
    for name, (cls, kwargs, calls) in METRICS.items():
        metric = getattr(keras.metrics, cls)(**kwargs)
        results = []
        for call in calls + [calls[-1]]:
            if len(results) == len(calls):
                metric.reset_state()
            args = [data[key] for key in call[:-1]]
            weight = None if call[-1] is None else data[call[-1]]
            metric.update_state(*args, sample_weight=weight)
            results.append(np.asarray(metric.result()).tolist())
        config = metric.get_config()
        cases[name] = {"class": cls, "kwargs": kwargs, "calls": [list(c) for c in calls],
                       "results": results, "config": config}
    return cases


# name: (function, y_true key, y_pred key, kwargs)
FUNCTIONS = {
    "mean_squared_error": ("mean_squared_error", "regression_true", "regression_pred", {}),
    "mean_absolute_error": ("mean_absolute_error", "regression_true", "regression_pred", {}),
    "mean_absolute_percentage_error": ("mean_absolute_percentage_error", "regression_true",
                                       "regression_pred", {}),
    "mean_squared_logarithmic_error": ("mean_squared_logarithmic_error", "positive_true",
                                       "regression_pred", {}),
    "huber": ("huber", "regression_true", "regression_pred", {}),
    "huber_delta": ("huber", "regression_true", "regression_pred", {"delta": 0.3}),
    "log_cosh": ("log_cosh", "regression_true", "regression_pred", {}),
    "kl_divergence": ("kl_divergence", "probs", "probs2", {}),
    "poisson": ("poisson", "positive_true", "positive_pred", {}),
    "cosine_similarity": ("cosine_similarity", "regression_true", "regression_pred", {}),
    "cosine_similarity_axis0": ("cosine_similarity", "regression_true", "regression_pred",
                                {"axis": 0}),
    "hinge_binary_labels": ("hinge", "multilabel_true", "regression_pred", {}),
    "hinge_signed_labels": ("hinge", "signed_true", "regression_pred", {}),
    "hinge_other_labels": ("hinge", "positive_true", "regression_pred", {}),
    "squared_hinge": ("squared_hinge", "multilabel_true", "regression_pred", {}),
    "categorical_hinge": ("categorical_hinge", "one_hot", "logits", {}),
    "binary_crossentropy": ("binary_crossentropy", "multilabel_true", "multilabel_pred", {}),
    "categorical_crossentropy": ("categorical_crossentropy", "one_hot", "probs", {}),
    "sparse_categorical_crossentropy": ("sparse_categorical_crossentropy", "labels", "probs", {}),
}

# name: (class, kwargs, y_true key, y_pred key)
CLASSES = {
    "MeanSquaredError": ("MeanSquaredError", {}, "regression_true", "regression_pred"),
    "MeanAbsoluteError": ("MeanAbsoluteError", {}, "regression_true", "regression_pred"),
    "MeanAbsolutePercentageError": ("MeanAbsolutePercentageError", {}, "regression_true",
                                    "regression_pred"),
    "MeanSquaredLogarithmicError": ("MeanSquaredLogarithmicError", {}, "positive_true",
                                    "positive_pred"),
    "Huber": ("Huber", {"delta": 0.5}, "regression_true", "regression_pred"),
    "LogCosh": ("LogCosh", {}, "regression_true", "regression_pred"),
    "KLDivergence": ("KLDivergence", {}, "probs", "probs2"),
    "Poisson": ("Poisson", {}, "positive_true", "positive_pred"),
    "CosineSimilarity": ("CosineSimilarity", {}, "regression_true", "regression_pred"),
    "Hinge": ("Hinge", {}, "multilabel_true", "regression_pred"),
    "SquaredHinge": ("SquaredHinge", {}, "signed_true", "regression_pred"),
    "CategoricalHinge": ("CategoricalHinge", {}, "one_hot", "logits"),
    "BinaryCrossentropy": ("BinaryCrossentropy", {}, "multilabel_true", "multilabel_pred"),
    "BinaryCrossentropy_logits": ("BinaryCrossentropy", {"from_logits": True,
                                                         "label_smoothing": 0.2},
                                  "multilabel_true", "regression_pred"),
    "CategoricalCrossentropy": ("CategoricalCrossentropy", {}, "one_hot", "probs"),
    "CategoricalCrossentropy_logits": ("CategoricalCrossentropy", {"from_logits": True,
                                                                   "label_smoothing": 0.1},
                                       "one_hot", "logits"),
    "SparseCategoricalCrossentropy": ("SparseCategoricalCrossentropy", {}, "labels", "probs"),
    "SparseCategoricalCrossentropy_logits": ("SparseCategoricalCrossentropy",
                                             {"from_logits": True}, "labels", "logits"),
}
REDUCTIONS = ["sum_over_batch_size", "sum", "mean", "mean_with_sample_weight", "none", None]


def loss_cases(data):
    functions = {name: np.asarray(getattr(keras.losses, fn)(data[t], data[p], **kw)).tolist()
                 for name, (fn, t, p, kw) in FUNCTIONS.items()}
    classes = {}
    for name, (cls, kwargs, t, p) in CLASSES.items():
        by_reduction = {}
        for reduction in REDUCTIONS:
            loss = getattr(keras.losses, cls)(reduction=reduction, **kwargs)
            by_reduction[str(reduction)] = {
                "plain": np.asarray(loss(data[t], data[p])).tolist(),
                "weighted": np.asarray(loss(data[t], data[p],
                                            sample_weight=data["weights6"])).tolist()}
        classes[name] = {"class": cls, "kwargs": kwargs, "y_true": t, "y_pred": p,
                         "config": getattr(keras.losses, cls)(**kwargs).get_config(),
                         "results": by_reduction}
    return {"functions": functions, "function_args": {n: [fn, t, p, kw] for n, (fn, t, p, kw)
                                                      in FUNCTIONS.items()},
            "classes": classes}


def main():
    data = inputs()
    data["labels_column"] = data["labels"][:, None]
    reference = {"keras_version": keras.__version__,
                 "inputs": {k: v.tolist() for k, v in data.items()},
                 "metrics": metric_cases(data), "losses": loss_cases(data)}
    path = os.path.join(HERE, "keras_metrics_reference.json")
    with open(path, "w") as f:
        json.dump(reference, f, indent=1)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
