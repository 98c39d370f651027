"""MultiHeadAttention, Attention, AdditiveAttention, the masked Softmax and a Transformer encoder
block against Keras 3's recorded numbers (tests/reference/make_attention_reference.py): outputs,
scores, weight paths and order, gradients for inputs and weights, the dropout and mask
behaviours, 20 training steps; float64 finite differences at orders 1 and 2; fw.function equal
to eager on a second call with other inputs; bad input as one line."""
import json
import pathlib

import numpy as np
import pytest

import framework as fw
import layers
from framework.ops.fused import masked_softmax
from framework.test import check_gradients
from layers import AdditiveAttention, Attention, MultiHeadAttention, Softmax, TransformerEncoder
from optimizers import Adam

REFERENCE = json.loads((pathlib.Path(__file__).parent / "reference"
                        / "attention_reference.json").read_text())
TOL = {"rtol": 2e-4, "atol": 2e-5}


def array(spec):
    return np.asarray(spec["tensor"], dtype=spec["dtype"])


def call_arguments(spec):
    return {k: array(v) if isinstance(v, dict) else
            [None if m is None else array(m) for m in v] if isinstance(v, list) else v
            for k, v in spec.items()}


def check_case(case, layer, call_layer):
    inputs = [fw.constant(array(x)) for x in case["inputs"]]
    kwargs = call_arguments(case["call"])
    call_layer(inputs, kwargs)  # builds
    assert [v.path.split("/", 1)[1] for v in layer.weights] == [
        p.split("/", 1)[1] for p in case["paths"]]
    layer.set_weights([array(w) for w in case["weights"]])
    with fw.GradientTape() as tape:
        tape.watch(inputs)
        out, scores = call_layer(inputs, kwargs)
        total = (fw.reduce_sum(out * array(case["w_output"]))
                 + fw.reduce_sum(scores * array(case["w_scores"])))
    grads = tape.gradient(total, inputs + layer.trainable_variables)
    np.testing.assert_allclose(out.numpy(), array(case["output"]), **TOL)
    np.testing.assert_allclose(scores.numpy(), array(case["scores"]), **TOL)
    for got, want in zip(grads, case["input_grads"] + case["weight_grads"], strict=True):
        np.testing.assert_allclose(got.numpy(), array(want), **TOL)


def mha_call(layer):
    def call(tensors, kwargs):
        query, value = tensors[0], tensors[1] if len(tensors) > 1 else tensors[0]
        key = tensors[2] if len(tensors) > 2 else None
        return layer(query, value, key=key, return_attention_scores=True, **kwargs)
    return call


@pytest.mark.parametrize("case", REFERENCE["mha"], ids=lambda c: json.dumps(c["config"]))
def test_multi_head_attention_matches_keras(case):
    layer = MultiHeadAttention(**case["config"])
    check_case(case, layer, mha_call(layer))


@pytest.mark.parametrize("case", REFERENCE["dense"],
                         ids=lambda c: c["layer"] + json.dumps(c["config"]))
def test_attention_and_additive_attention_match_keras(case):
    layer = getattr(layers, case["layer"])(**case["config"])
    check_case(case, layer,
               lambda tensors, kwargs: layer(tensors, return_attention_scores=True, **kwargs))


@pytest.mark.parametrize("case", REFERENCE["softmax"], ids=lambda c: str(c["axis"]))
def test_softmax_with_a_mask_matches_keras(case):
    out = Softmax(axis=case["axis"])(fw.constant(array(case["input"])),
                                     mask=array(case["mask"]))
    np.testing.assert_allclose(out.numpy(), array(case["output"]), rtol=1e-6, atol=1e-7)


def test_which_scores_come_before_dropout_is_keras():
    facts = REFERENCE["behaviours"]
    q = fw.constant(np.random.default_rng(0).normal(size=(2, 4, 6)).astype(np.float32))
    _, scores = MultiHeadAttention(2, 3, dropout=0.5, seed=1)(
        q, q, return_attention_scores=True, training=True)
    _, weights = Attention(dropout=0.5, seed=1)([q, q], return_attention_scores=True,
                                                training=True)
    _, additive = AdditiveAttention(dropout=0.5, seed=1)([q, q], return_attention_scores=True,
                                                         training=True)
    sums_to_one = lambda s: bool(np.allclose(s.numpy().sum(-1), 1, atol=1e-5))  # noqa: E731
    assert sums_to_one(scores) == facts["mha_scores_sum_to_one_in_training"]
    assert sums_to_one(weights) == facts["attention_weights_sum_to_one_in_training"]
    assert sums_to_one(additive) == facts["additive_weights_sum_to_one_in_training"]
    assert bool((weights.numpy() == 0).any()) == facts["attention_weights_have_zeros_in_training"]


