"""fw.function: tf.function's semantics (tracing, retracing, side effects, variables, random,
branches, tapes and optimizers inside) and replays equal to eager steps."""
import gc
import os
import weakref

import numpy as np
import pytest

import framework as fw
from framework.tracing.tracer import TraceError
from free_sizes import traces
from layers import Dense, Dropout, Sequential
from optimizers import SGD, Adam
from optimizers.schedules import ExponentialDecay


def _data(rows=16, seed=0):
    rng = np.random.default_rng(seed)
    x = fw.constant(rng.standard_normal((rows, 4)).astype(np.float32))
    y = fw.constant(rng.integers(0, 3, rows).astype(np.int32))
    return x, y


@pytest.mark.trace_counts
def test_traced_once_per_signature_and_side_effects_at_trace_time_only():
    printed = []

    @fw.function
    def f(x):
        printed.append("traced")
        return x * 2.0

    a = fw.constant([1.0, 2.0])
    for _ in range(3):
        np.testing.assert_array_equal(f(a).numpy(), [2.0, 4.0])
    assert f.experimental_get_tracing_count() == 1 and printed == ["traced"]
    np.testing.assert_array_equal(f(fw.constant([3.0, 4.0])).numpy(), [6.0, 8.0])
    assert f.experimental_get_tracing_count() == 1
    f(fw.constant([1.0, 2.0, 3.0]))  # a new shape
    f(fw.constant([1.0, 2.0], dtype=fw.float64))  # a new dtype
    assert f.experimental_get_tracing_count() == 3


def test_python_values_are_part_of_the_signature():
    @fw.function
    def f(x, scale):
        return x * scale

    x = fw.constant([1.0])
    assert f(x, 2.0).numpy()[0] == 2.0 and f(x, 3.0).numpy()[0] == 3.0
    assert f(x, 2.0).numpy()[0] == 2.0
    assert f.experimental_get_tracing_count() == 2


def test_numpy_arrays_are_inputs_not_constants():
    @fw.function
    def f(x):
        return fw.reduce_sum(x)

    assert float(f(np.ones(3, np.float32))) == 3.0
    assert float(f(np.full(3, 2.0, np.float32))) == 6.0
    assert f.experimental_get_tracing_count() == 1


def test_input_signature_with_none_dimensions():
    @fw.function(input_signature=[fw.TensorSpec(shape=[None, 4], dtype=fw.float32)],
                 reduce_retracing=True, jit_compile=False)
    def f(x):
        return fw.reduce_sum(x, axis=1)

    assert f(np.ones((2, 4), np.float32)).shape == (2,)
    assert f(np.ones((5, 4), np.float32)).shape == (5,)
    np.testing.assert_array_equal(f(np.full((2, 4), 2.0, np.float32)).numpy(), [8.0, 8.0])
    np.testing.assert_array_equal(f(np.ones((1, 4), np.float64)).numpy(), [4.0])  # converted
    # one trace serves every size above 1 (tests/test_function_shapes.py); 1 is its own
    assert traces(f, 2, 3)
    with pytest.raises(TypeError, match="input_signature"):
        f(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="input_signature"):
        f(fw.ones([2, 4], dtype=fw.float64))
    with pytest.raises(TypeError, match="takes 1 arguments"):
        f(np.ones((2, 4), np.float32), np.ones((2, 4), np.float32))
    with pytest.raises(TypeError, match="TensorSpec"):
        fw.function(lambda x: x, input_signature=[(None, 4)])


def test_a_python_branch_on_a_tensor_is_right_for_both_branches():
    @fw.function
    def f(x):
        if fw.reduce_sum(x) > 0:
            return x * 2.0
        return -x

    pos, neg = fw.constant([1.0, 2.0]), fw.constant([-1.0, -2.0])
    for _ in range(2):
        np.testing.assert_array_equal(f(pos).numpy(), [2.0, 4.0])
        np.testing.assert_array_equal(f(neg).numpy(), [1.0, 2.0])
    assert f.experimental_get_tracing_count() == 2  # one per branch, then replays


