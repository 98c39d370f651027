"""``BackupAndRestore`` keeps the runner's promises for a ``fit`` user: a save cut short leaves the
previous backup whole, a run interrupted at any epoch resumes bit for bit, and weights that are
not finite (a run ``TerminateOnNaN`` stopped) never replace the last good backup."""
import os

import numpy as np
import pytest

import framework as fw
import layers
from fit_cases import DATA, Interrupt, dropout_model
from layers import callbacks as cb

x, labels = DATA["x"], DATA["labels"]
EPOCHS = 4


def fit(model, callbacks, epochs=EPOCHS):
    return model.fit(x, labels, batch_size=8, epochs=epochs, verbose=0, callbacks=callbacks)


@pytest.fixture(scope="module")
def uninterrupted():
    model = dropout_model()
    fit(model, [])
    return model.get_weights(), int(model.optimizer.iterations)


def resume_and_compare(backup, uninterrupted, first_epoch):
    fw.random.set_seed(999)  # the resumed process's own state must not matter
    resumed = dropout_model()
    fw.random.set_seed(999)
    history = fit(resumed, [backup])
    assert history.epoch == list(range(first_epoch, EPOCHS))
    weights, iterations = uninterrupted
    for a, b in zip(resumed.get_weights(), weights, strict=True):
        np.testing.assert_array_equal(a, b)
    assert int(resumed.optimizer.iterations) == iterations


@pytest.mark.parametrize("epoch", [0, 1, 2])
def test_an_interrupted_fit_resumes_bit_for_bit(tmp_path, uninterrupted, epoch):
    backup = cb.BackupAndRestore(tmp_path / "backup")
    with pytest.raises(KeyboardInterrupt):
        fit(dropout_model(), [backup, Interrupt(epoch)])
    resume_and_compare(backup, uninterrupted, epoch + 1)
    assert not os.path.exists(tmp_path / "backup")  # deleted with its folder at the end


def test_a_failed_save_leaves_the_previous_backup_whole(tmp_path, uninterrupted, monkeypatch):
    path = tmp_path / "backup" / "backup.ckpt"
    saved = []

    class Snapshot(cb.Callback):  # the backup's bytes after each epoch's save
        def on_epoch_end(self, epoch, logs=None):
            saved.append(path.read_bytes())

    real = np.savez

    def disk_full(file, **arrays):  # half the archive written, then the disk is full
        real(file, **dict(list(arrays.items())[:2]))
        raise OSError(28, "No space left on device")

    backup = cb.BackupAndRestore(tmp_path / "backup")
    model = dropout_model()
    with pytest.raises(OSError, match="No space left"):
        fit(model, [backup, Snapshot(), cb.LambdaCallback(
            on_epoch_end=lambda epoch, logs: epoch == 0 and monkeypatch.setattr(
                np, "savez", disk_full))])
    monkeypatch.undo()
    assert len(saved) == 1 and path.read_bytes() == saved[0]  # epoch 1's backup, whole
    assert os.listdir(tmp_path / "backup") == ["backup.ckpt"]  # no temporary file left
    resume_and_compare(backup, uninterrupted, 1)


def test_terminate_on_nan_keeps_the_last_good_backup(tmp_path, capsys):
    def model():
        fw.random.set_seed(3)
        built = layers.Sequential([layers.Input((4,)), layers.Dense(2)])
        built.compile(optimizer="sgd", loss="mse")
        return built

    def train(built, epochs, callbacks=()):
        return built.fit(x, DATA["target"], batch_size=10, epochs=epochs, shuffle=False,
                         verbose=0, callbacks=list(callbacks))

    good = model()
    train(good, 1)
    poison = cb.LambdaCallback(on_epoch_begin=lambda epoch, logs: epoch == 1 and (
        diverged.layers[0].kernel.assign(diverged.layers[0].kernel * np.nan)))
    backup = cb.BackupAndRestore(tmp_path / "backup")
    diverged = model()
    history = train(diverged, 3, [poison, cb.TerminateOnNaN(), backup])
    assert history.epoch == [0, 1]  # stopped at the second epoch's first batch
    out = capsys.readouterr().out
    assert "Batch 0: Invalid loss, terminating training" in out
    assert "keeps the last good backup" in out
    restored = model()
    restored(x[:1])
    fw.train.restore_exactly(str(tmp_path / "backup" / "backup.ckpt"), model=restored,
                             optimizer=restored.optimizer, extra={})  # kept after fit ended
    for a, b in zip(restored.get_weights(), good.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
