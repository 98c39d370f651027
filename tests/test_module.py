"""fw.Module: tf.Module's names, name scopes and variable tracking, and the one tracking
mechanism that layers.Layer builds on."""
import numpy as np
import pytest

import framework as fw
from layers import Dense, Layer


class Scaler(fw.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        with self.name_scope:
            self.w = fw.Variable(2.0, name="w")
            self.b = fw.Variable(1.0, trainable=False, name="b")

    @fw.Module.with_name_scope
    def __call__(self, x):
        self.last = fw.Variable(0.0, name="last")
        return x * self.w + self.b


class Net(fw.Module):
    def __init__(self):
        super().__init__()
        self.z_layer = Scaler(name="z")
        self.blocks = [Scaler(name="b0"), {"k": Scaler(name="b1")}]
        self.a_var = fw.Variable(np.zeros(2, np.float32), name="a")


def test_name_defaults_to_the_snake_case_class_name_and_must_be_an_identifier():
    assert Scaler().name == "scaler" and Net().name == "net"
    assert Scaler(name="mine").name_scope.name == "mine/"
    for bad in ("has space", "a/b", "", 3, "class"):
        with pytest.raises(ValueError, match="not a valid module name"):
            Scaler(name=bad)


def test_variables_are_found_in_attributes_lists_and_dicts_in_tfs_order():
    net = Net()
    paths = list(net.named_variables())
    # tf.Module's order: own variables first, attributes sorted by name, then each submodule
    assert paths == ["a_var", "blocks/0/b", "blocks/0/w", "blocks/1/k/b", "blocks/1/k/w",
                     "z_layer/b", "z_layer/w"]
    assert net.variables == list(net.named_variables().values())
    assert all(v.trainable for v in net.trainable_variables)
    assert [v.name for v in net.non_trainable_variables] == ["b0/b:0", "b1/b:0", "z/b:0"]
    assert [m.name for m in net.submodules] == ["b0", "b1", "z"]


def test_name_scope_prefixes_variable_paths_and_with_name_scope_enters_it():
    scaler = Scaler(name="s")
    assert (scaler.w.name, scaler.w.path) == ("s/w:0", "s/w")  # TensorFlow's name, Keras's path
    assert float(scaler(fw.constant(3.0))) == 7.0
    assert scaler.last.path == "s/last"
    assert fw.Variable(1.0, name="free").path == "free"


def test_the_cached_walk_sees_later_changes():
    net = Net()
    before = net.trainable_variables
    assert net.trainable_variables == before  # cached, same answer
    net.blocks.append(Scaler(name="late"))
    assert len(net.trainable_variables) == len(before) + 1
    del net.z_layer
    assert len(net.variables) == 7  # a, three Scalers of two each; z_layer gone


def test_submodules_nest_in_tfs_order_without_recursion_limits():
    root = fw.Module(name="root")
    node = root
    for depth in range(3000):  # deeper than Python's recursion limit
        child = fw.Module(name=f"m{depth}")
        node.child = child
        node = child
    node.v = fw.Variable(1.0, name="v")
    assert len(root.submodules) == 3000 and len(root.variables) == 1


def test_a_layer_is_a_module_with_keras_order_and_names():
    class Block(Layer):
        def __init__(self):
            super().__init__()
            self.z = Dense(2)
            self.a = Dense(2)

        def call(self, x):
            return self.a(self.z(x))

    block = Block()
    assert isinstance(block, fw.Module)
    block(np.ones((1, 3), np.float32))
    assert list(block.named_variables()) == ["z/kernel", "z/bias", "a/kernel", "a/bias"]
    assert block.submodules == (block.z, block.a)


def test_a_plain_module_inside_a_layer_is_tracked():
    class Holder(Layer):
        def __init__(self):
            super().__init__()
            self.inner = Scaler(name="inner")

    holder = Holder()
    assert holder.variables == [holder.inner.b, holder.inner.w]  # the module's own order
    assert holder.trainable_variables == [holder.inner.w]
