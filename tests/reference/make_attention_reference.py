"""Record Keras 3's numbers for the attention layers into attention_reference.json.

For each case of ``MultiHeadAttention``, ``Attention``, ``AdditiveAttention`` and the masked
``Softmax``: the inputs and weights (drawn here with NumPy and set with ``set_weights``), the
outputs and attention scores, the weights' paths and shapes in Keras's order, and the
gradients of ``sum(w1 * output) + sum(w2 * scores)`` with respect to every input and weight.
Then the behaviours that are easy to guess wrong (which scores come before dropout, an
explicit ``query_mask``), and the losses of a small Transformer encoder block (self-attention,
residual, LayerNormalization, feed-forward, post-LN) trained 20 steps with Adam from stored
weights. ``tests/test_attention.py`` replays them without TensorFlow. Run with TensorFlow 2.21
and Keras 3:

    /tmp/tfenv/bin/python tests/reference/make_attention_reference.py
"""
import json
import os

import keras
import numpy as np
import tensorflow as tf

RNG = np.random.default_rng(32)


def draw(*shape):
    return RNG.normal(size=shape).astype(np.float32)


def mask(*shape):
    """Random booleans with at least one True along the last axis."""
    m = RNG.random(shape) < 0.6
    m[..., 0] = True
    return m


MHA = [  # (constructor arguments, query, value, key shapes, call arguments)
    ({"num_heads": 2, "key_dim": 3}, (2, 5, 6), None, None, {}),
    ({"num_heads": 2, "key_dim": 3, "value_dim": 4, "output_shape": 5, "use_bias": False},
     (2, 4, 6), (2, 5, 7), (2, 5, 3), {}),
    ({"num_heads": 3, "key_dim": 2}, (2, 4, 5), (2, 6, 5), None,
     {"attention_mask": mask(2, 4, 6), "use_causal_mask": True}),
    ({"num_heads": 2, "key_dim": 4}, (2, 5, 6), None, None, {"use_causal_mask": True}),
    ({"num_heads": 2, "key_dim": 2}, (2, 4, 6), (2, 5, 6), None,
     {"attention_mask": mask(4, 5)}),
    ({"num_heads": 2, "key_dim": 3}, (2, 4, 6), (2, 5, 6), None, {"value_mask": mask(2, 5)}),
    ({"num_heads": 2, "key_dim": 3, "attention_axes": (1, 2)}, (2, 3, 4, 6), None, None, {}),
    ({"num_heads": 2, "key_dim": 3, "attention_axes": 2, "output_shape": (2, 3)},
     (2, 3, 4, 6), None, None, {}),
    ({"num_heads": 2, "key_dim": 3, "dropout": 0.5}, (2, 4, 6), None, None, {"training": False}),
]
DENSE = [  # (class name, constructor arguments, query, value, key shapes, call arguments)
    ("Attention", {}, (2, 4, 3), (2, 5, 3), None, {}),
    ("Attention", {"use_scale": True}, (2, 4, 3), (2, 5, 3), (2, 5, 3),
     {"mask": [mask(2, 4), mask(2, 5)]}),
    ("Attention", {"score_mode": "concat"}, (2, 4, 3), (2, 5, 3), None,
     {"use_causal_mask": True}),
    ("Attention", {"score_mode": "concat", "use_scale": True}, (2, 4, 3), (2, 5, 3), None,
     {"mask": [None, mask(2, 5)], "use_causal_mask": True}),
    ("AdditiveAttention", {}, (2, 4, 3), (2, 5, 3), None, {"mask": [None, mask(2, 5)]}),
    ("AdditiveAttention", {"use_scale": False}, (2, 4, 3), (2, 5, 3), (2, 5, 3),
     {"mask": [mask(2, 4), None], "use_causal_mask": True}),
]
SOFTMAX = [  # (axis, input shape, mask)
    (-1, (2, 3, 4), mask(2, 3, 4)),
    ([1, 2], (2, 3, 4), mask(3, 4)),
    (1, (2, 3, 4), np.where(mask(2, 3, 4), 0.9, 0.2).astype(np.float32)),
]


def tensor(value):
    value = np.asarray(value)
    return {"tensor": value.tolist(), "dtype": value.dtype.name}


def arguments(call):
    return {k: tensor(v) if isinstance(v, np.ndarray) else
            [None if m is None else tensor(m) for m in v] if isinstance(v, list) else v
            for k, v in call.items()}


def keras_arguments(call):
    return {k: tf.constant(v) if isinstance(v, np.ndarray) else
            [None if m is None else tf.constant(m) for m in v] if isinstance(v, list) else v
            for k, v in call.items()}


def record(layer, call_layer, inputs, call):
    """Outputs, scores and gradients of ``call_layer(inputs, **call)`` with the layer's
    weights set to stored draws."""
    weights = [draw(*w.shape) * 0.5 for w in layer.weights]
    layer.set_weights(weights)
    tensors = [tf.constant(x) for x in inputs]
    with tf.GradientTape() as tape:
        tape.watch(tensors)
        out, scores = call_layer(tensors, keras_arguments(call))
        w_out, w_scores = draw(*out.shape), draw(*scores.shape)
        total = tf.reduce_sum(out * w_out) + tf.reduce_sum(scores * w_scores)
    grads = tape.gradient(total, tensors + list(layer.trainable_variables))
    return {"inputs": [tensor(x) for x in inputs], "call": arguments(call),
            "weights": [tensor(w) for w in weights],
            "paths": [w.path for w in layer.weights], "output": tensor(out.numpy()),
            "scores": tensor(scores.numpy()), "w_output": tensor(w_out),
            "w_scores": tensor(w_scores),
            "input_grads": [tensor(g.numpy()) for g in grads[:len(tensors)]],
            "weight_grads": [tensor(g.numpy()) for g in grads[len(tensors):]]}