def test_cond_and_while_loop_eager_and_traced():
    def g(x, n):
        y = fw.cond(x > 0, lambda: x + 1.0, lambda: x - 1.0)
        i, total = fw.while_loop(lambda i, t: i < n, lambda i, t: (i + 1, t + y),
                                 [fw.constant(0), fw.constant(0.0)])
        return total

    f = fw.function(g)
    for x, n in ((2.0, 3), (-2.0, 3), (2.0, 5), (2.0, 3)):
        eager = g(fw.constant(x), fw.constant(n)).numpy()
        assert f(fw.constant(x), fw.constant(n)).numpy() == eager
    assert fw.while_loop(lambda v: v < 10, lambda v: v * 2, fw.constant(1)).numpy() == 16
    assert fw.while_loop(lambda v: v < 10, lambda v: v + 1, 0, maximum_iterations=3) == 3


def test_numpy_inside_a_trace_names_the_line():
    @fw.function
    def f(x):
        return float(fw.reduce_sum(x))

    with pytest.raises(TraceError, match=os.path.basename(__file__) + r":\d+: .*numpy"):
        f(fw.constant([1.0]))

    @fw.function
    def g(x):
        return x.numpy()

    with pytest.raises(TraceError, match="return the tensor"):
        g(fw.constant([1.0]))


def test_a_captured_constant_may_be_read_by_value():
    c = fw.constant(3.0)

    @fw.function
    def f(x):
        return x * float(c)

    assert f(fw.constant(2.0)).numpy() == 6.0


def test_variables_persist_and_are_created_on_the_first_trace_only():
    counter = fw.Variable(0.0)

    @fw.function
    def bump(x):
        counter.assign_add(x)
        return counter.read_value()

    for i in range(1, 5):
        assert bump(fw.constant(1.0)).numpy() == i
    assert counter.numpy() == 4.0

    model = Sequential([Dense(3)])

    @fw.function
    def call(x):
        return model(x)

    out = call(fw.constant(np.ones((2, 4), np.float32)))  # builds the model while tracing
    assert len(model.variables) == 2 and out.shape == (2, 3)
    np.testing.assert_array_equal(call(fw.constant(np.ones((2, 4), np.float32))).numpy(),
                                  out.numpy())

    @fw.function
    def make(x):
        return fw.Variable(x) * 2.0

    make(fw.constant(1.0))
    with pytest.raises(ValueError, match="first call only"):
        make(fw.constant([1.0, 2.0]))


def test_random_draws_are_fresh_on_every_call_and_follow_the_seed():
    def draw():
        return fw.random.normal([3])

    f = fw.function(draw)
    fw.random.set_seed(5)
    traced = [f().numpy() for _ in range(3)]
    fw.random.set_seed(5)
    eager = [draw().numpy() for _ in range(3)]
    assert not np.array_equal(traced[0], traced[1])
    for a, b in zip(traced, eager):
        np.testing.assert_array_equal(a, b)


def test_dropout_draws_a_new_mask_on_every_call():
    layer = Dropout(0.5)

    @fw.function
    def f(x):
        return layer(x, training=True)

    x = fw.ones([64])
    assert not np.array_equal(f(x).numpy(), f(x).numpy())


def test_persistent_nested_tapes_and_jacobians_inside():
    @fw.function
    def f(x):
        with fw.GradientTape() as outer:
            outer.watch(x)
            with fw.GradientTape(persistent=True) as inner:
                inner.watch(x)
                y = x * x * x
            dy = inner.gradient(y, x)
            dy_again = inner.gradient(y, x)
        d2y = outer.gradient(dy, x)
        with fw.GradientTape() as tape:
            tape.watch(x)
            z = x * x
        return dy, dy_again, d2y, tape.jacobian(z, x)

    for value in (2.0, 3.0):
        x = fw.constant([value, 1.0])
        dy, dy_again, d2y, jac = f(x)
        np.testing.assert_allclose(dy.numpy(), 3 * x.numpy() ** 2)
        np.testing.assert_allclose(dy_again.numpy(), dy.numpy())
        np.testing.assert_allclose(d2y.numpy(), 6 * x.numpy())
        np.testing.assert_allclose(jac.numpy(), np.diag(2 * x.numpy()))
    assert f.experimental_get_tracing_count() == 1


