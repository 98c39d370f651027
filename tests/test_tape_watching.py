"""What the tape watches and answers at its edges, as TensorFlow does (checked with TF 2.21):
a variable read by any op, a target that is itself a source, batch_jacobian's shape rules, and
the refusal to give a gradient through a variable updated since the tape read it, on every path.
"""
import json
from pathlib import Path

import numpy as np
import pytest

import framework as fw


def value(t):
    return None if t is None else t.numpy().tolist()


# --- a variable read by any op is watched ---------------------------------------------------------
REFERENCE = json.loads((Path(__file__).parent / "reference" / "arch_reference.json").read_text())
READS = {
    "argmax": lambda v: fw.argmax(v),
    "argmin": lambda v: fw.argmin(v),
    "comparison": lambda v: v > 1.0,
    "equal": lambda v: fw.equal(v, 2.0),
    "cast to int": lambda v: fw.cast(v, fw.int32),
    "stop_gradient": lambda v: fw.stop_gradient(v),  # TensorFlow's reads it as a constant
}
NOT_DIFFERENTIABLE = {"argmax": "argmax", "argmin": "argmin", "comparison": "greater",
                      "equal": "equal", "cast to int": "cast"}


@pytest.mark.parametrize("name", READS)
def test_a_variable_read_by_any_op_is_watched_as_tensorflow(name):
    v = fw.Variable([[1.0, 2.0], [3.0, 0.5]], name="w")
    with fw.GradientTape() as tape:
        READS[name](v)
    assert len(tape.watched_variables()) == REFERENCE["watched_by_reads"][name]


@pytest.mark.parametrize("name", NOT_DIFFERENTIABLE)
def test_raise_names_the_op_without_gradient(name):
    read, op = READS[name], NOT_DIFFERENTIABLE[name]
    v = fw.Variable([[1.0, 2.0], [3.0, 0.5]], name="w")
    with fw.GradientTape() as tape:
        y = fw.reduce_sum(fw.cast(read(v), fw.float32) * 2.0)
    with pytest.raises(ValueError) as info:
        tape.gradient(y, v, unconnected_gradients="raise")
    message = str(info.value)
    assert f"'{op}'" in message and "not differentiable" in message, message
    assert "watch()" not in message, message


def test_an_op_without_gradient_as_the_target_gives_none():
    v = fw.Variable([1.0, 3.0, 2.0])
    with fw.GradientTape(persistent=True) as tape:
        index = fw.argmax(v)
        mask = v > 1.5
    assert tape.gradient(index, v) is None
    assert tape.gradient(mask, v) is None
    assert value(tape.gradient(mask, v, unconnected_gradients="zero")) == [0.0, 0.0, 0.0]


def test_gradients_beside_an_op_without_gradient_are_unchanged():
    v = fw.Variable([1.0, 3.0, 2.0])
    with fw.GradientTape() as tape:
        picked = fw.cast(fw.argmax(v), fw.float32)
        y = fw.reduce_sum(v * v) + picked
    assert value(tape.gradient(y, v)) == [2.0, 6.0, 4.0]


def test_a_variable_not_read_inside_the_tape_is_explained_without_watch_advice():
    v = fw.Variable(2.0, name="w")
    y = v * 3.0
    with fw.GradientTape() as tape:
        z = y * 2.0
    with pytest.raises(ValueError, match="no op inside the tape read it"):
        tape.gradient(z, v, unconnected_gradients="raise")


# --- a target that is itself a source ---------------------------------------------------------
TF = REFERENCE["target_is_source"]
TF_UNCONNECTED = REFERENCE["unconnected_jacobians"]


def test_the_larger_of_two_variables_by_python_max_has_gradient_one():
    v, w = fw.Variable(2.0), fw.Variable(3.0)
    with fw.GradientTape() as tape:
        y = max([v, w])
    assert [value(g) for g in tape.gradient(y, [v, w])] == TF["python_max"]
    assert set(tape.watched_variables()) == {v, w}


@pytest.mark.parametrize("persistent", [False, True])
def test_a_variable_returned_unchanged_has_gradient_ones(persistent):
    v = fw.Variable([2.0, 3.0])
    with fw.GradientTape(persistent=persistent) as tape:
        y = v if True else v * 2.0  # a branch that returns the variable itself
    assert value(tape.gradient(y, v)) == TF["variable_unchanged"]


