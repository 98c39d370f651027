"""``fw.train``: Checkpoint, CheckpointManager, latest_checkpoint; atomic, checked restores."""
import os

import numpy as np
import pytest

import framework as fw
import layers
import optimizers
from framework import checkpoint_file


def _model(seed=0):
    init = layers.initializers.GlorotUniform(seed=seed)
    model = layers.Sequential([layers.Dense(3, kernel_initializer=init), layers.Dense(2)])
    model(np.ones((1, 4), np.float32))
    return model


def _trained(steps=2):
    model, opt = _model(), optimizers.Adam(0.01)
    for _ in range(steps):
        with fw.GradientTape() as tape:
            loss = fw.reduce_sum(model(np.ones((2, 4), np.float32)) ** 2)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
    return model, opt


def _state(model, opt):
    slots = [opt.get_slot(v, name).numpy() for v in model.trainable_variables
             for name in opt.get_slot_names()]
    return [w.copy() for w in model.get_weights()] + slots + [int(opt.iterations)]


def _same(a, b):
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


def test_save_restore_variables_slots_iterations_and_loop_state(tmp_path):
    model, opt = _trained()
    step = fw.Variable(7, trainable=False)
    extra, rng = {"epoch": 3, "history": [0.5, 0.25]}, np.random.default_rng(1)
    ckpt = fw.train.Checkpoint(model=model, optimizer=opt, step=step, extra=extra, rng=rng)
    path = ckpt.save(str(tmp_path / "run" / "ckpt"))
    assert path == str(tmp_path / "run" / "ckpt-1")
    assert ckpt.save(str(tmp_path / "run" / "ckpt")).endswith("ckpt-2")
    assert fw.train.latest_checkpoint(tmp_path / "run") == str(tmp_path / "run" / "ckpt-2")
    expected_draw = np.random.default_rng(1).random()

    fresh, fresh_opt = _model(seed=5), optimizers.Adam(0.01)
    fresh_step, fresh_extra = fw.Variable(0, trainable=False), {}
    fresh_rng = np.random.default_rng(9)
    restored = fw.train.Checkpoint(model=fresh, optimizer=fresh_opt, step=fresh_step,
                                   extra=fresh_extra, rng=fresh_rng)
    restored.restore(path).assert_consumed()
    assert _same(_state(fresh, fresh_opt), _state(model, opt))
    assert int(fresh_step) == 7 and fresh_extra == extra
    assert fresh_rng.random() == expected_draw
    assert int(restored.save_counter) == 1


def test_write_and_read_take_exact_paths_and_nested_objects(tmp_path):
    class Holder:
        def __init__(self):
            self.weights = [fw.Variable([1.0, 2.0]), {"b": fw.Variable(3.0)}]
            self._private = fw.Variable(0.0)

    holder = Holder()
    ckpt = fw.train.Checkpoint(holder=holder, inner=fw.train.Checkpoint(v=fw.Variable(4.0)))
    path = ckpt.write(str(tmp_path / "exact"))
    assert path == str(tmp_path / "exact") and int(ckpt.save_counter) == 0
    other = Holder()
    other.weights[0].assign([0.0, 0.0])
    v = fw.Variable(0.0)
    fw.train.Checkpoint(holder=other, inner=fw.train.Checkpoint(v=v)).read(path).assert_consumed()
    assert other.weights[0].numpy().tolist() == [1.0, 2.0] and float(v) == 4.0
    assert float(other.weights[1]["b"]) == 3.0


def test_status_reports_partial_matches(tmp_path):
    path = fw.train.Checkpoint(a=fw.Variable(1.0), b=fw.Variable(2.0)).write(str(tmp_path / "c"))
    a, c = fw.Variable(0.0), fw.Variable(0.0)
    status = fw.train.Checkpoint(a=a, c=c).restore(path)
    assert float(a) == 1.0
    with pytest.raises(AssertionError, match="'b'.*'c'"):
        status.assert_consumed()
    status.expect_partial()
    assert fw.train.Checkpoint(a=a).restore(None).assert_consumed()


def test_shape_mismatch_names_the_variable_and_restores_nothing(tmp_path):
    path = fw.train.Checkpoint(w=fw.Variable(np.ones((2, 3), np.float32)),
                               u=fw.Variable(5.0)).write(str(tmp_path / "c"))
    w, u = fw.Variable(np.zeros((3, 2), np.float32), name="weights"), fw.Variable(0.0)
    with pytest.raises(fw.train.CheckpointError,
                       match="'w' \\('weights:0'\\).*\\[3, 2\\].*\\[2, 3\\]"):
        fw.train.Checkpoint(w=w, u=u).restore(path)
    assert float(u) == 0.0  # nothing was restored