def test_custom_gradient_inside():
    @fw.custom_gradient
    def clip_grad(x):
        return fw.identity(x) * 1.0, lambda g: g * 0.5

    @fw.function
    def f(x):
        with fw.GradientTape() as tape:
            tape.watch(x)
            y = clip_grad(x * x)
        return tape.gradient(y, x)

    for value in (1.0, 3.0):
        assert f(fw.constant(value)).numpy() == value  # 2x * 0.5


def test_optimizer_state_and_schedules_advance_on_every_call():
    var = fw.Variable([1.0, 2.0])
    opt = Adam(ExponentialDecay(0.1, decay_steps=1, decay_rate=0.5))

    @fw.function
    def step():
        with fw.GradientTape() as tape:
            loss = fw.reduce_sum(var * var)
        opt.apply_gradients(zip([tape.gradient(loss, var)], [var]))
        return loss

    rates = []
    for _ in range(4):
        rates.append(opt.learning_rate)
        step()
    assert int(opt.iterations) == 4
    assert rates == pytest.approx([0.1, 0.05, 0.025, 0.0125], rel=1e-6)
    assert float(fw.reduce_sum(opt.get_slot(var, "momentum"))) != 0.0


def _train(compiled, two_optimizers, steps=20):
    fw.random.set_seed(3)
    x, y = _data()
    model = Sequential([Dense(8, activation="relu"), Dropout(0.3), Dense(3)])
    opt, opt2 = Adam(ExponentialDecay(1e-2, 5, 0.5)), SGD(0.1, momentum=0.9)

    def step(x, y):
        with fw.GradientTape(persistent=two_optimizers) as tape:
            logits = model(x, training=True)
            loss = fw.reduce_mean(fw.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
            accuracy = fw.reduce_mean(fw.cast(fw.equal(
                fw.cast(fw.argmax(logits, axis=1), fw.int32), y), fw.float32))
        if two_optimizers:
            first, second = model.layers[0].trainable_variables, model.layers[2].trainable_variables
            g1, g2 = tape.gradient(loss, first), tape.gradient(loss, second)
            opt.apply_gradients(zip(g1, first))
            opt2.apply_gradients(zip(g2, second))
        else:
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
        return {"loss": loss, "accuracy": accuracy}

    run = fw.function(step) if compiled else step
    history = [{k: v.numpy() for k, v in run(x, y).items()} for _ in range(steps)]
    return history, [v.numpy() for v in model.variables], int(opt.iterations)


@pytest.mark.parametrize("two_optimizers", [False, True])
def test_twenty_training_steps_equal_eager_bit_for_bit(two_optimizers):
    eager, compiled = _train(False, two_optimizers), _train(True, two_optimizers)
    assert eager[2] == compiled[2] == 20
    for a, b in zip(eager[0], compiled[0]):
        assert a == b
    for a, b in zip(eager[1], compiled[1]):
        np.testing.assert_array_equal(a, b)


def test_a_dead_model_is_freed():
    model = Sequential([Dense(3)])
    opt = SGD(0.1)

    @fw.function
    def step(x):
        with fw.GradientTape() as tape:
            loss = fw.reduce_sum(model(x))
        opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                model.trainable_variables))
        return loss

    step(fw.ones([2, 4]))
    step(fw.ones([2, 4]))
    alive, alive_opt = weakref.ref(model), weakref.ref(opt)
    del model, opt
    gc.collect()
    assert alive() is None and alive_opt() is None


def test_methods_trace_per_instance():
    class Scaler:
        def __init__(self, k):
            self.k = fw.Variable(k)

        @fw.function
        def __call__(self, x):
            return x * self.k

    a, b = Scaler(2.0), Scaler(3.0)
    assert a(fw.constant(1.0)).numpy() == 2.0 and b(fw.constant(1.0)).numpy() == 3.0
    assert a(fw.constant(2.0)).numpy() == 4.0
    assert a.__call__.experimental_get_tracing_count() == 1
    assert b.__call__.experimental_get_tracing_count() == 1


