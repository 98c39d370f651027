"""Layers: lazy build, tracking and names, freezing, the core layers, containers, summary, and
every bad input the layers reject."""
import numpy as np
import pytest

import framework as fw
from layers import MLP, Dense, Dropout, Flatten, Layer, Model, Sequential, activations
from seed_model import SeedMLP


def batch(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


# --- lazy build ------------------------------------------------------------------------------
def test_variables_are_created_on_the_first_call_from_the_input_shape():
    dense = Dense(3)
    assert dense.variables == [] and dense.built is False and dense.kernel is None
    out = dense(batch(4, 5))
    assert dense.built is True and out.shape == (4, 3)
    assert [v.shape for v in dense.variables] == [(5, 3), (3,)]
    assert dense.variables == [dense.kernel, dense.bias]


def test_a_model_builds_its_sublayers_on_its_first_call():
    model = SeedMLP()
    assert model.variables == [] and not model.built
    assert model(batch(2, 8, 8)).shape == (2, 10)
    assert model.built and model.dense1.built and model.dense2.built
    assert [v.shape for v in model.variables] == [(64, 100), (100,), (100, 10), (10,)]


@pytest.mark.parametrize("make", [lambda: Dense(4), SeedMLP, lambda: Sequential([Dense(4)])])
def test_weights_before_the_build_raise_an_error_that_says_how_to_build(make):
    layer = make()
    for needs_weights in (layer.get_weights, lambda: layer.set_weights([]), layer.summary,
                          layer.count_params):
        with pytest.raises(ValueError, match=r"Call it once .* \.build\(input_shape\)"):
            needs_weights()


def test_build_from_a_given_input_shape_without_data():
    dense = Dense(3)
    dense.build((None, 7))
    assert dense.built and dense.kernel.shape == (7, 3)
    model = SeedMLP()
    model.build((None, 8, 8))  # a subclassed model builds by running on zeros
    assert model.built and model.dense1.kernel.shape == (64, 100)
    sequential = Sequential([Dense(4), Dense(2)])
    sequential.summary(input_shape=(None, 3), print_fn=lambda line: None)
    assert [v.shape for v in sequential.variables] == [(3, 4), (4,), (4, 2), (2,)]


def test_build_runs_once_and_records_the_input_shape():
    dense = Dense(2)
    dense.build((None, 3))
    kernel = dense.kernel
    dense.build((None, 9))
    dense(batch(1, 3))
    assert dense.kernel is kernel and len(dense.variables) == 2


def test_custom_layer_with_add_weight_and_super_build():
    class Scale(Layer):
        def build(self, input_shape):
            self.scale = self.add_weight("scale", (input_shape[-1],), initializer="ones")
            self.count = self.add_weight("count", (), initializer="zeros", trainable=False)
            super().build(input_shape)

        def call(self, inputs):
            return inputs * self.scale

    layer = Scale()
    assert np.allclose(layer(np.ones((2, 3), np.float32)).numpy(), 1.0)
    assert layer.trainable_variables == [layer.scale]
    assert layer.non_trainable_variables == [layer.count]
    assert layer.scale.name == "scale" and layer.scale.path == f"{layer.name}/scale"


# --- tracking and names ---------------------------------------------------------------------
def test_auto_names_are_unique_and_variable_names_follow_the_calling_layers():
    first, second = Dense(1), Dense(1)
    base = first.name.rsplit("_", 1)[0] if "_" in first.name else first.name
    assert base == "dense" and first.name != second.name
    model = SeedMLP()
    model(batch(1, 8, 8))
    assert model.name.startswith("seed_mlp")
    assert [v.name for v in model.variables] == ["kernel", "bias", "kernel", "bias"]
    names = [v.path for v in model.variables]
    assert names == [f"{model.name}/{model.dense1.name}/kernel",
                     f"{model.name}/{model.dense1.name}/bias",
                     f"{model.name}/{model.dense2.name}/kernel",
                     f"{model.name}/{model.dense2.name}/bias"]
    assert len(set(names)) == len(names)


def test_sublayers_in_attributes_lists_and_dicts_are_tracked_in_a_stable_order():
    class Tower(Model):
        def __init__(self):
            super().__init__()
            self.stem = Dense(4)
            self.blocks = [Dense(4), Dense(4)]
            self.heads = {"a": Dense(1), "b": Dense(2)}
            self.shared = self.stem  # tracked once

        def call(self, x):
            x = self.stem(x)
            for block in self.blocks:
                x = block(x)
            return self.heads["a"](x) + self.heads["b"](x)[:, :1]

    tower = Tower()
    tower(batch(2, 3))
    assert list(tower.named_variables()) == [
        "stem/kernel", "stem/bias", "blocks/0/kernel", "blocks/0/bias", "blocks/1/kernel",
        "blocks/1/bias", "heads/a/kernel", "heads/a/bias", "heads/b/kernel", "heads/b/bias"]
    assert tower.variables == list(tower.named_variables().values())
    assert tower.layers == [tower.stem, *tower.blocks, tower.heads["a"], tower.heads["b"]]
    assert tower.variables == tower.variables  # the same order every time


def test_variables_held_directly_as_attributes_are_tracked():
    class Affine(Layer):
        def __init__(self):
            super().__init__()
            self.w = fw.Variable(2.0, name="w")
            self.frozen = fw.Variable(1.0, trainable=False, name="frozen")

        def call(self, x):
            return x * self.w + self.frozen

    layer = Affine()
    assert layer.variables == [layer.w, layer.frozen]
    assert layer.trainable_variables == [layer.w]
    assert list(layer.named_variables()) == ["w", "frozen"]


def test_structural_paths_match_between_two_models_built_the_same_way():
    first, second = MLP([5], 2), MLP([5], 2)
    first.build((None, 3))
    second.build((None, 3))
    assert list(first.named_variables()) == list(second.named_variables())
    assert [v.path for v in first.variables] != [v.path for v in second.variables]


# --- freezing -------------------------------------------------------------------------------
def test_trainable_false_after_build_freezes_and_true_unfreezes():
    model = SeedMLP()
    model(batch(1, 8, 8))
    model.dense1.trainable = False
    assert model.trainable_variables == model.dense2.variables
    assert model.non_trainable_variables == model.dense1.variables
    with fw.GradientTape() as tape:
        model(batch(1, 8, 8))
    assert tape.watched_variables() == tuple(model.dense2.variables)
    model.dense1.trainable = True
    assert model.trainable_variables == model.variables


def test_trainable_false_before_build_and_on_a_parent():
    dense = Dense(2, trainable=False)
    dense(batch(1, 3))
    assert dense.trainable_variables == [] and not dense.kernel.trainable
    dense.trainable = True
    assert dense.trainable_variables == [dense.kernel, dense.bias]

    model = SeedMLP()
    model.trainable = False
    model(batch(1, 8, 8))
    assert model.trainable_variables == [] and len(model.non_trainable_variables) == 4
    assert not model.dense2.trainable
    model.trainable = True
    assert len(model.trainable_variables) == 4


def test_variables_created_non_trainable_stay_so_after_unfreezing():
    class WithCounter(Dense):
        def build(self, input_shape):
            super().build(input_shape)
            self.steps = self.add_weight("steps", (), "zeros", trainable=False)

    layer = WithCounter(1)
    layer(batch(1, 2))
    layer.trainable = False
    layer.trainable = True
    assert layer.trainable_variables == [layer.kernel, layer.bias]
    assert layer.non_trainable_variables == [layer.steps]


# --- core layers ----------------------------------------------------------------------------
def test_dense_computes_activation_of_affine_map_on_the_last_axis():
    dense = Dense(3, activation="relu", kernel_initializer="random_normal",
                  bias_initializer="ones")
    x = batch(2, 4, 5)
    out = dense(x).numpy()
    expected = np.maximum(x @ dense.kernel.numpy() + dense.bias.numpy(), 0)
    assert out.shape == (2, 4, 3) and np.allclose(out, expected, atol=1e-6)
    no_bias = Dense(2, use_bias=False)
    no_bias(x)
    assert no_bias.variables == [no_bias.kernel] and no_bias.bias is None


def test_layers_cast_floating_inputs_to_their_dtype_and_accept_arrays():
    dense = Dense(2)
    assert dense(np.ones((1, 3), np.float64)).dtype == fw.float32
    wide = Dense(2, dtype="float64")
    assert wide(np.ones((1, 3), np.float32)).dtype == fw.float64
    assert wide.kernel.dtype == fw.float64


def test_flatten_keeps_the_batch_axis():
    assert Flatten()(batch(2, 3, 4)).shape == (2, 12)
    assert Flatten()(batch(5)).shape == (5, 1)
    assert Flatten().compute_output_shape((None, 3, 4)) == (None, 12)


def test_dropout_is_the_identity_at_inference_and_scales_kept_units_in_training():
    x = np.ones((200, 50), np.float32)
    dropout = Dropout(0.25)
    assert np.array_equal(dropout(x).numpy(), x)
    assert np.array_equal(dropout(x, training=False).numpy(), x)
    out = dropout(x, training=True).numpy()
    assert set(np.unique(out)) <= {0.0, np.float32(1 / 0.75)}
    assert abs((out == 0).mean() - 0.25) < 0.02


def test_dropout_masks_follow_the_global_seed_or_the_layer_seed():
    x = np.ones((4, 6), np.float32)
    fw.random.set_seed(3)
    first = Dropout(0.5)(x, training=True).numpy()
    fw.random.set_seed(3)
    assert np.array_equal(Dropout(0.5)(x, training=True).numpy(), first)
    seeded_a, seeded_b = Dropout(0.5, seed=7), Dropout(0.5, seed=7)
    masks_a = [seeded_a(x, training=True).numpy() for _ in range(2)]
    masks_b = [seeded_b(x, training=True).numpy() for _ in range(2)]
    assert np.array_equal(masks_a[0], masks_b[0]) and np.array_equal(masks_a[1], masks_b[1])
    assert not np.array_equal(masks_a[0], masks_a[1])


def test_dropout_noise_shape_shares_the_mask():
    out = Dropout(0.5, noise_shape=(None, 1), seed=1)(np.ones((8, 5), np.float32), training=True)
    assert all(len(set(row)) == 1 for row in out.numpy())


def test_training_flag_reaches_nested_layers_from_the_outer_call():
    class Net(Model):
        def __init__(self):
            super().__init__()
            self.drop = Dropout(0.5, seed=0)

        def call(self, x):
            return self.drop(x)

    x = np.ones((10, 10), np.float32)
    net = Net()
    assert np.array_equal(net(x).numpy(), x)
    assert (net(x, training=True).numpy() == 0).any()
    assert (Sequential([Dropout(0.5, seed=0)])(x, training=True).numpy() == 0).any()


def test_dropout_gradient_flows_through_kept_units_only():
    x = fw.Variable(np.ones((3, 4), np.float32))
    with fw.GradientTape() as tape:
        out = Dropout(0.5, seed=2)(x, training=True)
        total = fw.reduce_sum(out)
    grad = tape.gradient(total, x).numpy()
    assert np.array_equal(grad, out.numpy())


@pytest.mark.parametrize("name", ["relu", "sigmoid", "tanh", "softmax", "log_softmax", "softplus",
                                  "softsign", "elu", "selu", "silu", "swish", "gelu",
                                  "exponential", "linear"])
def test_activations_by_name_match_numpy(name):
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(2, 6)
    e = np.exp(x - x.max(-1, keepdims=True))
    sig = 1 / (1 + np.exp(-x))
    expected = {
        "relu": np.maximum(x, 0), "sigmoid": sig, "tanh": np.tanh(x),
        "softmax": e / e.sum(-1, keepdims=True),
        "log_softmax": np.log(e / e.sum(-1, keepdims=True)), "softplus": np.log1p(np.exp(x)),
        "softsign": x / (1 + np.abs(x)), "elu": np.where(x > 0, x, np.expm1(x)),
        "selu": 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)),
        "silu": x * sig, "swish": x * sig, "exponential": np.exp(x), "linear": x,
        "gelu": x * 0.5 * (1 + np.vectorize(__import__("math").erf)(x / np.sqrt(2))),
    }[name]
    assert np.allclose(activations.get(name)(fw.constant(x)).numpy(), expected, atol=1e-5)
    assert activations.get(None) is activations.linear
    assert activations.get(np.abs) is np.abs


