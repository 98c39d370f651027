"""The seed's spelling: ``fw.nn.softmax`` in the model, then ``sparse_categorical_crossentropy``
on the probabilities. The loss is one op with Keras's numbers (clip, renormalisation), and a
first-order array pass goes through the softmax in one step (``primitive.Through``) whenever
nobody asks for the probabilities' own gradient: these tests hold that step to the two ops'
VJPs in turn, in every situation where the tape must not take it, or must still be right."""
import numpy as np
import pytest

import framework as fw
from framework.ops import nn as nn_ops
from layers import Dense, Sequential
from optimizers import SGD, Adam


def _composite(labels, p):
    """Keras's formula op by op: clip, log, then the fused cross-entropy on those logits."""
    return fw.nn.sparse_softmax_cross_entropy_with_logits(
        labels, fw.log(fw.clip_by_value(p, 1e-7, 1 - 1e-7)))


def _case(dtype, clipped, rows=20, classes=6, seed=1):
    """Logits (spread wide when ``clipped``: probabilities beyond the clip at both ends)."""
    rng = np.random.default_rng(seed)
    logits = fw.constant((rng.standard_normal((rows, classes)) * (40 if clipped else 2))
                         .astype(dtype))
    labels = fw.constant(rng.integers(0, classes, rows).astype(np.int32))
    return logits, labels


def _loss(labels, p):
    return fw.reduce_mean(fw.losses.sparse_categorical_crossentropy(labels, p))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("clipped", [False, True])
def test_probability_crossentropy_gives_the_composite_numbers(dtype, clipped):
    logits, labels = _case(dtype, clipped)
    results = []
    for loss_fn in (_composite, fw.losses.sparse_categorical_crossentropy):
        with fw.GradientTape() as tape:
            tape.watch(logits)
            loss = fw.reduce_mean(loss_fn(labels, fw.nn.softmax(logits)))
        results.append((loss.numpy(), tape.gradient(loss, logits).numpy()))
    tolerance = 2e-6 if dtype is np.float32 else 1e-12
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=tolerance)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=tolerance * 10,
                               atol=tolerance * np.abs(results[0][1]).max())


def test_probability_crossentropy_derivatives_first_and_second_order():
    labels = fw.constant([0, 2, 1, 1])
    p = fw.constant(np.random.default_rng(2).uniform(0.05, 0.9, (4, 3)))
    fw.test.check_gradients(lambda p: fw.losses.sparse_categorical_crossentropy(labels, p), p,
                            order=2)
    clipped = fw.constant([[0.0, 1.0, 0.3], [0.2, 0.3, 0.6]], dtype=fw.float64)
    with fw.GradientTape() as tape:  # the clip's zero gradient outside [eps, 1 - eps]
        tape.watch(clipped)
        loss = fw.reduce_sum(fw.losses.sparse_categorical_crossentropy([0, 1], clipped))
    raw = tape.gradient(loss, clipped).numpy()
    with fw.GradientTape() as outer:  # recorded: the tensor VJP
        with fw.GradientTape() as tape:
            tape.watch(clipped)
            loss = fw.reduce_sum(fw.losses.sparse_categorical_crossentropy([0, 1], clipped))
        tensor = tape.gradient(loss, clipped).numpy()
    np.testing.assert_allclose(raw, tensor, rtol=1e-12)
    assert raw[0, 0] == 0 and raw[0, 1] == 0


def test_probability_crossentropy_names_a_bad_label():
    if fw.constant(0.0).device != "cpu":
        pytest.skip("on the GPU the label check is skipped, as in TensorFlow's kernel")
    with pytest.raises(ValueError, match="sparse_categorical_crossentropy: received a label "
                                         "value of 3"):
        fw.losses.sparse_categorical_crossentropy([3], fw.constant([[0.5, 0.5]]))


# --- the step through the softmax ---------------------------------------------------------------
def _two_steps(logits, labels, sources, loss_fn=_loss, persistent=False):
    """Gradients for ``sources(logits, p)`` of ``loss_fn(labels, p)`` with ``p`` the softmax."""
    with fw.GradientTape(persistent=persistent) as tape:
        tape.watch(logits)
        p = fw.nn.softmax(logits)
        loss = loss_fn(labels, p)
    return tape, loss, p, tape.gradient(loss, sources(logits, p))