def test_a_target_among_sources_adds_its_own_seed():
    x = fw.constant([[1.0, 2.0], [3.0, 4.0]])
    c = fw.constant([1.0, 2.0])
    with fw.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * 2.0
    assert value(tape.gradient([y, x], x)) == TF["target_list_with_source"]
    assert value(tape.gradient(c, c)) == TF["unwatched_constant"]  # never watched: still 1
    assert value(tape.gradient([c, c], c)) == TF["unwatched_constant_twice"]
    assert value(tape.gradient(c, c, output_gradients=fw.constant([5.0, 6.0]))) == \
        TF["with_output_gradients"]
    with fw.GradientTape() as recorded:  # the tensor pass (a tape records it) agrees
        assert value(tape.gradient(x, x)) == [[1.0, 1.0], [1.0, 1.0]]
    del recorded


def test_the_jacobian_of_a_source_by_itself_is_the_identity():
    v = fw.Variable([2.0, 3.0])
    m = fw.Variable([[1.0, 2.0], [3.0, 4.0]])
    with fw.GradientTape(persistent=True) as tape:
        pass
    assert value(tape.jacobian(v, v)) == TF["jacobian_of_itself"]
    assert value(tape.jacobian(v, v, experimental_use_pfor=False)) == \
        TF["jacobian_of_itself_loop"]
    assert value(tape.batch_jacobian(m, m)) == TF["batch_jacobian_of_itself"]


def test_unconnected_jacobians_answer_as_tensorflow():
    """TensorFlow's Jacobians gather rows of the target: of a never-watched constant nothing
    records that, so it is unconnected even to itself (its gradient is ones); batch_jacobian
    answers an unconnected source with zeros, unless asked to raise."""
    expected = TF_UNCONNECTED
    c = fw.constant([1.0, 2.0])
    m = fw.constant([[1.0, 2.0], [3.0, 4.0]])
    a, b = fw.constant([[1.0, 2.0]]), fw.constant([[3.0, 4.0]])
    d = fw.constant(np.ones((2, 3), np.float32))
    with fw.GradientTape(persistent=True) as tape:
        tape.watch([b, d])
        y = a * 2.0
        tape.watch(m)
        z = m * 3.0
    assert value(tape.jacobian(c, c)) == expected["jacobian_of_unwatched_constant"]
    assert value(tape.jacobian(c, c, experimental_use_pfor=False)) == \
        expected["jacobian_of_unwatched_constant_loop"]
    assert value(tape.batch_jacobian(a, a)) == expected["batch_jacobian_of_unwatched_constant"]
    assert value(tape.batch_jacobian(y, b)) == expected["batch_jacobian_unconnected"]
    assert value(tape.batch_jacobian(y, b, experimental_use_pfor=False)) == \
        expected["batch_jacobian_unconnected_loop"]
    assert value(tape.batch_jacobian(z, d)) == \
        expected["batch_jacobian_unconnected_of_tracked_target"]
    assert value(tape.jacobian(z, d)) == expected["jacobian_unconnected"]
    assert expected["batch_jacobian_unconnected_raise"] == "ValueError"
    with pytest.raises(ValueError):
        tape.batch_jacobian(z, d, unconnected_gradients="raise")
    assert value(tape.gradient(c, c)) == TF["unwatched_constant"]  # the gradient: still ones


def test_a_persistent_tape_counts_the_seed_of_a_target_source_once():
    v = fw.Variable(2.0)
    with fw.GradientTape(persistent=True) as tape:
        z = v * v
    assert value(tape.gradient(z, v)) == 4.0
    assert value(tape.gradient(z, z)) == 1.0  # (the first pass's cotangents are reused)
    assert value(tape.gradient(z, z)) == 1.0


# --- batch_jacobian's shapes ----------------------------------------------------------------------
@pytest.mark.parametrize("target_shape, source_shape, message", [
    ((3, 2), (4, 2), r"first dimension of the target shape \(3, 2\) and of the source shape "
                     r"\(4, 2\) must match"),
    ((3,), (3, 2), r"the target has shape \(3,\); it must have rank at least 2"),
    ((3, 2), (3,), r"the source has shape \(3,\); it must have rank at least 2"),
    ((), (3, 2), r"the target has shape \(\); it must have rank at least 2"),
])
def test_batch_jacobian_refuses_shapes_without_a_shared_batch_axis(target_shape, source_shape,
                                                                  message):
    x = fw.constant(np.ones(source_shape, np.float32))
    with fw.GradientTape() as tape:
        tape.watch(x)
        y = fw.reduce_sum(x) * fw.constant(np.ones(target_shape, np.float32))
    with pytest.raises(ValueError, match=message):
        tape.batch_jacobian(y, x)
    assert value(tape.gradient(y, x)) is not None  # a refused call does not use up the tape