# --- containers and summary -----------------------------------------------------------------
def test_sequential_applies_layers_in_order_and_supports_add_and_pop():
    model = Sequential([Flatten(), Dense(4, "relu")])
    model.add(Dense(2))
    assert model(batch(3, 2, 2)).shape == (3, 2)
    assert [type(layer) for layer in model.layers] == [Flatten, Dense, Dense]
    assert next(iter(model.named_variables())) == "layers/1/kernel"
    unbuilt = Sequential([Dense(1)])
    assert isinstance(unbuilt.pop(), Dense) and unbuilt.layers == []


def test_mlp_stacks_dense_layers_with_the_given_activations():
    mlp = MLP([6, 5], 3, activation="tanh", output_activation="softmax")
    out = mlp(batch(4, 2, 4))
    assert out.shape == (4, 3) and np.allclose(out.numpy().sum(-1), 1, atol=1e-6)
    dense = [layer for layer in mlp.layers if isinstance(layer, Dense)]
    assert [d.units for d in dense] == [6, 5, 3]
    assert [d.activation for d in dense] == [activations.tanh] * 2 + [activations.softmax]
    assert MLP(4, 1)(batch(2, 3)).shape == (2, 1)
    assert MLP([3], 2, input_shape=(2, 2)).count_params() == 4 * 3 + 3 + 3 * 2 + 2


