"""Keras 3's callbacks through fit, against what Keras 3 did (recorded by
tests/reference/make_fit_reference.py): stop epochs, learning rates, CSV files, checkpoint
files, TerminateOnNaN, the order of the hooks; and BackupAndRestore's bit-exact resume."""
import os
import warnings

import numpy as np
import pytest

import framework as fw
import layers
from fit_cases import (DATA, REFERENCE, Interrupt, assert_history, close, compiled, dropout_model,
                       mlp)
from layers import callbacks as cb

x, labels = DATA["x"], DATA["labels"]
RECORDED = REFERENCE["callbacks"]


def fit(model, callbacks, epochs=8, **kwargs):
    return model.fit(x, labels, batch_size=10, epochs=epochs, shuffle=False, verbose=0,
                     callbacks=callbacks, **kwargs)


@pytest.mark.parametrize("name,kwargs", [
    ("min_delta", dict(monitor="loss", min_delta=0.06, patience=1)),
    ("restore", dict(monitor="val_loss", patience=1, min_delta=0.02,
                     restore_best_weights=True)),
    ("start_from_epoch", dict(monitor="loss", min_delta=0.06, patience=0, start_from_epoch=3)),
    ("baseline", dict(monitor="accuracy", baseline=0.99, patience=2))])
def test_early_stopping(name, kwargs):
    recorded = RECORDED[f"early_stopping_{name}"]
    model, stop = compiled(), cb.EarlyStopping(**kwargs)
    history = fit(model, [stop], validation_split=0.25)
    assert_history(history, recorded)
    assert stop.stopped_epoch == recorded["stopped_epoch"]
    for actual, expected in zip(model.get_weights(), recorded["weights"], strict=True):
        close(actual, expected, atol=5e-5)


def test_early_stopping_restores_the_best_weights():
    model = compiled(0.5)
    stop = cb.EarlyStopping(monitor="loss", patience=1, min_delta=0.3,
                            restore_best_weights=True)
    kept = []
    fit(model, [stop, cb.LambdaCallback(on_epoch_end=lambda e, logs: kept.append(
        model.get_weights()))])
    assert stop.stopped_epoch > 0
    for actual, expected in zip(model.get_weights(), kept[stop.best_epoch]):
        np.testing.assert_array_equal(actual, expected)


def test_reduce_lr_on_plateau():
    recorded, rates = RECORDED["reduce_lr"], []
    model = compiled(0.5)
    history = fit(model, [
        cb.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1, min_delta=0.05,
                             min_lr=0.07),
        cb.LambdaCallback(on_epoch_end=lambda e, logs: rates.append(
            float(model.optimizer.learning_rate)))])
    assert_history(history, recorded)
    close(rates, recorded["rates"], atol=1e-7)


def test_learning_rate_scheduler():
    model = compiled(0.4)
    history = fit(model, [cb.LearningRateScheduler(
        lambda epoch, lr: lr if epoch < 2 else lr * 0.5)], epochs=4)
    assert_history(history, RECORDED["scheduler"])


def test_csv_logger_writes_keras_s_file(tmp_path):
    for name, kwargs in (("plain", {}), ("validation", dict(validation_split=0.25))):
        path = tmp_path / f"{name}.csv"
        fit(compiled(), [cb.CSVLogger(path)], epochs=2, **kwargs)
        assert _numbers_close(path.read_text(), RECORDED[f"csv_{name}"])
    path = tmp_path / "append.csv"
    fit(compiled(), [cb.CSVLogger(path, separator=";")], epochs=1)
    fit(compiled(), [cb.CSVLogger(path, separator=";", append=True)], epochs=1,
        validation_split=0.25)
    assert _numbers_close(path.read_text(), RECORDED["csv_append_validation"])


def _numbers_close(text, expected):
    """The same cells, numbers within float32 rounding of the training's arithmetic."""
    rows = [line.replace(";", ",").split(",") for line in text.splitlines()]
    wanted = [line.replace(";", ",").split(",") for line in expected.splitlines()]
    assert [len(r) for r in rows] == [len(r) for r in wanted]
    for row, want in zip(rows, wanted):
        for cell, expected_cell in zip(row, want):
            try:
                close(float(cell), float(expected_cell))
            except ValueError:
                assert cell == expected_cell
    return True