def test_an_explicit_query_mask_is_ignored_as_in_keras():
    assert not REFERENCE["behaviours"]["explicit_query_mask_changes_mha_output"]
    q = fw.constant(np.random.default_rng(1).normal(size=(2, 4, 6)).astype(np.float32))
    layer = MultiHeadAttention(2, 3)
    plain = layer(q, q)
    masked = layer(q, q, query_mask=np.array([[True, False, True, True]] * 2))
    np.testing.assert_array_equal(plain.numpy(), masked.numpy())


# --- finite differences in float64 --------------------------------------------------------------
def _draw(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


@pytest.mark.parametrize("axes,fill", [((-1,), True), ((1, 2), True), ((-1,), False)])
def test_masked_softmax_derivatives_at_orders_1_and_2(axes, fill):
    mask = np.random.default_rng(2).random((2, 3, 4)) < 0.6
    mask[..., 0] = True
    check_gradients(lambda x: masked_softmax(x, mask, axes, fill=fill), _draw(2, 3, 4), order=2)
    check_gradients(lambda x: masked_softmax(x, None, axes), _draw(2, 3, 4), order=2)


def _float64(layer_class, *args, **kwargs):
    return layer_class(*args, dtype="float64", **kwargs)


MHA_FD = [
    ({"num_heads": 2, "key_dim": 2}, {"use_causal_mask": True}),
    ({"num_heads": 2, "key_dim": 2, "value_dim": 3, "output_shape": 4},
     {"attention_mask": np.array([[1, 1, 0], [1, 0, 1], [1, 1, 1]], bool)}),
    ({"num_heads": 1, "key_dim": 2, "attention_axes": (1, 2)}, {}),
]


@pytest.mark.parametrize("config,call", MHA_FD, ids=lambda c: str(c))
def test_multi_head_attention_derivatives_at_orders_1_and_2(config, call):
    layer = _float64(MultiHeadAttention, **config)
    shape = (2, 2, 3, 3) if "attention_axes" in config else (2, 3, 3)
    query, value = _draw(*shape), _draw(*shape, seed=1)
    layer(fw.constant(query), fw.constant(value), **call)
    check_gradients(lambda q, v: layer(q, v, **call), query, value, order=2)


@pytest.mark.parametrize("layer", [
    lambda: _float64(Attention, use_scale=True), lambda: _float64(Attention, score_mode="concat"),
    lambda: _float64(AdditiveAttention)])
def test_dense_attention_derivatives_at_orders_1_and_2(layer):
    layer = layer()
    value_mask = np.array([[True, True, False, True], [True, False, True, True]])
    query, value = _draw(2, 3, 3), _draw(2, 4, 3, seed=1)
    call = {"mask": [None, value_mask], "use_causal_mask": True}
    layer([fw.constant(query), fw.constant(value)], **call)
    check_gradients(lambda q, v: layer([q, v], **call), query, value, order=2)


# --- fw.function ---------------------------------------------------------------------------------
def test_attention_layers_under_fw_function_follow_their_inputs():
    mha, attention = MultiHeadAttention(2, 3), AdditiveAttention()
    rng = np.random.default_rng(3)
    mask = fw.constant(rng.random((2, 4, 5)) < 0.7)

    def eager(q, v):
        return (mha(q, v, attention_mask=mask, use_causal_mask=True),
                attention([q, v[:, :4]], mask=[None, mask[:, 0, :4]]))
    compiled = fw.function(eager)
    for seed in (4, 5):  # the second call: other inputs, the same trace
        q = fw.constant(np.random.default_rng(seed).normal(size=(2, 4, 6)).astype(np.float32))
        v = fw.constant(np.random.default_rng(seed + 9).normal(size=(2, 5, 6)).astype(np.float32))
        for got, want in zip(compiled(q, v), eager(q, v)):
            np.testing.assert_array_equal(got.numpy(), want.numpy())


# --- a Transformer encoder block trained 20 steps ------------------------------------------------
def _encoder_losses(compile_step):
    spec = REFERENCE["encoder"]
    x, y = fw.constant(array(spec["x"])), fw.constant(array(spec["y"]))
    encoder, head = TransformerEncoder(16, 2), layers.Dense(3)
    model = layers.Sequential([encoder, layers.GlobalAveragePooling1D(), head])
    model(x)
    assert len(model.variables) == len(spec["initial"])
    model.set_weights([array(value) for value in spec["initial"]])
    optimizer = Adam(1e-2)

    def step(x, y):
        with fw.GradientTape() as tape:
            loss = fw.reduce_mean(fw.losses.sparse_categorical_crossentropy(
                y, model(x, training=True), from_logits=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
    step = fw.function(step) if compile_step else step
    return [float(step(x, y)) for _ in range(len(spec["losses"]))]


def test_a_transformer_encoder_trains_as_keras_eagerly_and_under_fw_function():
    eager, compiled = _encoder_losses(False), _encoder_losses(True)
    assert eager == compiled  # bit for bit
    np.testing.assert_allclose(eager, REFERENCE["encoder"]["losses"], rtol=2e-4, atol=1e-5)


def test_transformer_encoder_masks_padded_positions():
    encoder = TransformerEncoder(8, 2)
    x = np.random.default_rng(6).normal(size=(1, 4, 4)).astype(np.float32)
    padded = x.copy()
    padded[0, 3] = 100.0
    keep = np.array([[True, True, True, False]])
    a, b = encoder(x, padding_mask=keep), encoder(padded, padding_mask=keep)
    np.testing.assert_allclose(a.numpy()[0, :3], b.numpy()[0, :3], rtol=1e-5, atol=1e-6)


# --- bad input -----------------------------------------------------------------------------------
def _one_line(fn, match):
    with pytest.raises(ValueError, match=match) as error:
        fn()
    assert "\n" not in str(error.value)


def test_bad_input_is_one_line_naming_the_layer():
    _one_line(lambda: MultiHeadAttention(num_heads=2), "MultiHeadAttention: key_dim must be a "
                                                      "positive integer")
    q, v = fw.zeros((2, 4, 6)), fw.zeros((2, 5, 6))
    layer = MultiHeadAttention(2, 3, name="mha")
    before = layer(q, v).numpy()
    _one_line(lambda: layer(q, v, attention_mask=np.ones((2, 5, 4), bool)),
              r"MultiHeadAttention 'mha': attention_mask must have shape \(2, 4, 5\)")
    _one_line(lambda: layer(q, v, value_mask=np.ones((2, 4), bool)),
              r"MultiHeadAttention 'mha': value_mask must have shape \(2, 5\)")
    _one_line(lambda: MultiHeadAttention(2, 3)(q), "value is missing")
    _one_line(lambda: Attention(name="att")([q, v], mask=[None, np.ones((2, 4), bool)]),
              r"Attention 'att': value_mask must have shape \(2, 5\)")
    _one_line(lambda: AdditiveAttention()(q), "is called on a list")
    _one_line(lambda: Softmax(name="s")(q, mask=np.ones((3, 6), bool)),
              r"Softmax 's': the mask must broadcast")
    np.testing.assert_array_equal(layer(q, v).numpy(), before)  # the refusals changed nothing


def test_the_config_names_and_round_trip():
    for name in ("multi_head_attention", "attention", "additive_attention",
                 "transformer_encoder"):
        assert name in layers.LAYERS
    layer = MultiHeadAttention(2, 3, value_dim=4, output_shape=5, dropout=0.1)
    again = MultiHeadAttention.from_config(layer.get_config())
    assert again.get_config() == {**layer.get_config(), "name": again.name}
    assert layer.compute_output_shape((None, 7, 6)) == (None, 7, 5)


def test_attention_layers_in_functional_models():
    query, value = layers.Input((4, 6)), layers.Input((5, 6))
    mha = MultiHeadAttention(2, 3)
    out, scores = mha(query, value, return_attention_scores=True)
    pooled = layers.GlobalAveragePooling1D()(Attention()([out, value]))
    model = layers.Model([query, value], [pooled, scores])
    q = np.random.default_rng(7).normal(size=(2, 4, 6)).astype(np.float32)
    v = np.random.default_rng(8).normal(size=(2, 5, 6)).astype(np.float32)
    got_pooled, got_scores = model([q, v])
    assert got_pooled.shape == (2, 6) and got_scores.shape == (2, 2, 4, 5)
    np.testing.assert_array_equal(got_scores.numpy(),
                                  mha(q, v, return_attention_scores=True)[1].numpy())


def test_the_output_mask_is_the_querys_as_in_keras():
    q = fw.zeros((2, 4, 6))
    query_mask = fw.constant(np.array([[True, True, False, False]] * 2))
    attention = Attention()
    assert attention.compute_mask([q, q], [None, query_mask]) is None
    np.testing.assert_array_equal(
        attention.compute_mask([q, q], [query_mask, None]).numpy(), query_mask.numpy())
    assert MultiHeadAttention(2, 3).compute_mask(q, query_mask) is query_mask
    assert all(layer.supports_masking for layer in (attention, AdditiveAttention(),
                                                     MultiHeadAttention(2, 3),
                                                     TransformerEncoder(8, 2)))


def test_attention_dropout_draws_fresh_masks_in_training_only_under_fw_function():
    layer = MultiHeadAttention(2, 3, dropout=0.5)
    q = fw.constant(np.random.default_rng(9).normal(size=(2, 4, 6)).astype(np.float32))
    inference = layer(q, q).numpy()
    compiled = fw.function(lambda x: layer(x, x, training=True))
    first, second = compiled(q).numpy(), compiled(q).numpy()
    assert not np.array_equal(first, second) and not np.array_equal(first, inference)
    np.testing.assert_array_equal(fw.function(lambda x: layer(x, x))(q).numpy(), inference)