@pytest.mark.parametrize("shapes", REFERENCE["batch_jacobian_refusals"])
def test_batch_jacobian_refuses_what_tensorflow_refuses(shapes):
    first, second = shapes.split("] [")
    target_shape, source_shape = tuple(json.loads(first + "]")), tuple(json.loads("[" + second))
    x = fw.constant(np.ones(source_shape, np.float32))
    with fw.GradientTape() as tape:
        tape.watch(x)
        y = fw.reduce_sum(x) * fw.constant(np.ones(target_shape, np.float32))
    try:
        tape.batch_jacobian(y, x)
        refused = None
    except ValueError as error:
        refused = type(error).__name__
    assert refused == REFERENCE["batch_jacobian_refusals"][shapes]


# --- updated variables: the recorded computation's gradient, at the values read -----------------
def _two_layers():
    rng = np.random.default_rng(0)
    w1 = fw.Variable(rng.standard_normal((3, 4)), name="w1")
    w2 = fw.Variable(rng.standard_normal((4, 1)), name="w2")
    x = fw.constant(rng.standard_normal((5, 3)))
    with fw.GradientTape(persistent=True) as tape:
        loss = fw.reduce_sum(fw.matmul(fw.nn.relu(fw.matmul(x, w1)), w2))
    return tape, loss, w1, w2


def _again(tape, loss, sources):
    return tape.gradient(loss, sources)


def _again_recorded(tape, loss, sources):
    with fw.GradientTape():
        return tape.gradient(loss, sources)


def _again_seeded(tape, loss, sources):
    return tape.gradient(loss, sources, output_gradients=fw.constant(2.0, dtype=fw.float64))


def _again_jacobian(tape, loss, sources):
    return tape.jacobian(loss, sources)


@pytest.mark.parametrize("again", [_again, _again_recorded, _again_seeded, _again_jacobian],
                         ids=["gradient", "recorded", "output_gradients", "jacobian"])
@pytest.mark.parametrize("update", ["assign", "apply_gradients"])
def test_a_second_gradient_after_an_update_is_the_recorded_computations(again, update):
    """gradient, then an update, then the same gradient again, by every path: the answer is
    the one before the update (TensorFlow's: the tape differentiates what it recorded)."""
    import optimizers
    tape, loss, w1, w2 = _two_layers()
    before = {len(s): again(tape, loss, s) for s in ([w1, w2], [w2])}
    grads = tape.gradient(loss, [w1, w2])
    if update == "assign":
        w2.assign(w2 * 2.0)
    else:
        optimizers.SGD(0.1).apply_gradients(zip(grads, [w1, w2]))
    for sources in ([w1, w2], [w2]):
        for got, want in zip(again(tape, loss, sources), before[len(sources)], strict=True):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "fw.function"])
def test_gradients_after_an_update_match_tensorflow(compiled):
    """The seed's layer-wise step taken in the wrong order (an optimizer's update before the
    second layer's gradient), and after an assign: TensorFlow's numbers."""
    import optimizers
    tf = REFERENCE["after_an_update"]
    x = fw.constant(np.array(tf["x"]))
    w1, w2 = fw.Variable(np.array(tf["w1"])), fw.Variable(np.array(tf["w2"]))
    sgd = optimizers.SGD(0.5)

    def step():
        with fw.GradientTape(persistent=True) as tape:
            logits = fw.matmul(fw.nn.relu(fw.matmul(x, w1)), w2)
            loss = fw.reduce_sum(fw.nn.softmax(logits) ** 2)
        first = tape.gradient(loss, [w1])
        sgd.apply_gradients(zip(first, [w1]))
        second = tape.gradient(loss, [w1, w2])
        w2.assign(w2 * 3.0)
        return first, second, tape.gradient(loss, [w1, w2])

    run = fw.function(step) if compiled else step
    for _ in range(2):  # (compiled: the trace, then a replay)
        w1.assign(fw.constant(np.array(tf["w1"])))
        w2.assign(fw.constant(np.array(tf["w2"])))
        first, second, third = run()
        np.testing.assert_allclose(first[0].numpy(), tf["first"], rtol=1e-10)
        for got, want in zip(second + third, tf["after_sgd"] + tf["after_assign"],
                             strict=True):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)


def test_a_raw_write_to_a_variable_read_by_a_tape_is_refused():
    tape, loss, w1, w2 = _two_layers()
    w2._value[...] = 0.0  # around assign and the optimizers: the tape cannot know the old value
    w2._mark_updated()
    with pytest.raises(RuntimeError, match="variable 'w2:0' was modified in place on its raw "
                                           "array after the tape used it"):
        tape.gradient(loss, [w1, w2])


def test_an_update_of_a_variable_the_target_does_not_read_is_fine():
    tape, loss, w1, w2 = _two_layers()
    other = fw.Variable(1.0)
    expected = tape.gradient(loss, [w1, w2])
    other.assign(2.0)
    again = tape.gradient(loss, [w1, w2])
    for g, e in zip(again, expected, strict=True):
        assert np.array_equal(g.numpy(), e.numpy())
