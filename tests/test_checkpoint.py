"""training.checkpoint: resuming gives exactly the uninterrupted run, saves are atomic, and
mismatches are reported in one message."""
import os
import re

import numpy as np
import pytest

import framework as fw
from framework import checkpoint_file
from layers import MLP, Dense, Dropout, Model
from optimizers import SGD, Adam, schedules
from training.checkpoint import (CheckpointMismatchError, CheckpointReadError, read_extra,
                                 remove_stale_temporaries, restore_checkpoint, save_checkpoint)


class Net(Model):
    """Two Dense layers with dropout between them, each trained by its own optimizer."""

    def __init__(self):
        super().__init__()
        self.hidden = Dense(16, activation="relu")
        self.dropout = Dropout(0.2)
        self.head = Dense(3)

    def call(self, x):
        return self.head(self.dropout(self.hidden(x)))


def data(step):
    rng = np.random.default_rng(step)
    return rng.normal(size=(32, 6)).astype(np.float32), rng.integers(0, 3, 32)


def fresh():
    fw.random.set_seed(0)
    model = Net()
    model.build((None, 6))
    first = Adam(schedules.ExponentialDecay(0.01, decay_steps=2, decay_rate=0.7), amsgrad=True)
    second = SGD(0.1, momentum=0.9, nesterov=True)
    return model, {"hidden": first, "head": second}


def train(model, optimizers, steps, start):
    for step in range(start, start + steps):
        x, y = data(step)
        with fw.GradientTape(persistent=True) as tape:
            logits = model(x, training=True)
            loss = fw.reduce_mean(fw.losses.sparse_categorical_crossentropy(y, logits, True))
        for name, optimizer in optimizers.items():
            variables = getattr(model, name).trainable_variables
            optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))


def test_n_steps_save_restore_m_steps_equals_n_plus_m_steps(tmp_path):
    n, m = 3, 4
    reference, reference_optimizers = fresh()
    train(reference, reference_optimizers, n + m, start=0)

    model, optimizers = fresh()
    train(model, optimizers, n, start=0)
    optimizers["head"].learning_rate = 0.05  # a change made mid-run is part of the state
    save_checkpoint(tmp_path / "run.npz", model, optimizers,
                    extra={"step": n, "rng": fw.random.get_state()})
    fw.random.set_seed(123)  # whatever happens between the runs

    resumed, resumed_optimizers = fresh()
    extra = restore_checkpoint(tmp_path / "run.npz", resumed, resumed_optimizers)
    fw.random.set_state(extra["rng"])
    assert int(resumed_optimizers["hidden"].iterations) == n
    assert resumed_optimizers["hidden"].learning_rate == pytest.approx(0.01 * 0.7 ** (n / 2))
    assert resumed_optimizers["head"].learning_rate == 0.05
    resumed_optimizers["head"].learning_rate = 0.1  # the reference ran at 0.1 throughout
    train(resumed, resumed_optimizers, m, start=extra["step"])

    for expected, actual in zip(reference.get_weights(), resumed.get_weights()):
        assert np.array_equal(expected, actual)
    for name, optimizer in reference_optimizers.items():
        for variable, restored in zip(getattr(reference, name).variables,
                                      getattr(resumed, name).variables):
            for slot in optimizer.get_slot_names():
                assert np.array_equal(optimizer.get_slot(variable, slot).numpy(),
                                      resumed_optimizers[name].get_slot(restored, slot).numpy())


def test_checkpoint_keys_are_structural_paths(tmp_path):
    model, optimizers = fresh()
    train(model, optimizers, 1, start=0)
    save_checkpoint(tmp_path / "ck.npz", model, optimizers, extra={"epoch": 1})
    keys = set(np.load(tmp_path / "ck.npz").files)
    assert {"model/hidden/kernel", "model/head/bias", "optimizers/hidden/iterations",
            "optimizers/hidden/slots/model/hidden/kernel/velocity_hat",
            "optimizers/head/slots/model/head/kernel/momentum"} <= keys
    header = checkpoint_file.read_header(tmp_path / "ck.npz")
    assert header["optimizers"] == {"optimizers/head": {"learning_rate": 0.1},
                                    "optimizers/hidden": {"learning_rate": None}}  # (a schedule)
    assert header["json"] == {"extra": {"epoch": 1}}