def test_a_training_step_takes_the_step_and_skips_the_softmax_vjp(monkeypatch):
    logits, labels = _case(np.float32, False)
    softmax = nn_ops._softmax.primitive

    def refuse(*args, **kwargs):
        raise AssertionError("the softmax's own VJP ran")

    monkeypatch.setattr(softmax, "array_vjp", refuse)
    monkeypatch.setattr(softmax, "host_array_vjp", refuse)
    _, _, _, (gz,) = _two_steps(logits, labels, lambda z, p: [z])
    assert gz.shape == logits.shape
    with pytest.raises(AssertionError, match="own VJP ran"):  # asked for p: the two VJPs
        _two_steps(logits, labels, lambda z, p: [z, p])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("clipped", [False, True])
def test_the_step_through_the_softmax_equals_the_two_vjps(dtype, clipped):
    logits, labels = _case(dtype, clipped)
    # Asked for the probabilities too, the pass takes the loss's VJP and the softmax's in turn.
    _, _, _, (through,) = _two_steps(logits, labels, lambda z, p: [z])
    _, _, _, (apart, _) = _two_steps(logits, labels, lambda z, p: [z, p])
    if dtype is np.float64:
        np.testing.assert_allclose(through.numpy(), apart.numpy(), rtol=1e-12, atol=1e-15)
    else:
        np.testing.assert_allclose(through.numpy(), apart.numpy(), rtol=1e-5,
                                   atol=1e-6 * np.abs(apart.numpy()).max())
    if clipped:  # (the clip is active somewhere: the masked path was taken)
        p = fw.nn.softmax(logits).numpy()
        assert (p < 1e-7).any() and (p > 1 - 1e-7).any()


def test_the_probabilities_gradient_is_there_when_asked():
    logits, labels = _case(np.float64, False)
    _, _, p, (gp,) = _two_steps(logits, labels, lambda z, p: [p])
    with fw.GradientTape() as outer:  # the tensor VJPs (recorded: no array pass, no step)
        with fw.GradientTape() as tape:
            tape.watch(p)
            loss = _loss(labels, p)
        tensor = tape.gradient(loss, p)
    np.testing.assert_allclose(gp.numpy(), tensor.numpy(), rtol=1e-12)
    fw.test.check_gradients(lambda p: _loss(labels, p), p)


def test_another_consumer_of_the_probabilities_still_reaches_the_logits():
    logits, labels = _case(np.float64, False)

    def both(labels, p):  # a second use of p beside the loss
        return _loss(labels, p) + fw.reduce_sum(p * p) * 0.25

    _, _, _, (through,) = _two_steps(logits, labels, lambda z, p: [z], both)
    _, _, _, (apart, _) = _two_steps(logits, labels, lambda z, p: [z, p], both)
    np.testing.assert_allclose(through.numpy(), apart.numpy(), rtol=1e-12, atol=1e-15)
    fw.test.check_gradients(lambda z: both(labels, fw.nn.softmax(z)), logits)


