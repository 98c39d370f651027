"""Values that are no tensor are refused as TensorFlow 2.21 refuses them: ragged rows, numbers
beside lists, None (recorded by ``tests/reference/make_conversion_errors_reference.py``), with
``fw.constant``'s message naming it; and the checkpoint files' refusals of what is no
checkpoint never advise unpickling."""
import ast
import json
import os
from pathlib import Path

import numpy as np
import pytest

import framework as fw
import layers
from framework import checkpoint_file
from framework.train import CheckpointReadError

CASES = json.loads((Path(__file__).parent / "reference" /
                    "conversion_errors_reference.json").read_text())["cases"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_unconvertible_value_is_refused_as_tensorflow_refuses_it(name):
    case = CASES[name]
    value = ast.literal_eval(case["value"])
    expected = case["convert_to_tensor"]
    with pytest.raises(ValueError) as caught:
        fw.convert_to_tensor(value)
    assert type(caught.value).__name__ == expected["type"] and str(caught.value) == \
        expected["message"]
    with pytest.raises(ValueError) as caught:
        fw.constant(value)
    assert str(caught.value) == f"constant: {case['constant']['message']}"


def test_rectangular_values_still_convert():
    assert fw.constant([[1, 2], [3, 4]]).shape == (2, 2)
    assert fw.constant([]).shape == (0,) and fw.constant([[], []]).shape == (2, 0)


def model():
    built = layers.Sequential([layers.Dense(2)])
    built(np.ones((1, 3), np.float32))
    return built


@pytest.mark.parametrize("content, described", [
    (b"hello\nworld\n", "it is text, starting 'hello\\nworld\\n'"),
    (b"", "it is empty"),
])
def test_load_weights_of_a_file_that_is_no_archive(tmp_path, content, described):
    path = tmp_path / "weights.npz"
    path.write_bytes(content)
    net = model()
    before = net.get_weights()
    with pytest.raises(CheckpointReadError) as caught:
        net.load_weights(str(path))
    assert str(caught.value) == f"{path} is not a checkpoint (not an .npz archive: {described})"
    assert all(np.array_equal(a, b) for a, b in zip(before, net.get_weights()))


def test_pickled_arrays_in_a_checkpoint_are_never_loaded(tmp_path):
    path = tmp_path / "objects.npz"
    np.savez(path, __header__=np.array([{"format": 1}], dtype=object))
    with pytest.raises(CheckpointReadError) as caught:
        model().load_weights(str(path))
    message = str(caught.value)
    assert "pickled Python objects" in message and "allow_pickle" not in message


def test_save_weights_has_the_mode_of_a_new_file_and_names_a_folder_given(tmp_path):
    path = tmp_path / "weights.npz"
    model().save_weights(str(path))
    mask = os.umask(0o022)
    os.umask(mask)
    assert (path.stat().st_mode & 0o777) == 0o666 & ~mask
    (tmp_path / "folder").mkdir()
    with pytest.raises(IsADirectoryError) as caught:
        model().save_weights(str(tmp_path / "folder"))
    assert caught.value.filename == str(tmp_path / "folder")
    assert str(tmp_path / "folder") in str(caught.value)
    assert checkpoint_file.TEMP_SUFFIX not in str(caught.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "weights.npz"]