def test_summary_prints_output_shapes_and_parameter_counts():
    model = SeedMLP()
    model(batch(2, 8, 8))
    lines = []
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    assert f'Model: "{model.name}"' in text
    assert f"{model.dense1.name} (Dense)" in text and "(None, 100)" in text and "6,500" in text
    assert "(None, 10)" in text and "1,010" in text and "(None, 64)" in text
    assert "Total params: 7,510" in text and "Trainable params: 7,510" in text
    model.dense2.trainable = False
    lines.clear()
    model.summary(print_fn=lines.append)
    assert "Non-trainable params: 1,010" in lines


def test_get_and_set_weights_round_trip_in_variable_order():
    source, target = MLP([4], 2), MLP([4], 2)
    source.build((None, 3))
    target.build((None, 3))
    target.set_weights(source.get_weights())
    assert all(np.array_equal(a, b) for a, b in zip(source.get_weights(), target.get_weights()))
    assert target.count_params() == 3 * 4 + 4 + 4 * 2 + 2


# --- bad inputs -----------------------------------------------------------------------------
def test_set_weights_checks_count_and_shapes_before_writing():
    dense = Dense(2)
    dense.build((None, 3))
    before = dense.get_weights()
    with pytest.raises(ValueError, match="got 1 arrays for its 2 variables"):
        dense.set_weights([np.zeros((3, 2))])
    with pytest.raises(ValueError, match=r"'.*/bias' has shape \(2,\).*\(3,\)"):
        dense.set_weights([np.zeros((3, 2)), np.zeros(3)])
    assert all(np.array_equal(a, b) for a, b in zip(before, dense.get_weights()))