@pytest.mark.parametrize("name,kwargs", [
    ("best", dict(filepath="{epoch:02d}-{loss:.2f}.weights.h5", monitor="loss",
                  save_best_only=True, save_weights_only=True)),
    ("every", dict(filepath="w-{epoch}.weights.h5", save_weights_only=True)),
    ("best_max", dict(filepath="m{epoch:02d}-{val_accuracy:.3f}.weights.h5",
                      monitor="val_accuracy", mode="max", save_best_only=True,
                      save_weights_only=True))])
def test_model_checkpoint_files(tmp_path, name, kwargs):
    kwargs = dict(kwargs, filepath=str(tmp_path / kwargs["filepath"]))
    model = compiled(0.5)
    fit(model, [cb.ModelCheckpoint(**kwargs)], epochs=5, validation_split=0.25)
    files = sorted(os.listdir(tmp_path))
    assert files == RECORDED[f"checkpoint_{name}"]
    restored = compiled(0.5)
    restored.load_weights(tmp_path / files[-1])
    if name == "every":
        for a, b in zip(restored.get_weights(), model.get_weights()):
            np.testing.assert_array_equal(a, b)


def test_model_checkpoint_errors_name_the_file():
    with pytest.raises(ValueError, match=r"must end in `.weights.h5`"):
        cb.ModelCheckpoint("w.ckpt", save_weights_only=True)
    with pytest.raises(KeyError, match=r'Failed to format this callback filepath: "{nope}'):
        fit(compiled(), [cb.ModelCheckpoint("{nope}.weights.h5", save_weights_only=True)],
            epochs=1)


def test_terminate_on_nan(capsys):
    recorded = RECORDED["terminate_on_nan"]
    targets = DATA["target"].copy()
    targets[25, 0] = np.nan
    model = mlp(2)
    model.compile(optimizer="sgd", loss="mse")
    batches = []
    history = model.fit(x, targets, batch_size=10, epochs=3, shuffle=False, verbose=0,
                        callbacks=[cb.TerminateOnNaN(), cb.LambdaCallback(
                            on_train_batch_end=lambda batch, logs: batches.append(batch))])
    assert batches == recorded["batches"]
    assert {k: [repr(v) for v in vs] for k, vs in history.history.items()} == \
        recorded["history"]
    assert "Batch 2: Invalid loss, terminating training" in capsys.readouterr().out


def test_hooks_come_in_keras_s_order_with_its_logs():
    hooks = []

    class Recorder(cb.Callback):
        pass

    def hook(name):
        def record(*args, logs=None):
            hooks.append([name, args[0] if args else None,
                          None if logs is None else sorted(logs)])
        return record

    recorder = Recorder()
    for name, _, _ in RECORDED["hooks"]:
        setattr(recorder, name, hook(name))
    model = compiled()
    model.fit(x[:20], labels[:20], batch_size=10, epochs=1, shuffle=False, verbose=0,
              validation_data=(x[20:30], labels[20:30]), callbacks=[recorder])
    expected = RECORDED["hooks"]
    assert [h[0] for h in hooks] == [h[0] for h in expected]
    for (name, first, keys), (_, want_first, want_keys) in zip(hooks, expected):
        if isinstance(want_first, dict):
            assert sorted(first) == sorted(want_first)
            close([first[k] for k in sorted(first)], [want_first[k] for k in sorted(first)])
        else:
            assert (first, keys) == (want_first, want_keys), name
    assert recorder.params == RECORDED["params"]


def test_unknown_monitor_is_keras_s_warning_or_error():
    model = mlp(3)
    model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(x, labels, verbose=0, epochs=1, callbacks=[
            cb.EarlyStopping(monitor="val_nope", mode="min"),
            cb.ReduceLROnPlateau(monitor="nope", mode="min")])
    assert [str(w.message) for w in caught if "nope" in str(w.message)] == \
        REFERENCE["errors"]["unknown_monitor"]
    error = REFERENCE["errors"]["unknown_monitor_auto"]
    with pytest.raises(ValueError) as raised:
        model.fit(x, labels, verbose=0, epochs=1, callbacks=[cb.EarlyStopping("val_nope")])
    assert str(raised.value) == error[1]


def test_tensorboard_writes_epoch_scalars(tmp_path):
    from test_summary import read  # (the event-file reader of fw.summary's tests)
    model = compiled()
    history = fit(model, [cb.TensorBoard(tmp_path / "logs")], epochs=2, validation_split=0.25)
    for run, prefix in (("train", ""), ("validation", "val_")):
        (path,) = (tmp_path / "logs" / run).iterdir()
        scalars = [e for e in read(path) if "tag" in e]
        assert sorted({e["tag"] for e in scalars}) == ["epoch_accuracy", "epoch_loss"]
        loss = [e["value"][0] for e in scalars if e["tag"] == "epoch_loss"]
        close(loss, history.history[f"{prefix}loss"], atol=1e-7)
        assert [e["step"] for e in scalars if e["tag"] == "epoch_loss"] == [0, 1]