def test_under_an_outer_tape_the_call_is_differentiable():
    f = fw.function(lambda x: x * x)
    x = fw.constant(3.0)
    with fw.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    assert tape.gradient(y, x).numpy() == 6.0


def test_a_branch_after_an_update_is_refused():
    var = fw.Variable(1.0)

    @fw.function
    def f():
        var.assign_add(1.0)
        if var > 2.0:
            return fw.constant(1.0)
        return fw.constant(0.0)

    with pytest.raises(TraceError, match="after a variable was updated"):
        f()


def test_nested_results_and_python_values():
    @fw.function
    def f(x):
        return {"double": x * 2.0, "pair": (x, 7), "name": "ok"}

    out = f(fw.constant(1.0))
    out = f(fw.constant(2.0))
    assert out["double"].numpy() == 4.0 and out["pair"][0].numpy() == 2.0
    assert out["pair"][1] == 7 and out["name"] == "ok"


def test_the_runner_compiles_by_default_with_eager_numbers(tmp_path):
    from tiny_config import tiny_config
    from training.cli import main
    config = tmp_path / "tiny.toml"
    config.write_text(tiny_config())
    for name, flag in (("compiled", "compile=true"), ("eager", "compile=false")):
        assert main([str(config), "--no-progress", "--output", str(tmp_path / name),
                     "--set", flag, "--set", "output.plot=false"]) == 0
    compiled, eager = ((tmp_path / name / "metrics.jsonl").read_text().splitlines()
                       for name in ("compiled", "eager"))
    assert compiled == eager
    weights = [np.load(tmp_path / name / "checkpoint.npz") for name in ("compiled", "eager")]
    assert sorted(weights[0].files) == sorted(weights[1].files)
    for key in weights[0].files:
        if weights[0][key].dtype.kind in "fi":  # (not the saved config and paths)
            np.testing.assert_array_equal(weights[0][key], weights[1][key])


def test_gradients_of_broadcasts_with_output_gradients_and_unconnected_sources():
    def f(x, b, seed):
        with fw.GradientTape() as tape:
            tape.watch([x, b])
            y = x * b + b
        unused = fw.constant(1.0)
        return tape.gradient(y, [x, b, unused], output_gradients=seed,
                             unconnected_gradients="zero")

    traced = fw.function(f)
    for k in range(3):
        args = (fw.constant(np.arange(6.0).reshape(2, 3) + k, fw.float32), fw.constant([2.0 + k]),
                fw.constant(np.full((2, 3), 0.5 * k), fw.float32))
        for a, b in zip(traced(*args), f(*args)):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert traced.experimental_get_tracing_count() == 1


def test_gradient_accumulation_and_ema_inside():
    def run(compiled):
        var = fw.Variable([1.0, -2.0])
        opt = Adam(0.1, gradient_accumulation_steps=2, use_ema=True)

        def step(x):
            with fw.GradientTape() as tape:
                loss = fw.reduce_sum(var * var * x)
            opt.apply_gradients(zip([tape.gradient(loss, var)], [var]))

        fn = fw.function(step) if compiled else step
        for k in range(6):
            fn(fw.constant(float(k + 1)))
        return var.numpy(), int(opt.iterations)

    (eager, eager_steps), (traced, traced_steps) = run(False), run(True)
    np.testing.assert_array_equal(traced, eager)
    assert traced_steps == eager_steps


def test_a_plan_whose_variable_is_gone_traces_again():
    holder = {"scale": fw.Variable(2.0)}
    f = fw.function(lambda x: x * holder["scale"])
    assert f(fw.constant(3.0)).numpy() == 6.0
    holder["scale"] = fw.Variable(5.0)  # the first variable is freed
    gc.collect()
    assert f(fw.constant(3.0)).numpy() == 15.0
    assert f.experimental_get_tracing_count() == 2