def test_corrupted_or_truncated_file_is_one_clear_error(tmp_path):
    path = fw.train.Checkpoint(w=fw.Variable(np.arange(1000.0))).write(str(tmp_path / "c"))
    data = open(path, "rb").read()
    zeroed = data[:300] + b"\0" * 50 + data[350:]
    for broken in (data[:len(data) // 2], b"not a checkpoint", zeroed):
        with open(path, "wb") as f:
            f.write(broken)
        with pytest.raises(fw.train.CheckpointError, match=str(path)):
            fw.train.Checkpoint(w=fw.Variable(np.zeros(1000))).restore(path)
    assert issubclass(fw.train.CheckpointError, ValueError)
    with pytest.raises(fw.train.CheckpointError, match="no such checkpoint"):
        fw.train.Checkpoint(w=fw.Variable(1.0)).restore(str(tmp_path / "missing"))


def test_failed_write_leaves_the_last_checkpoint_whole(tmp_path, monkeypatch):
    v = fw.Variable(np.arange(100.0))
    ckpt = fw.train.Checkpoint(v=v)
    manager = fw.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=2)
    first = manager.save()
    v.assign(v * 0.0)

    def fail_midway(f, **arrays):  # half a file is written, then the disk "fills up"
        f.write(b"PK\x03\x04partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(checkpoint_file.np, "savez", fail_midway)
    with pytest.raises(OSError, match="No space"):
        manager.save()
    monkeypatch.undo()
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "ckpt-1"]  # no temporary file left
    assert manager.latest_checkpoint == first == fw.train.latest_checkpoint(tmp_path)
    assert int(ckpt.save_counter) == 1
    fresh = fw.Variable(np.zeros(100))
    fw.train.Checkpoint(v=fresh).restore(first).assert_consumed()
    assert fresh.numpy().tolist() == list(range(100))


def test_stale_temporary_files_are_removed_on_the_next_save(tmp_path):
    stale = tmp_path / (".ckpt-3." + "abc" + checkpoint_file.TEMP_SUFFIX)
    stale.write_bytes(b"left by a killed process")
    fw.train.CheckpointManager(fw.train.Checkpoint(v=fw.Variable(1.0)), str(tmp_path)).save()
    assert not stale.exists()


def test_stale_temporaries_of_one_target_and_the_header_alone(tmp_path):
    """What a caller with one file needs: the leftovers of writes to that file only, and the
    header read without the arrays (a damaged header is still one error naming the file)."""
    suffix = checkpoint_file.TEMP_SUFFIX
    names = [f".a.npz.x1{suffix}", f".a.npz.y2{suffix}", f".b.npz.z3{suffix}", "a.npz.tmp"]
    for name in names:
        (tmp_path / name).write_bytes(b"PK")
    assert checkpoint_file.remove_stale(
        tmp_path, checkpoint_file.temporary_prefix(tmp_path / "a.npz")) == names[:2]
    assert sorted(os.listdir(tmp_path)) == sorted(names[2:])
    path = fw.train.Checkpoint(v=fw.Variable(np.zeros(3)), loop={"epoch": 2}).write(
        str(tmp_path / "a.npz"))
    assert checkpoint_file.read_header(path)["json"] == {"loop": {"epoch": 2}}
    assert sorted(os.listdir(tmp_path)) == sorted(["a.npz", *names[2:]])  # (only its own)
    np.savez(tmp_path / "plain.npz", v=np.zeros(3))
    with pytest.raises(checkpoint_file.CheckpointReadError, match="plain.npz is not a checkpoint"):
        checkpoint_file.read_header(tmp_path / "plain.npz")


def test_an_exact_restore_lists_every_difference_in_one_error(tmp_path):
    path = fw.train.Checkpoint(w=fw.Variable(np.ones((2, 3), np.float32)), b=fw.Variable(1.0),
                               u=fw.Variable(5.0)).write(str(tmp_path / "c"))
    w, c, u = fw.Variable(np.zeros((3, 2), np.float32), name="weights"), fw.Variable(0.0), \
        fw.Variable(0.0)
    with pytest.raises(fw.train.CheckpointMismatchError) as caught:
        fw.train.restore_exactly(path, w=w, c=c, u=u)
    assert issubclass(fw.train.CheckpointMismatchError, fw.train.CheckpointError)
    message = str(caught.value)
    assert "unexpected in the checkpoint (values no object takes): ['b']" in message
    assert "missing from the checkpoint (objects with no value): ['c']" in message
    assert "'w' ('weights:0') is float32[3, 2], the checkpoint holds float32[2, 3]" in message
    assert float(u) == 0.0  # nothing was restored


def test_manager_numbers_keeps_and_recovers_its_directory(tmp_path):
    v = fw.Variable(0.0)
    ckpt = fw.train.Checkpoint(v=v)
    manager = fw.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=3, checkpoint_name="m")
    for i in range(5):
        v.assign(float(i))
        manager.save()
    names = [os.path.basename(p) for p in manager.checkpoints]
    assert names == ["m-3", "m-4", "m-5"]
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "m-3", "m-4", "m-5"]
    assert manager.save(checkpoint_number=100).endswith("m-100")
    again = fw.train.CheckpointManager(fw.train.Checkpoint(v=fw.Variable(0.0)), str(tmp_path),
                                       max_to_keep=3, checkpoint_name="m")
    assert [os.path.basename(p) for p in again.checkpoints] == ["m-4", "m-5", "m-100"]
    restored = fw.Variable(-1.0)
    fw.train.Checkpoint(v=restored).restore(again.latest_checkpoint)
    assert float(restored) == 4.0
    assert fw.train.latest_checkpoint(str(tmp_path / "nowhere")) is None


def test_bad_arguments_are_named(tmp_path):
    with pytest.raises(TypeError, match="'lr' is a float"):
        fw.train.Checkpoint(lr=0.1)
    with pytest.raises(ValueError, match="max_to_keep"):
        fw.train.CheckpointManager(fw.train.Checkpoint(), str(tmp_path), max_to_keep=0)
    model, opt = _trained(1)
    with pytest.raises(ValueError, match="does not track"):
        fw.train.Checkpoint(optimizer=opt).write(str(tmp_path / "x"))
    with pytest.raises(fw.train.CheckpointError, match="is a directory"):
        fw.train.Checkpoint(optimizer=opt).restore(str(tmp_path))