def test_the_file_is_an_fw_train_checkpoint(tmp_path):
    """One format: what the runner saves, ``fw.train.Checkpoint`` restores, and back."""
    model, optimizers = fresh()
    train(model, optimizers, 2, start=0)
    save_checkpoint(tmp_path / "ck.npz", model, optimizers, extra={"epoch": 3})
    restored, restored_optimizers = fresh()
    extra = {}
    fw.train.Checkpoint(model=restored, optimizers=restored_optimizers,
                        extra=extra).read(str(tmp_path / "ck.npz")).assert_consumed()
    assert extra == {"epoch": 3}
    assert all(np.array_equal(a, b) for a, b in zip(model.get_weights(), restored.get_weights()))
    fw.train.Checkpoint(model=model, optimizers=optimizers,
                        extra={"epoch": 4}).write(str(tmp_path / "tf.npz"))
    assert restore_checkpoint(tmp_path / "tf.npz", *fresh()) == {"epoch": 4}


def saved(tmp_path):
    model, optimizers = fresh()
    train(model, optimizers, 2, start=0)
    path = tmp_path / "ck.npz"
    save_checkpoint(path, model, optimizers, extra={"epoch": 1})
    return path, model, optimizers


@pytest.mark.parametrize("failure", ["rename", "write"])
def test_an_interrupted_save_leaves_the_previous_checkpoint_whole(tmp_path, monkeypatch, failure):
    path, model, optimizers = saved(tmp_path)
    before = path.read_bytes()
    train(model, optimizers, 1, start=5)
    if failure == "rename":
        def broken_replace(source, target):
            raise OSError("disk gone")
        monkeypatch.setattr(os, "replace", broken_replace)
        expected = OSError
    else:
        def broken_savez(file, **arrays):
            file.write(b"PK half an archive")
            raise KeyboardInterrupt
        monkeypatch.setattr(np, "savez", broken_savez)
        expected = KeyboardInterrupt
    with pytest.raises(expected):
        save_checkpoint(path, model, optimizers, extra={"epoch": 2})
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["ck.npz"]  # no temporary file left behind
    restored, restored_optimizers = fresh()
    assert restore_checkpoint(path, restored, restored_optimizers) == {"epoch": 1}


def test_missing_and_unexpected_names_are_reported_in_one_message(tmp_path):
    path, _, _ = saved(tmp_path)
    other = MLP([16], 3)
    other.build((None, 6))
    with pytest.raises(CheckpointMismatchError) as caught:
        restore_checkpoint(path, other, {"hidden": Adam(0.1, amsgrad=True)})
    message = str(caught.value)
    assert message.count("missing from the checkpoint") == 1
    for name in ["model/layers/1/kernel", "model/layers/2/bias", "optimizers/hidden/learning_rate",
                 "model/hidden/kernel", "optimizers/head/iterations",
                 "optimizers/hidden/slots/model/hidden/kernel/momentum"]:
        assert name in message


def test_non_strict_restore_warns_and_restores_what_matches(tmp_path):
    path, model, _ = saved(tmp_path)
    partial = Net()
    partial.build((None, 6))
    with pytest.warns(UserWarning, match="unexpected in the checkpoint.*optimizers/head"):
        restore_checkpoint(path, partial, strict=False)
    assert all(np.array_equal(a, b) for a, b in zip(model.get_weights(), partial.get_weights()))


def test_a_restore_that_fails_changes_nothing(tmp_path):
    path, _, _ = saved(tmp_path)
    model, optimizers = fresh()
    before = model.get_weights()
    with pytest.raises(CheckpointMismatchError):
        restore_checkpoint(path, model, {"hidden": optimizers["hidden"]})
    assert all(np.array_equal(a, b) for a, b in zip(before, model.get_weights()))
    assert int(optimizers["hidden"].iterations) == 0


def test_shape_and_dtype_mismatches_name_the_entry(tmp_path):
    path, _, _ = saved(tmp_path)

    class Wider(Net):
        def __init__(self):
            super().__init__()
            self.hidden = Dense(17, activation="relu")

    wider = Wider()
    wider.build((None, 6))
    with pytest.raises(CheckpointMismatchError, match=r"'model/hidden/kernel' .* is float32\[6, 17\]"
                                                      r", the checkpoint holds float32\[6, 16\]"):
        restore_checkpoint(path, wider, strict=False)