def mha_case(config, q_shape, v_shape, k_shape, call):
    layer = keras.layers.MultiHeadAttention(**config)
    inputs = [draw(*q_shape)] + ([draw(*v_shape)] if v_shape else []) + (
        [draw(*k_shape)] if k_shape else [])

    def call_layer(tensors, kwargs):
        query, value = tensors[0], tensors[1] if len(tensors) > 1 else tensors[0]
        key = tensors[2] if len(tensors) > 2 else None
        return layer(query, value, key=key, return_attention_scores=True, **kwargs)
    call_layer([tf.constant(x) for x in inputs], keras_arguments(call))  # builds
    return {"config": config, **record(layer, call_layer, inputs, call)}


def dense_case(name, config, q_shape, v_shape, k_shape, call):
    layer = getattr(keras.layers, name)(**config)
    inputs = [draw(*q_shape), draw(*v_shape)] + ([draw(*k_shape)] if k_shape else [])

    def call_layer(tensors, kwargs):
        return layer(tensors, return_attention_scores=True, **kwargs)
    call_layer([tf.constant(x) for x in inputs], keras_arguments(call))
    return {"layer": name, "config": config, **record(layer, call_layer, inputs, call)}


def softmax_case(axis, shape, m):
    x = draw(*shape) * 3
    out = keras.layers.Softmax(axis=axis)(tf.constant(x), mask=tf.constant(m))
    return {"axis": axis, "input": tensor(x), "mask": tensor(m), "output": tensor(out.numpy())}


def behaviours():
    """Facts about dropout and masks that the tests check our layers against."""
    q = tf.constant(draw(2, 4, 6))
    mha = keras.layers.MultiHeadAttention(2, 3, dropout=0.5, seed=1)
    _, scores = mha(q, q, return_attention_scores=True, training=True)
    attention = keras.layers.Attention(dropout=0.5, seed=1)
    _, weights = attention([q, q], return_attention_scores=True, training=True)
    additive = keras.layers.AdditiveAttention(dropout=0.5, seed=1)
    _, additive_weights = additive([q, q], return_attention_scores=True, training=True)
    plain = keras.layers.MultiHeadAttention(2, 3)
    plain(q, q)
    query_mask = tf.constant(mask(2, 4))
    with_mask = plain(q, q, query_mask=query_mask)
    without = plain(q, q)
    return {
        "mha_scores_sum_to_one_in_training": bool(np.allclose(
            tf.reduce_sum(scores, -1).numpy(), 1, atol=1e-5)),
        "attention_weights_sum_to_one_in_training": bool(np.allclose(
            tf.reduce_sum(weights, -1).numpy(), 1, atol=1e-5)),
        "additive_weights_sum_to_one_in_training": bool(np.allclose(
            tf.reduce_sum(additive_weights, -1).numpy(), 1, atol=1e-5)),
        "attention_weights_have_zeros_in_training": bool((weights.numpy() == 0).any()),
        "explicit_query_mask_changes_mha_output": bool(
            not np.array_equal(with_mask.numpy(), without.numpy())),
    }


# --- a Transformer encoder block trained 20 steps -------------------------------------------------
BATCH, SEQ, DIM, HEADS, FF, CLASSES, STEPS = 8, 6, 8, 2, 16, 3, 20


def encoder_training():
    """Post-LN encoder block (KerasHub's TransformerEncoder arrangement, LayerNormalization
    epsilon 1e-5) over a sequence, mean over positions, Dense to logits; Adam(1e-2)."""
    x = draw(BATCH, SEQ, DIM)
    y = RNG.integers(0, CLASSES, BATCH).astype(np.int32)
    mha = keras.layers.MultiHeadAttention(HEADS, DIM // HEADS)
    norm1 = keras.layers.LayerNormalization(epsilon=1e-5)
    norm2 = keras.layers.LayerNormalization(epsilon=1e-5)
    ff1 = keras.layers.Dense(FF, activation="relu")
    ff2 = keras.layers.Dense(DIM)
    head = keras.layers.Dense(CLASSES)

    def model(inputs):
        h = norm1(inputs + mha(inputs, inputs))
        h = norm2(h + ff2(ff1(h)))
        return head(tf.reduce_mean(h, axis=1))
    model(tf.constant(x))
    order = [mha, norm1, norm2, ff1, ff2, head]  # the TransformerEncoder's order, then the head
    variables = [v for layer in order for v in layer.trainable_variables]
    initial = [draw(*v.shape) * 0.3 if "gamma" not in v.path else
               1 + 0.1 * draw(*v.shape) for v in variables]
    for v, value in zip(variables, initial):
        v.assign(value)
    optimizer = keras.optimizers.Adam(1e-2)
    losses = []
    for _ in range(STEPS):
        with tf.GradientTape() as tape:
            logits = model(tf.constant(x))
            loss = tf.reduce_mean(keras.losses.sparse_categorical_crossentropy(
                y, logits, from_logits=True))
        grads = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(grads, variables))
        losses.append(float(loss))
    return {"x": tensor(x), "y": tensor(y), "initial": [tensor(v) for v in initial],
            "paths": [v.path for v in variables], "losses": losses}


def main():
    keras.utils.set_random_seed(0)
    reference = {
        "keras": keras.__version__, "tensorflow": tf.__version__,
        "mha": [mha_case(*case) for case in MHA],
        "dense": [dense_case(*case) for case in DENSE],
        "softmax": [softmax_case(*case) for case in SOFTMAX],
        "behaviours": behaviours(),
        "encoder": encoder_training(),
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "attention_reference.json")
    with open(path, "w") as f:
        json.dump(reference, f)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