def test_sparse_gradients_of_a_gather_inside():
    def run(compiled):
        table = fw.Variable(np.arange(12.0, dtype=np.float32).reshape(6, 2))
        opt = SGD(0.1, momentum=0.5)

        def step(ids):
            with fw.GradientTape() as tape:
                loss = fw.reduce_sum(fw.square(fw.gather(table, ids)))
            (grad,) = tape.gradient(loss, [table])
            opt.apply_gradients([(grad, table)])
            return fw.convert_to_tensor(grad) * 1.0

        fn = fw.function(step) if compiled else step
        outs = [fn(fw.constant([k % 6, (k + 2) % 6, k % 6])).numpy() for k in range(4)]
        return outs, table.numpy()

    (eager, eager_table), (traced, traced_table) = run(False), run(True)
    for a, b in zip(eager, traced):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(eager_table, traced_table)


def test_the_runners_finite_check_runs_on_every_call_before_the_update():
    from training.divergence import NonFiniteStep, check_step
    var = fw.Variable([1.0, 2.0])
    opt = SGD(0.1)

    @fw.function
    def step(x):
        with fw.GradientTape() as tape:
            loss = fw.reduce_sum(var * x)
        grads = [tape.gradient(loss, var)]
        check_step(loss, [[var]], [grads])
        opt.apply_gradients(zip(grads, [var]))
        return loss

    step(fw.constant([1.0, 1.0]))
    before = var.numpy()
    with pytest.raises(NonFiniteStep, match="the loss is nan"):
        step(fw.constant([np.nan, 1.0]))
    np.testing.assert_array_equal(var.numpy(), before)
    assert step.experimental_get_tracing_count() == 1