def test_restoring_into_an_unbuilt_model_says_to_build_it(tmp_path):
    path, _, _ = saved(tmp_path)
    with pytest.raises(ValueError, match=r"restore_checkpoint\(\) needs the weights .* not "
                                         r"built yet.* \.build\(input_shape\)"):
        restore_checkpoint(path, Net())
    with pytest.raises(ValueError, match=r"save_checkpoint\(\) needs the weights"):
        save_checkpoint(tmp_path / "other.npz", Net())


def test_bad_saves(tmp_path):
    model, optimizers = fresh()
    with pytest.raises(TypeError, match="extra must be JSON-serialisable"):
        save_checkpoint(tmp_path / "ck.npz", model, extra={"array": np.zeros(2)})
    stranger = fw.Variable([1.0], name="stranger")
    optimizers["head"].apply_gradients([(fw.ones(1), stranger)])
    with pytest.raises(ValueError, match="slots for variable 'stranger', which this checkpoint "
                                          "does not track"):
        save_checkpoint(tmp_path / "ck.npz", model, optimizers)
    assert not os.listdir(tmp_path)


def test_a_single_optimizer_and_a_file_that_is_not_a_checkpoint(tmp_path):
    model = MLP([4], 2)
    model.build((None, 3))
    optimizer = SGD(0.1)
    save_checkpoint(tmp_path / "one.npz", model, optimizer)
    assert "optimizers/optimizer/iterations" in np.load(tmp_path / "one.npz").files
    assert restore_checkpoint(tmp_path / "one.npz", model, optimizer) == {}
    np.savez(tmp_path / "weights.npz", kernel=np.zeros(2))
    with pytest.raises(ValueError, match="is not a checkpoint"):
        restore_checkpoint(tmp_path / "weights.npz", model)


def test_read_extra_and_damaged_files_are_one_error_naming_the_file(tmp_path):
    path, _, _ = saved(tmp_path)
    assert read_extra(path) == {"epoch": 1}
    data = path.read_bytes()
    for name, content in [("cut.npz", data[:len(data) // 2]), ("empty.npz", b""),
                          ("text.npz", b"not a zip"), ("missing.npz", None)]:
        if content is not None:
            (tmp_path / name).write_bytes(content)
        for read in (read_extra, lambda p: restore_checkpoint(p, *fresh())):
            with pytest.raises(CheckpointReadError, match=re.escape(str(tmp_path / name))):
                read(tmp_path / name)
    np.save(tmp_path / "array.npy", np.zeros(3))
    with pytest.raises(CheckpointReadError, match="is not a checkpoint .*a single .npy array"):
        read_extra(tmp_path / "array.npy")


def test_stale_temporaries_of_killed_saves_are_removed(tmp_path):
    path, _, _ = saved(tmp_path)
    ours = [f".ck.npz.{tag}{checkpoint_file.TEMP_SUFFIX}" for tag in ("a1b2", "zz")]
    theirs = [f".other.npz.a1{checkpoint_file.TEMP_SUFFIX}", "ck.a1.npz.tmp", "ck.npz.bak"]
    for name in ours + theirs:
        (tmp_path / name).write_bytes(b"PK partial")
    assert remove_stale_temporaries(path) == ours
    assert sorted(os.listdir(tmp_path)) == sorted(["ck.npz", *theirs])
    assert read_extra(path) == {"epoch": 1}


def test_a_checkpoint_of_the_older_runner_format_is_named_as_such(tmp_path):
    """The runner's first format (its own archive) is refused in one line that says what it is."""
    np.savez(tmp_path / "old.npz", __format__=np.array(1), __extra__=np.array('{"epoch": 1}'),
             **{"model/hidden/kernel": np.zeros((6, 16), np.float32)})
    for read in (read_extra, lambda p: restore_checkpoint(p, *fresh())):
        with pytest.raises(CheckpointReadError, match=re.escape(str(tmp_path / "old.npz")) +
                           " is a checkpoint of the runner's older format"):
            read(tmp_path / "old.npz")
