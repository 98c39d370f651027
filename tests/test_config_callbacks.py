"""A run config names callbacks (``[[callbacks]] type = "early_stopping"``) by the names of
``layers.callbacks.CALLBACKS``, with Keras's arguments: each registered one trains a run and
does its job there, a bad table is one line naming the key, and a callback a user registers
is usable from TOML with no edit to the runner."""

import json

import numpy as np
import pytest

import framework as fw
import layers
from layers.callbacks import CALLBACKS, Callback
from training.cli import main
from training.config.reading import ConfigError, load_config

from tiny_config import tiny_config

# One optimizer for the whole model (a rate that reduce_lr_on_plateau may set).
ONE_OPTIMIZER = tiny_config().split("[[optimizers]]")[0] + """[optimizer]
type = "sgd"
learning_rate = 0.1

[output]
plot = false
"""


def write(tmp_path, text, callbacks):
    path = tmp_path / "run.toml"
    path.write_text(text.replace("epochs = 2", "epochs = 4") + callbacks)
    return path


def table(kind, **arguments):
    lines = [f'type = "{kind}"'] + [f"{key} = {json.dumps(value)}"
                                    for key, value in arguments.items()]
    return "\n[[callbacks]]\n" + "\n".join(lines) + "\n"


def run(path, out, *args):
    return main([str(path), "--no-progress", "--output", str(out), *args])


def records(out):
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


def test_the_registry_names_keras_callbacks():
    assert CALLBACKS.names() == ["csv_logger", "early_stopping", "model_checkpoint",
                                 "reduce_lr_on_plateau", "tensorboard", "terminate_on_nan"]
    assert CALLBACKS.lookup("EarlyStopping") is fw.keras.callbacks.EarlyStopping


def test_early_stopping_on_the_test_split_stops_the_run(tmp_path):
    # val_accuracy is the test split's (mode "auto": accuracy goes up); no epoch improves by 1
    path = write(tmp_path, ONE_OPTIMIZER, table("early_stopping", monitor="val_accuracy",
                                                min_delta=1, patience=1))
    assert run(path, tmp_path / "run") == 0
    assert [r["epoch"] for r in records(tmp_path / "run")] == [1, 2]


def test_reduce_lr_on_plateau_lowers_the_rate_of_the_next_epochs(tmp_path):
    path = write(tmp_path, ONE_OPTIMIZER, table("reduce_lr_on_plateau", monitor="loss",
                                                min_delta=100, patience=1, factor=0.5))
    assert run(path, tmp_path / "run") == 0
    assert [r["lr"] for r in records(tmp_path / "run")] == pytest.approx([0.1, 0.1, 0.05,
                                                                          0.025])


def test_csv_logger_writes_kerass_columns(tmp_path):
    path = write(tmp_path, ONE_OPTIMIZER, table("csv_logger", filename=str(tmp_path / "l.csv")))
    assert run(path, tmp_path / "run") == 0
    lines = (tmp_path / "l.csv").read_text().splitlines()
    assert lines[0] == "epoch,accuracy,loss,lr,val_accuracy,val_loss"
    assert len(lines) == 5
    last = dict(zip(lines[0].split(","), map(float, lines[-1].split(","))))
    saved = records(tmp_path / "run")[-1]
    assert last["val_loss"] == saved["test_loss"] and last["loss"] == saved["loss"]


def test_model_checkpoint_saves_the_weights_of_each_epoch(tmp_path):
    path = write(tmp_path, tiny_config(), table(
        "model_checkpoint", filepath=str(tmp_path / "w-{epoch:02d}.weights.h5"),
        save_weights_only=True))
    assert run(path, tmp_path / "run") == 0
    assert sorted(p.name for p in tmp_path.glob("w-*")) == [f"w-0{i}.weights.h5"
                                                            for i in range(1, 5)]
    model = layers.Sequential([layers.Dense(16, activation="relu"), layers.Dropout(0.25),
                               layers.Dense(3)])
    model(np.zeros((1, 4), np.float32))
    model.load_weights(str(tmp_path / "w-04.weights.h5"))
    from test_runner import final_weights
    for got, want in zip(model.get_weights(), final_weights(tmp_path / "run"), strict=True):
        np.testing.assert_array_equal(got, want)


def test_tensorboard_writes_train_and_validation_scalars(tmp_path):
    path = write(tmp_path, tiny_config(), table("tensorboard", log_dir=str(tmp_path / "tb")))
    assert run(path, tmp_path / "run") == 0
    for folder in ("train", "validation"):
        assert list((tmp_path / "tb" / folder).glob("events.out.tfevents.*"))


def test_terminate_on_nan_stops_and_the_last_good_checkpoint_stays(tmp_path, capsys):
    diverging = ONE_OPTIMIZER.replace("learning_rate = 0.1", "learning_rate = 1e30")
    path = write(tmp_path, 'on_nonfinite = "continue"\n' + diverging,
                 table("terminate_on_nan"))
    assert run(path, tmp_path / "run") == 0
    assert "Invalid loss, terminating training" in capsys.readouterr().out
    assert len(records(tmp_path / "run")) == 1  # stopped in epoch 1
    assert not (tmp_path / "run" / "checkpoint.npz").exists()  # no good epoch to keep