def test_a_persistent_tape_answers_for_the_probabilities_after_the_step():
    """The second gradient reuses the first pass's cotangents, which must not hold a partial
    one for the probabilities (the step went past them)."""
    logits, labels = _case(np.float64, False)

    def both(labels, p):
        return _loss(labels, p) + fw.reduce_sum(p * p) * 0.25

    tape, loss, p, (gz,) = _two_steps(logits, labels, lambda z, p: [z], both, persistent=True)
    gp = tape.gradient(loss, p)
    gz_again = tape.gradient(loss, logits)
    _, _, _, (expected_z, expected_p) = _two_steps(logits, labels, lambda z, p: [z, p], both)
    np.testing.assert_allclose(gp.numpy(), expected_p.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gz.numpy(), expected_z.numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(gz_again.numpy(), gz.numpy())


def test_no_step_when_the_softmax_is_not_the_loss_input_just_before():
    logits, labels = _case(np.float64, False)
    # softmax over the batch axis: its Jacobian differs, the step must not apply
    with fw.GradientTape() as tape:
        tape.watch(logits)
        loss = _loss(labels, fw.nn.softmax(logits, axis=0))
    got = tape.gradient(loss, logits)
    fw.test.check_gradients(lambda z: _loss(labels, fw.nn.softmax(z, axis=0)), logits)
    # an op between the softmax and the loss
    fw.test.check_gradients(lambda z: _loss(labels, fw.nn.softmax(z) * 0.5 + 0.25), logits)
    assert got.shape == logits.shape


def test_a_jacobian_through_the_softmax_and_loss():
    logits, labels = _case(np.float64, False, rows=4, classes=3)
    with fw.GradientTape(persistent=True) as tape:
        tape.watch(logits)
        per_example = fw.losses.sparse_categorical_crossentropy(labels, fw.nn.softmax(logits))
    jacobian = tape.jacobian(per_example, logits).numpy()
    rows = [tape.gradient(per_example, logits, output_gradients=fw.constant(np.eye(4)[i]))
            .numpy() for i in range(4)]
    np.testing.assert_allclose(jacobian, np.stack(rows), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("clipped", [False, True])
def test_the_layer_wise_step_equals_the_logits_loss_and_fw_function(clipped):
    """The seed example's step: one persistent tape, one optimizer per layer. Eager through
    the softmax, and the same step under fw.function, bit for bit; the logits loss within
    float32 rounding (Keras's clip is inactive when nothing saturates)."""
    rng = np.random.default_rng(5)
    x = fw.constant((rng.standard_normal((32, 8)) * (30 if clipped else 1)).astype(np.float32))
    y = fw.constant(rng.integers(0, 4, 32).astype(np.int32))

    def train(compiled, from_logits):
        model = Sequential([Dense(16, activation="relu"), Dense(4)])
        model(x)
        for layer in model.layers:
            layer.set_weights([np.full(w.shape, 0.1, np.float32) * np.sign(
                np.sin(np.arange(w.size))).reshape(w.shape).astype(np.float32)
                for w in layer.get_weights()])
        optimizers = [Adam(1e-2), SGD(0.1)]

        def step():
            with fw.GradientTape(persistent=True) as tape:
                if from_logits:
                    per_example = fw.losses.sparse_categorical_crossentropy(
                        y, model(x), from_logits=True)
                else:
                    per_example = fw.losses.sparse_categorical_crossentropy(
                        y, fw.nn.softmax(model(x)))
                loss = fw.reduce_mean(per_example)
            for layer, opt in zip(model.layers, optimizers):
                grads = tape.gradient(loss, layer.trainable_variables)
                opt.apply_gradients(zip(grads, layer.trainable_variables))
            return loss

        run = fw.function(step) if compiled else step
        losses = [float(run()) for _ in range(10)]
        return losses, [w.numpy() for w in model.variables]

    eager, compiled = train(False, False), train(True, False)
    assert eager[0] == compiled[0]
    for a, b in zip(eager[1], compiled[1]):
        np.testing.assert_array_equal(a, b)
    if not clipped:
        logits_loss = train(False, True)
        np.testing.assert_allclose(eager[0], logits_loss[0], rtol=2e-5)


@pytest.mark.parametrize("from_logits", [False, True])
def test_a_compiled_step_checks_every_calls_labels_and_updates_nothing_on_a_bad_one(from_logits):
    """The label range is checked on every replay, before the update, as TensorFlow's CPU
    kernel checks it on every run (it was once checked at trace time only)."""
    if fw.constant(0.0).device != "cpu":
        pytest.skip("on the GPU the label check is skipped, as in TensorFlow's kernel")
    x = fw.constant(np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32))
    model = Sequential([Dense(3)])
    opt = SGD(0.1)

    @fw.function
    def step(y):
        with fw.GradientTape() as tape:
            out = model(x) if from_logits else fw.nn.softmax(model(x))
            loss = fw.reduce_mean(fw.losses.sparse_categorical_crossentropy(
                y, out, from_logits=from_logits))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    step(fw.constant([0, 1, 2, 0]))
    before = [v.numpy().copy() for v in model.variables]
    for bad, value in (([0, 1, 3, 0], 3), ([0, -1, 2, 0], -1)):
        with pytest.raises(ValueError, match=f"received a label value of {value} which is "
                                             f"outside the valid range"):
            step(fw.constant(bad))
        for a, b in zip(before, model.variables):
            np.testing.assert_array_equal(a, b.numpy())
    step(fw.constant([2, 1, 0, 0]))
    assert step.experimental_get_tracing_count() == 1 and int(opt.iterations) == 2