@pytest.mark.parametrize("make, message", [
    (lambda: Dense(0), "units must be a positive integer"),
    (lambda: Dense(2.5), "units must be a positive integer"),
    (lambda: Dense(2, activation="relux"), "unknown activation 'relux'"),
    (lambda: Dense(2, kernel_initializer="glorot"), "unknown initializer 'glorot'"),
    (lambda: Dropout(1.0), r"rate must be in \[0, 1\)"),
    (lambda: Dropout(-0.1), r"rate must be in \[0, 1\)"),
    (lambda: Dense(2, name="a/b"), "without '/'"),
    (lambda: Sequential([Dense(1, name="same"), Dense(1, name="same")]), "named 'same'"),
])
def test_bad_layer_arguments_raise_value_errors(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_other_bad_inputs_name_the_culprit():
    with pytest.raises(TypeError, match="takes layers"):
        Sequential([np.abs])
    with pytest.raises(TypeError, match="must be a name, a serialized dict or a callable"):
        activations.get(3)

    class Forgetful(Layer):
        def __init__(self):
            self.units = 3

    with pytest.raises(RuntimeError, match=r"must call super\(\).__init__\(\)"):
        Forgetful()(np.ones(2))

    class Twice(Layer):
        def build(self, input_shape):
            self.add_weight("w", (1,))
            self.add_weight("w", (1,))

    with pytest.raises(ValueError, match="already has a weight named 'w'"):
        Twice()(np.ones((1, 1), np.float32))
    with pytest.raises(ValueError, match="noise_shape"):
        Dropout(0.5, noise_shape=(1,))(np.ones((2, 2), np.float32), training=True)
    with pytest.raises(ValueError, match="known last dimension"):
        Dense(1).build((None, None))
    with pytest.raises(ValueError, match="add its layers before that"):
        built = Sequential([Dense(1)])
        built.build((None, 2))
        built.add(Dense(1))


def test_call_keeps_its_own_training_default_when_nobody_sets_it():
    class AlwaysNoisy(Layer):
        def call(self, inputs, training=True):
            return inputs + 1.0 if training else inputs

    layer = AlwaysNoisy()
    x = np.zeros((1, 2), np.float32)
    assert layer(x).numpy()[0, 0] == 1.0
    assert layer(x, training=False).numpy()[0, 0] == 0.0
    assert Sequential([AlwaysNoisy()])(x, training=False).numpy()[0, 0] == 0.0


def test_a_declared_input_shape_builds_when_weights_are_needed():
    """Keras 2's ``Dense(..., input_shape=(784,))`` as the first layer of a Sequential."""
    model = Sequential([Dense(4, activation="relu", input_shape=(3,)), Dense(2)])
    assert model.variables == [] and not model.built
    assert [w.shape for w in model.get_weights()] == [(3, 4), (4,), (4, 2), (2,)]
    assert model.built and model(batch(5, 3)).shape == (5, 2)
    standalone = Dense(2, input_shape=(6,))
    assert standalone.count_params() == 14
    lines = []
    Sequential([Flatten(input_shape=(2, 2)), Dense(1)]).summary(print_fn=lines.append)
    assert "Total params: 5" in lines


def test_variables_see_sublayers_added_to_lists_and_dicts_after_the_first_read():
    # ``variables`` is cached between structural changes; every way of changing what a layer
    # holds must invalidate it, or a new layer's weights would silently miss the gradient.
    class Blocks(Layer):
        def __init__(self):
            super().__init__()
            self.blocks = []
            self.heads = {}
            self.nested = [[]]

        def call(self, x):
            for block in self.blocks + list(self.heads.values()) + self.nested[0]:
                x = block(x)
            return x

    model = Blocks()
    x = fw.ones((2, 3))
    assert model.variables == []
    model.blocks.append(Dense(3))
    model(x)
    assert len(model.variables) == 2
    model.heads["out"] = Dense(3)
    model.nested[0].append(Dense(3))
    model(x)
    assert len(model.variables) == 6
    model.blocks.pop()
    assert len(model.variables) == 4
    model.extra = Dense(3)
    model.extra(x)
    assert len(model.variables) == 6
    del model.extra
    assert len(model.variables) == 4