@pytest.mark.parametrize("callbacks, message", [
    (table("early_stopping", patiense=2),
     "callbacks[0].patiense: unknown key (did you mean 'patience'?)"),
    (table("early_stopping", patience="2"),
     "callbacks[0].patience: expected an integer, got '2' (a string)"),
    (table("early_stop"), "callbacks[0].type: expected one of 'csv_logger', 'early_stopping'"),
    (table("reduce_lr_on_plateau", factor=2.0),
     "callbacks[0].factor: callback 'reduce_lr_on_plateau' rejects this: ReduceLROnPlateau "
     "does not support a factor >= 1.0"),
    (table("model_checkpoint", filepath="best.txt"),
     "callbacks[0].filepath: callback 'model_checkpoint' rejects this"),
    (table("model_checkpoint"), "callbacks[0].filepath: missing required key"),
    (table("early_stopping", mode="sideways"), "callbacks[0].mode: callback 'early_stopping' "
                                               "rejects this: EarlyStopping mode 'sideways' is "
                                               "unknown"),
    ("callbacks = 3\n", "callbacks: expected an array of tables ([[callbacks]]), got 3"),
])
def test_a_bad_callback_table_is_one_line_naming_the_key(tmp_path, callbacks, message):
    text = ONE_OPTIMIZER if callbacks.startswith("\n") else callbacks + ONE_OPTIMIZER
    path = write(tmp_path, text, callbacks if callbacks.startswith("\n") else "")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}: ") and message in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("text, message", [
    (tiny_config(), "'reduce_lr_on_plateau' sets the rate of one optimizer, but this config "
                    "has 2 ([[optimizers]])"),
    (ONE_OPTIMIZER.replace("learning_rate = 0.1", "learning_rate = 0.1\n[optimizer.schedule]\n"
                           "type = \"cosine_decay\"\ndecay_steps = 10"),
     "'reduce_lr_on_plateau' sets the optimizer's rate, which [optimizer.schedule] gives"),
])
def test_a_rate_callback_is_refused_where_it_cannot_set_the_rate(tmp_path, text, message):
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, text, table("reduce_lr_on_plateau")))
    assert "callbacks[0].type: " + message in str(caught.value)


def test_changing_the_callbacks_on_resume_is_refused(tmp_path, capsys):
    path = write(tmp_path, ONE_OPTIMIZER, "")
    assert run(path, tmp_path / "run", "--set", "epochs=1") == 0
    path.write_text(path.read_text() + table("early_stopping"))
    capsys.readouterr()
    assert run(path, tmp_path / "run", "--resume") == 2
    assert "callbacks" in capsys.readouterr().err


@pytest.fixture
def scratch_callbacks(monkeypatch):
    monkeypatch.setattr(CALLBACKS, "_by_name", dict(CALLBACKS._by_name))
    monkeypatch.setattr(CALLBACKS, "_canonical", dict(CALLBACKS._canonical))


def test_a_registered_callback_is_usable_from_a_config(tmp_path, scratch_callbacks):
    seen = []

    @CALLBACKS.register(name="epoch_counter")
    class EpochCounter(Callback):
        def __init__(self, every=1):
            super().__init__()
            self.every = every

        def on_epoch_end(self, epoch, logs=None):
            if (epoch + 1) % self.every == 0:
                seen.append((epoch, sorted(logs)))

    path = write(tmp_path, tiny_config(), table("epoch_counter", every=2))
    config, _ = load_config(path)
    assert config["callbacks"] == [{"type": "epoch_counter", "every": 2}]
    assert run(path, tmp_path / "run") == 0
    keys = ["accuracy", "loss", "lr/hidden", "lr/out", "val_accuracy", "val_loss"]
    assert seen == [(1, keys), (3, keys)]


@pytest.mark.parametrize("callbacks", [
    table("reduce_lr_on_plateau", monitor="loss", min_delta=100, patience=2, factor=0.5),
    table("reduce_lr_on_plateau", monitor="loss", min_delta=100, patience=1, factor=0.5),
    table("early_stopping", monitor="loss", min_delta=100, patience=2),  # stops at epoch 3
    # (best weights put back once fit ends: the run's checkpoint is the last epoch's, to resume)
    table("early_stopping", monitor="loss", min_delta=100, patience=2,
          restore_best_weights=True),
])
def test_a_resume_with_stateful_callbacks_ends_as_the_uninterrupted_run(tmp_path, callbacks):
    """The callbacks' state (a plateau's wait and best, the rate it set at epoch 2's end) is in
    the checkpoint: stopped after epoch 2 and resumed, the run ends with the uninterrupted
    run's records and weights."""
    from test_runner import assert_same_weights, final_weights
    path = write(tmp_path, ONE_OPTIMIZER,
                 callbacks)
    assert run(path, tmp_path / "whole") == 0
    assert run(path, tmp_path / "resumed", "--set", "epochs=2") == 0
    assert run(path, tmp_path / "resumed", "--resume") == 0
    assert records(tmp_path / "resumed") == records(tmp_path / "whole")
    assert_same_weights(final_weights(tmp_path / "resumed"), final_weights(tmp_path / "whole"))


def test_under_mpi_the_callbacks_that_write_files_are_the_roots_alone(tmp_path, monkeypatch):
    from framework import distributed
    from training.config.callbacks import make_callbacks
    path = write(tmp_path, ONE_OPTIMIZER, table("csv_logger", filename="l.csv")
                 + table("early_stopping") + table("tensorboard")
                 + table("model_checkpoint", filepath="m.keras") + table("terminate_on_nan"))
    config, _ = load_config(path)
    monkeypatch.setattr(distributed._w, "size", 2)
    kinds = {}
    for rank in (0, 1):
        monkeypatch.setattr(distributed._w, "rank", rank)
        kinds[rank] = {position: type(callback).__name__
                       for position, callback in make_callbacks(config).items()}
    assert kinds[0] == {0: "CSVLogger", 1: "EarlyStopping", 2: "TensorBoard",
                        3: "ModelCheckpoint", 4: "TerminateOnNaN"}
    assert kinds[1] == {1: "EarlyStopping", 4: "TerminateOnNaN"}