def test_tensorboard_batch_scalars_pass_over_a_skipped_step(tmp_path):
    """A step the runner skipped (``on_nonfinite = "skip"``) logs no loss: nothing is written
    for it, the steps around it are."""
    from test_summary import read
    board = cb.TensorBoard(tmp_path / "logs", update_freq=1)
    for batch, logs in enumerate(({"loss": 0.5}, {"loss": None}, {"loss": 0.25})):
        board.on_train_batch_end(batch, logs)
    board.on_train_end()
    (path,) = (tmp_path / "logs" / "train").iterdir()
    scalars = [e for e in read(path) if "tag" in e]
    assert [(e["step"], e["value"][0]) for e in scalars] == [(1, 0.5), (3, 0.25)]


def test_backup_and_restore_resumes_bit_for_bit(tmp_path):
    """Shuffled data, dropout and Adam's slots: an interrupted run, resumed in a fresh model,
    ends with the very weights of an uninterrupted one."""
    whole = dropout_model()
    whole.fit(x, labels, batch_size=8, epochs=4, verbose=0)
    backup = cb.BackupAndRestore(tmp_path / "backup")
    model = dropout_model()
    with pytest.raises(KeyboardInterrupt):
        model.fit(x, labels, batch_size=8, epochs=4, verbose=0, callbacks=[backup, Interrupt(1)])
    fw.random.set_seed(999)  # the resumed process's own state must not matter
    resumed = dropout_model()
    fw.random.set_seed(999)
    history = resumed.fit(x, labels, batch_size=8, epochs=4, verbose=0, callbacks=[backup])
    assert history.epoch == [2, 3]
    for a, b in zip(resumed.get_weights(), whole.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    assert int(resumed.optimizer.iterations) == int(whole.optimizer.iterations)
    assert not os.path.exists(tmp_path / "backup" / "backup.ckpt")  # deleted at the end


def test_callback_list_calls_batch_hooks_only_where_overridden():
    class EpochsOnly(cb.Callback):
        def on_epoch_end(self, epoch, logs=None):
            self.seen = epoch

    class Batches(cb.Callback):
        count = 0

        def on_batch_end(self, batch, logs=None):  # Keras 2's name still works
            Batches.count += 1

    callbacks = cb.CallbackList([EpochsOnly(), Batches()], model=compiled())
    callbacks.on_train_batch_end(0, {})
    assert Batches.count == 1
    with pytest.raises(TypeError, match="callbacks must be"):
        cb.CallbackList([lambda: None])


def test_save_freq_in_batches(tmp_path):
    model = compiled()
    fit(model, [cb.ModelCheckpoint(str(tmp_path / "b{epoch}-{batch}.weights.h5"),
                                   save_weights_only=True, save_freq=3)], epochs=2)
    assert sorted(os.listdir(tmp_path)) == ["b1-3.weights.h5", "b2-2.weights.h5"]
    with pytest.raises(ValueError, match="Unrecognized save_freq: 0"):
        cb.ModelCheckpoint("w.weights.h5", save_weights_only=True, save_freq=0)
    with pytest.raises(ValueError, match="Invalid value for argument `save_freq`"):
        cb.BackupAndRestore(tmp_path, save_freq="batch")


def test_backup_needs_a_built_model(tmp_path):
    backup = cb.BackupAndRestore(tmp_path / "backup", delete_checkpoint=False)
    fit(compiled(), [backup], epochs=1)
    assert os.path.exists(tmp_path / "backup" / "backup.ckpt")

    class Unbuilt(layers.Model):
        def __init__(self):
            super().__init__()
            self.dense = layers.Dense(3)

        def call(self, inputs):
            return self.dense(inputs)

    model = Unbuilt()
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match=r"BackupAndRestore \(restoring its backup as fit "
                                         r"begins\) needs the weights"):
        model.fit(x, DATA["one_hot"], verbose=0, callbacks=[backup])


def test_progress_bar_on_a_terminal(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    model = compiled()
    model.fit(x, labels, batch_size=10, epochs=2, verbose=1)
    out = capsys.readouterr()
    assert "Epoch 2/2" in out.out and "4/4 - " in out.out
    assert "step" in out.out + out.err  # tqdm's bar, as it was drawn