def test_batch_normalization_and_metrics_inside_equal_eager():
    from layers import BatchNormalization

    def run(compiled):
        fw.random.set_seed(0)
        model = Sequential([Dense(4), BatchNormalization(), Dense(3)])
        mean, accuracy = fw.metrics.Mean(), fw.metrics.SparseCategoricalAccuracy()
        opt = SGD(0.05)

        def step(x, y):
            with fw.GradientTape() as tape:
                logits = model(x, training=True)
                loss = fw.reduce_mean(fw.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            mean.update_state(loss)
            accuracy.update_state(y, logits)
            return accuracy.result()

        fn = fw.function(step) if compiled else step
        results = [fn(*_data(8, seed)).numpy() for seed in range(5)]
        return results, mean.result().numpy(), [v.numpy() for v in model.variables]

    eager, traced = run(False), run(True)
    assert eager[0] == traced[0] and eager[1] == traced[1]
    for a, b in zip(eager[2], traced[2]):
        np.testing.assert_array_equal(a, b)


def test_an_in_place_write_on_a_raw_array_is_refused():
    from framework.engine.tensor import mark_updated
    var = fw.Variable([1.0])

    @fw.function
    def f(x):
        var._value += x._value
        mark_updated([var])
        return x

    with pytest.raises(TraceError, match="'Variable:0' was updated in place"):
        f(fw.constant([1.0]))


def test_keyword_arguments_and_a_method_with_an_input_signature():
    class Model:
        def __init__(self):
            self.w = fw.Variable(3.0)

        @fw.function(input_signature=[fw.TensorSpec([None], fw.float32)])
        def scale(self, x):
            return x * self.w

    model = Model()
    np.testing.assert_array_equal(model.scale([1.0, 2.0]).numpy(), [3.0, 6.0])
    np.testing.assert_array_equal(model.scale(np.array([2.0, 4.0])).numpy(), [6.0, 12.0])
    assert model.scale.experimental_get_tracing_count() == 1

    @fw.function
    def f(x, *, bias=0.0, offsets=None):
        return x + bias + (offsets["a"] if offsets else 0.0)

    x = fw.constant([1.0])
    assert f(x, bias=1.0).numpy()[0] == 2.0
    assert f(x, bias=1.0, offsets={"a": fw.constant([5.0])}).numpy()[0] == 7.0
    assert f(x, bias=1.0, offsets={"a": fw.constant([6.0])}).numpy()[0] == 8.0
    assert f.experimental_get_tracing_count() == 2


def test_nn_dropout_and_categorical_draw_afresh_on_every_call():
    @fw.function
    def f(x):
        return fw.nn.dropout(x, 0.5), fw.random.categorical(fw.zeros([1, 50]), 20)

    x = fw.ones([64])
    (a, c), (b, d) = f(x), f(x)
    assert not np.array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(c.numpy(), d.numpy())


def test_a_default_argument_given_or_not_is_one_trace():
    @fw.function
    def f(x, training=False, scale=2.0):
        return x * scale if not training else x

    x = fw.constant([1.0, 2.0])
    np.testing.assert_array_equal(f(x).numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(f(x, training=False).numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(f(x, False, scale=2.0).numpy(), [2.0, 4.0])
    assert f.experimental_get_tracing_count() == 1
    np.testing.assert_array_equal(f(x, training=True).numpy(), [1.0, 2.0])
    assert f.experimental_get_tracing_count() == 2


def test_a_python_number_result_comes_back_as_a_tensor():
    @fw.function
    def f(x):
        return x.shape[0], {"rows": 3.5, "x": x}

    for _ in range(2):
        count, parts = f(fw.constant([1.0, 2.0]))
        assert isinstance(count, fw.Tensor) and count.dtype == fw.int32 and int(count) == 2
        assert isinstance(parts["rows"], fw.Tensor) and float(parts["rows"]) == 3.5


def test_a_tensor_computed_behind_the_gate_is_refused_naming_the_line():
    from framework.engine.tensor import wrap

    @fw.function
    def f(x):
        behind = wrap(np.sort(x._value))  # raw arrays, not an op: would be frozen
        return behind * 2.0

    with pytest.raises(TraceError, match=r"test_function.py:\d+: a tensor computed behind"):
        f(fw.constant([3.0, 1.0]))


def test_a_tensor_leaked_out_of_a_trace_refuses_every_use():
    kept = []

    @fw.function
    def f(x):
        y = x * 2.0
        kept.append(y)
        return y + 1.0

    np.testing.assert_array_equal(f(fw.constant([1.0])).numpy(), [3.0])
    np.testing.assert_array_equal(f(fw.constant([2.0])).numpy(), [5.0])
    for use in (lambda t: t + 1.0, lambda t: t.numpy(), lambda t: float(t[0])):
        with pytest.raises(TypeError, match="kept and used after the call"):  # a TraceError
            use(kept[0])


def test_an_index_out_of_range_is_refused_on_every_compiled_call():
    """TensorFlow's gather checks its indices in the kernel; NumPy would read -1 from the end."""
    table = fw.Variable(np.arange(6.0, dtype=np.float32).reshape(3, 2))
    lookup = fw.function(lambda ids: fw.gather(table, ids))
    np.testing.assert_array_equal(lookup(fw.constant([0, 2])).numpy(), [[0, 1], [4, 5]])
    with pytest.raises(IndexError, match=r"indices\[1\] = -1 is not in \[0, 3\)"):
        lookup(fw.constant([1, -1]))


def test_a_sparse_gradient_is_returned_as_indexed_slices_on_every_call():
    """An embedding's gradient returned from fw.function is TensorFlow's IndexedSlices, with
    each call's rows (not the first call's)."""
    from framework import keras
    embedding = keras.layers.Embedding(10, 3)
    embedding(fw.constant([1]))

    @fw.function
    def gradient(ids):
        with fw.GradientTape() as tape:
            loss = fw.reduce_sum(embedding(ids) * fw.cast(ids[:, None], fw.float32))
        return tape.gradient(loss, embedding.embeddings)

    for ids in ([1, 2, 2], [3, 4, 5]):
        got = gradient(fw.constant(ids))
        assert isinstance(got, fw.IndexedSlices)
        np.testing.assert_array_equal(got.indices.numpy(), ids)
        np.testing.assert_array_equal(got.values.numpy(),
                                      np.repeat(np.array(ids, np.float32)[:, None], 3, axis=1))
    assert gradient.experimental_get_tracing_count() == 1
