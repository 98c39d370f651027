"""Tests for training.data: every source, the split, standardisation, the IDX
parser and its errors, spec checking, and batching. Files are tiny and written
under tmp_path, so nothing is downloaded and the suite stays fast."""

import gzip
import struct

import numpy as np
import pytest

from training.data import DataError, iterate_batches, load_dataset, num_batches, read_idx

IDX_CODES = {np.uint8: 0x08, np.int8: 0x09, np.int16: 0x0B, np.int32: 0x0C,
             np.float32: 0x0D, np.float64: 0x0E}


def idx_bytes(array: np.ndarray) -> bytes:
    """Encode an array as IDX independently of the parser under test."""
    header = bytes([0, 0, IDX_CODES[array.dtype.type], array.ndim])
    header += struct.pack(f">{array.ndim}I", *array.shape)
    return header + array.astype(array.dtype.newbyteorder(">")).tobytes()


def write_idx(path, array, compress=False):
    data = idx_bytes(array)
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def check_dataset(data, n_features, task, num_classes):
    assert data.x_train.dtype == np.float32 and data.x_test.dtype == np.float32
    assert data.x_train.shape[1] == data.x_test.shape[1] == data.num_features == n_features
    assert (data.task, data.num_classes) == (task, num_classes)
    assert len(data.x_train) == len(data.y_train) and len(data.x_test) == len(data.y_test)
    if task == "regression":
        assert data.y_train.dtype == np.float32 and data.y_train.shape == (len(data.x_train), 1)
        assert data.y_test.shape == (len(data.x_test), 1)
    else:
        assert data.y_train.dtype == np.int64 and data.y_train.ndim == 1
        assert data.y_train.min() >= 0 and data.y_train.max() < num_classes


# --- scikit-learn sets ----------------------------------------------------------

@pytest.mark.parametrize("name, n, n_features, task, num_classes", [
    ("digits", 1797, 64, "classification", 10),
    ("iris", 150, 4, "classification", 3),
    ("wine", 178, 13, "classification", 3),
    ("breast_cancer", 569, 30, "binary", 2),
    ("diabetes", 442, 10, "regression", 0),
])
def test_bundled_sets(name, n, n_features, task, num_classes):
    data = load_dataset({"name": name, "test_size": 0.25}, seed=0)
    check_dataset(data, n_features, task, num_classes)
    assert len(data.x_test) == int(np.ceil(0.25 * n))
    assert len(data.x_train) + len(data.x_test) == n


@pytest.mark.parametrize("spec, n_features, task, num_classes", [
    ({"name": "moons", "n_samples": 200, "noise": 0.2}, 2, "binary", 2),
    ({"name": "circles", "n_samples": 200, "factor": 0.3}, 2, "binary", 2),
    ({"name": "classification", "n_samples": 200, "n_features": 5, "n_classes": 3},
     5, "classification", 3),
    ({"name": "classification", "n_samples": 200, "n_features": 4}, 4, "binary", 2),
    ({"name": "regression", "n_samples": 200, "n_features": 3, "noise": 0.5}, 3, "regression", 0),
])
def test_generated_sets(spec, n_features, task, num_classes):
    data = load_dataset(spec, seed=1)
    check_dataset(data, n_features, task, num_classes)
    assert (len(data.x_train), len(data.x_test)) == (160, 40)


def test_generated_sets_follow_the_seed():
    spec = {"name": "moons", "n_samples": 100}
    same = load_dataset(spec, seed=3), load_dataset(spec, seed=3)
    np.testing.assert_array_equal(same[0].x_train, same[1].x_train)
    assert not np.array_equal(same[0].x_train, load_dataset(spec, seed=4).x_train)


def test_scale_divides_features():
    raw = load_dataset({"name": "digits"}, seed=0)
    scaled = load_dataset({"name": "digits", "scale": 16}, seed=0)
    np.testing.assert_allclose(scaled.x_train, raw.x_train / 16)
    assert scaled.x_train.max() == 1.0


# --- split and standardisation --------------------------------------------------

def test_split_is_seeded():
    first, again = (load_dataset({"name": "iris"}, seed=7) for _ in range(2))
    other = load_dataset({"name": "iris"}, seed=8)
    np.testing.assert_array_equal(first.x_test, again.x_test)
    np.testing.assert_array_equal(first.y_train, again.y_train)
    assert not np.array_equal(first.x_test, other.x_test)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_split_is_stratified(seed):
    data = load_dataset({"name": "iris", "test_size": 0.2}, seed=seed)
    assert np.bincount(data.y_test).tolist() == [10, 10, 10]
    assert np.bincount(data.y_train).tolist() == [40, 40, 40]


def test_standardize_fits_on_train_only():
    raw = load_dataset({"name": "wine"}, seed=5)
    data = load_dataset({"name": "wine", "standardize": True}, seed=5)
    np.testing.assert_allclose(data.x_train.mean(axis=0), 0, atol=1e-5)
    np.testing.assert_allclose(data.x_train.std(axis=0), 1, atol=1e-4)
    mean, std = raw.x_train.mean(axis=0), raw.x_train.std(axis=0)
    np.testing.assert_allclose(data.x_test, (raw.x_test - mean) / std, rtol=1e-4, atol=1e-4)
    assert np.abs(data.x_test.mean(axis=0)).max() > 1e-3  # test stats were not used


def test_standardize_leaves_constant_columns_unscaled():
    data = load_dataset({"name": "digits", "standardize": True}, seed=0)
    assert np.isfinite(data.x_train).all() and np.isfinite(data.x_test).all()
    raw = load_dataset({"name": "digits"}, seed=0)
    constant = np.ptp(raw.x_train, axis=0) == 0
    assert constant.any()
    np.testing.assert_array_equal(data.x_train[:, constant], 0)
    np.testing.assert_allclose(data.x_test[:, constant],
                               raw.x_test[:, constant] - raw.x_train[0, constant])


# --- IDX parser -----------------------------------------------------------------

@pytest.mark.parametrize("compress", [False, True])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32, np.float32, np.float64])
def test_idx_round_trip(tmp_path, dtype, compress):
    values = np.arange(24).reshape(2, 3, 4) * 5  # 0..115 fits every dtype
    kind = np.dtype(dtype).kind
    shifted = values if kind == "u" else values - 50 if kind == "i" else values / 4 - 3.5
    array = shifted.astype(dtype)
    path = write_idx(tmp_path / "a.idx", array, compress)
    parsed = read_idx(path)
    assert parsed.dtype == np.dtype(dtype) and parsed.shape == (2, 3, 4)
    np.testing.assert_array_equal(parsed, array)
    assert parsed.flags.writeable


def test_idx_gzip_detected_by_content_not_name(tmp_path):
    labels = np.array([3, 1, 4], dtype=np.uint8)
    gzipped_without_suffix = write_idx(tmp_path / "labels-idx1-ubyte", labels, compress=True)
    raw_with_suffix = write_idx(tmp_path / "labels-idx1-ubyte.gz", labels, compress=False)
    np.testing.assert_array_equal(read_idx(gzipped_without_suffix), labels)
    np.testing.assert_array_equal(read_idx(raw_with_suffix), labels)


def test_idx_missing_file(tmp_path):
    path = tmp_path / "nothing-idx3-ubyte"
    with pytest.raises(DataError, match="not found") as error:
        read_idx(path)
    assert str(path) in str(error.value)


@pytest.mark.parametrize("compress", [False, True])
def test_idx_truncated_file(tmp_path, compress):
    data = idx_bytes(np.zeros((4, 5, 5), dtype=np.uint8))[:-10]
    path = tmp_path / "short-idx3-ubyte"
    path.write_bytes(gzip.compress(data) if compress else data)
    with pytest.raises(DataError, match="truncated") as error:
        read_idx(path)
    assert str(path) in str(error.value) and "(4, 5, 5)" in str(error.value)


@pytest.mark.parametrize("content", [
    b"\x01\x00\x08\x01\x00\x00\x00\x01\x05",  # first byte not zero
    b"\x00\x00\x07\x01\x00\x00\x00\x01\x05",  # unknown dtype code
    b"PK\x03\x04 not idx",
    b"\x00",
])
def test_idx_bad_magic(tmp_path, content):
    path = tmp_path / "bad.idx"
    path.write_bytes(content)
    with pytest.raises(DataError, match="bad magic") as error:
        read_idx(path)
    assert str(path) in str(error.value)


def test_idx_other_errors_name_the_file(tmp_path):
    cut_gzip = tmp_path / "cut.gz"
    cut_gzip.write_bytes(gzip.compress(idx_bytes(np.ones((50,), dtype=np.uint8)))[:12])
    short_header = tmp_path / "header.idx"
    short_header.write_bytes(b"\x00\x00\x08\x03\x00\x00\x00\x02")
    trailing = tmp_path / "trailing.idx"
    trailing.write_bytes(idx_bytes(np.ones((3,), dtype=np.uint8)) + b"\x00")
    for path, message in [(cut_gzip, "gzip"), (short_header, "header"), (trailing, "trailing")]:
        with pytest.raises(DataError, match=message) as error:
            read_idx(path)
        assert str(path) in str(error.value)


# --- MNIST directory ------------------------------------------------------------

def write_mnist(directory, n_train=6, n_test=4, compress=True):
    rng = np.random.default_rng(0)
    for prefix, n in [("train", n_train), ("t10k", n_test)]:
        images = rng.integers(0, 256, size=(n, 4, 3), dtype=np.uint8)
        labels = (np.arange(n) % 10).astype(np.uint8)
        suffix = ".gz" if compress else ""
        write_idx(directory / f"{prefix}-images-idx3-ubyte{suffix}", images, compress)
        write_idx(directory / f"{prefix}-labels-idx1-ubyte{suffix}", labels, compress)
    return directory


@pytest.mark.parametrize("compress", [False, True])
def test_mnist_directory(tmp_path, compress):
    write_mnist(tmp_path, compress=compress)
    data = load_dataset({"name": "mnist_idx", "path": str(tmp_path)}, seed=0)
    check_dataset(data, 12, "classification", 6)
    assert data.x_train.shape == (6, 12) and data.x_test.shape == (4, 12)
    images = read_idx(tmp_path / f"train-images-idx3-ubyte{'.gz' if compress else ''}")
    np.testing.assert_allclose(data.x_train, images.reshape(6, 12) / 255, rtol=1e-6)
    np.testing.assert_array_equal(data.y_train, np.arange(6))
    np.testing.assert_array_equal(data.y_test, np.arange(4))


def test_mnist_standardize(tmp_path):
    data = load_dataset({"name": "mnist_idx", "path": str(write_mnist(tmp_path)),
                         "standardize": True}, seed=0)
    np.testing.assert_allclose(data.x_train.mean(axis=0), 0, atol=1e-5)


def test_mnist_mismatched_counts(tmp_path):
    write_mnist(tmp_path)
    write_idx(tmp_path / "t10k-labels-idx1-ubyte.gz", np.zeros(3, dtype=np.uint8), True)
    with pytest.raises(DataError, match=r"4 images but .*3 labels") as error:
        load_dataset({"name": "mnist_idx", "path": str(tmp_path)}, seed=0)
    assert "t10k-images-idx3-ubyte.gz" in str(error.value)
    assert "t10k-labels-idx1-ubyte.gz" in str(error.value)


def test_mnist_missing_files(tmp_path):
    write_mnist(tmp_path)
    (tmp_path / "train-labels-idx1-ubyte.gz").unlink()
    with pytest.raises(DataError, match="missing train-labels-idx1-ubyte"):
        load_dataset({"name": "mnist_idx", "path": str(tmp_path)}, seed=0)
    with pytest.raises(DataError, match="directory not found"):
        load_dataset({"name": "mnist_idx", "path": str(tmp_path / "nope")}, seed=0)


def test_mnist_has_no_test_size(tmp_path):
    with pytest.raises(DataError, match=r"data\.test_size: unknown key"):
        load_dataset({"name": "mnist_idx", "path": str(tmp_path), "test_size": 0.1}, seed=0)


# --- .npz files -----------------------------------------------------------------

def test_npz_default_keys_are_split(tmp_path):
    path = tmp_path / "d.npz"
    x = np.arange(40 * 3, dtype=np.float64).reshape(40, 3)
    np.savez(path, x=x, y=np.arange(40) % 4)
    data = load_dataset({"name": "npz", "path": str(path), "test_size": 0.25}, seed=0)
    check_dataset(data, 3, "classification", 4)
    assert (len(data.x_train), len(data.x_test)) == (30, 10)
    assert sorted(np.bincount(data.y_test).tolist()) == [2, 2, 3, 3]  # stratified


def test_npz_presplit_keys_and_images_flattened(tmp_path):
    path = tmp_path / "d.npz"
    np.savez(path, x_train=np.zeros((5, 2, 2), np.uint8), y_train=np.array([0, 1, 0, 1, 1]),
             x_test=np.ones((3, 2, 2), np.uint8), y_test=np.array([1, 0, 1]))
    data = load_dataset({"name": "npz", "path": str(path)}, seed=0)
    check_dataset(data, 4, "binary", 2)
    assert (len(data.x_train), len(data.x_test)) == (5, 3)
    np.testing.assert_array_equal(data.y_test, [1, 0, 1])
    with pytest.raises(DataError, match="test_size: not used"):
        load_dataset({"name": "npz", "path": str(path), "test_size": 0.3}, seed=0)


def test_npz_custom_keys_and_regression(tmp_path):
    path = tmp_path / "d.npz"
    np.savez(path, inputs=np.random.default_rng(0).normal(size=(20, 2)),
             targets=np.linspace(0, 1, 20))
    data = load_dataset({"name": "npz", "path": str(path), "x_key": "inputs",
                         "y_key": "targets"}, seed=0)
    check_dataset(data, 2, "regression", 0)
    with pytest.raises(DataError, match="no array 'x'; it has inputs, targets") as error:
        load_dataset({"name": "npz", "path": str(path)}, seed=0)
    assert str(path) in str(error.value)


def test_npz_errors_name_the_file(tmp_path):
    missing, garbage, ragged = tmp_path / "missing.npz", tmp_path / "g.npz", tmp_path / "r.npz"
    garbage.write_bytes(b"not a zip at all")
    np.savez(ragged, x=np.zeros((4, 2)), y=np.zeros(3))
    for path in (missing, garbage, ragged):
        with pytest.raises(DataError) as error:
            load_dataset({"name": "npz", "path": str(path)}, seed=0)
        assert str(path) in str(error.value)


# --- CSV files ------------------------------------------------------------------

def write_csv(path, text):
    path.write_text(text)
    return str(path)


def csv_rows(n=20):
    return "".join(f"{i},{i * 0.5},{i % 2}\n" for i in range(n))


def test_csv_header_detected_and_label_by_name(tmp_path):
    path = write_csv(tmp_path / "d.csv", "a,b,target\n" + csv_rows())
    data = load_dataset({"name": "csv", "path": path, "label": "target"}, seed=0)
    check_dataset(data, 2, "binary", 2)
    assert len(data.x_train) + len(data.x_test) == 20
    x = np.concatenate([data.x_train, data.x_test])
    np.testing.assert_allclose(x[:, 1], x[:, 0] * 0.5)


def test_csv_without_header_label_by_index(tmp_path):
    path = write_csv(tmp_path / "d.csv", "".join(f"{i % 3},{i},{-i}\n" for i in range(30)))
    data = load_dataset({"name": "csv", "path": path, "label": 0}, seed=0)
    check_dataset(data, 2, "classification", 3)
    x = np.concatenate([data.x_train, data.x_test])
    np.testing.assert_array_equal(np.concatenate([data.y_train, data.y_test]), x[:, 0] % 3)
    with pytest.raises(DataError, match="no header row"):
        load_dataset({"name": "csv", "path": path, "label": "target"}, seed=0)


def test_csv_header_option_and_default_last_column(tmp_path):
    path = write_csv(tmp_path / "d.csv", csv_rows())
    data = load_dataset({"name": "csv", "path": path, "header": True}, seed=0)
    assert len(data.x_train) + len(data.x_test) == 19  # first row taken as the header
    assert data.task == "binary"


def test_csv_class_names_and_regression(tmp_path):
    names = "".join(f"{i},{i % 3},{['cat', 'dog', 'emu'][i % 3]}\n" for i in range(30))
    data = load_dataset({"name": "csv", "path": write_csv(tmp_path / "n.csv", names)}, seed=0)
    check_dataset(data, 2, "classification", 3)
    values = "x,y\n" + "".join(f"{i},{i / 7}\n" for i in range(30))
    data = load_dataset({"name": "csv", "path": write_csv(tmp_path / "r.csv", values)}, seed=0)
    check_dataset(data, 1, "regression", 0)


def test_csv_errors_name_file_and_line(tmp_path):
    path = write_csv(tmp_path / "d.csv", "a,b,label\n1,2,0\n3,oops,1\n")
    with pytest.raises(DataError, match=r"d\.csv:3: column b: 'oops' is not a number"):
        load_dataset({"name": "csv", "path": path}, seed=0)
    path = write_csv(tmp_path / "e.csv", "1,2,0\n3,4\n")
    with pytest.raises(DataError, match=r"e\.csv:2: expected 3 columns"):
        load_dataset({"name": "csv", "path": path}, seed=0)
    with pytest.raises(DataError, match=r"no column 'y'.*columns: a, b, label"):
        load_dataset({"name": "csv", "path": str(tmp_path / "d.csv"), "label": "y"}, seed=0)
    with pytest.raises(DataError, match=r"missing\.csv: file not found"):
        load_dataset({"name": "csv", "path": str(tmp_path / "missing.csv")}, seed=0)


def test_features_that_are_not_finite_are_refused_naming_file_column_and_row(tmp_path):
    rows = "a,b,label\n" + "".join(f"{i},{i % 4},{i % 2}\n" for i in range(20))
    for cell, shown in (("nan", "'nan'"), ("-inf", "'-inf'")):
        path = write_csv(tmp_path / "d.csv", rows.replace("5,1,1", f"5,{cell},1"))
        with pytest.raises(DataError, match=rf"d\.csv:7: column b: {shown} is not a finite"):
            load_dataset({"name": "csv", "path": path}, seed=0)
    path = write_csv(tmp_path / "big.csv", rows.replace("5,1,1", "5,1e39,1"))
    with pytest.raises(DataError, match=r"big\.csv \(as float32\): feature column b, row \d+: "
                                        r"inf is not a finite number"):
        load_dataset({"name": "csv", "path": path}, seed=0)
    x = np.zeros((10, 2, 2))
    x[4, 1, 0] = np.inf
    np.savez(tmp_path / "d.npz", x=x, y=np.arange(10) % 2)
    with pytest.raises(DataError, match=r"d\.npz: array 'x': feature column #2, row 4: inf"):
        load_dataset({"name": "npz", "path": str(tmp_path / "d.npz")}, seed=0)


def test_label_faults_are_blamed_on_the_labels(tmp_path):
    y = np.arange(30) % 3
    for label, shown in ((7, "7"), (-1, "-1")):
        y_bad = y.copy()
        y_bad[4] = label
        np.savez(tmp_path / "d.npz", x=np.ones((30, 2)), y=y_bad)
        with pytest.raises(DataError, match=rf"d\.npz: array 'y': only one example has label "
                                            rf"{shown};"):
            load_dataset({"name": "npz", "path": str(tmp_path / "d.npz")}, seed=0)
    np.savez(tmp_path / "n.npz", x=np.ones((30, 2)), y=np.where(y == 1, np.nan, y))
    with pytest.raises(DataError, match=r"n\.npz: array 'y': label 1 is nan"):
        load_dataset({"name": "npz", "path": str(tmp_path / "n.npz")}, seed=0)


# --- spec checking --------------------------------------------------------------

def test_unknown_key_names_it_and_lists_valid_ones():
    with pytest.raises(DataError) as error:
        load_dataset({"name": "moons", "nosie": 0.1}, seed=0, where="configs/x.toml: data")
    assert str(error.value) == ("configs/x.toml: data.nosie: unknown key; expected one of "
                                "name, n_samples, noise, scale, standardize, test_size")


def test_unknown_or_missing_name():
    with pytest.raises(DataError, match=r"data\.name: unknown dataset 'cifar'.*digits.*csv"):
        load_dataset({"name": "cifar"}, seed=0)
    with pytest.raises(DataError, match=r"data\.name: missing key"):
        load_dataset({}, seed=0)


@pytest.mark.parametrize("spec, message", [
    ({"name": "iris", "test_size": 1.5}, "test_size: expected a number between 0 and 1"),
    ({"name": "iris", "standardize": "yes"}, "standardize: expected true or false"),
    ({"name": "moons", "n_samples": 10.5}, "n_samples: expected a positive integer"),
    ({"name": "moons", "n_samples": True}, "n_samples: expected a positive integer"),
    ({"name": "digits", "scale": 0}, "scale: expected a positive number"),
    ({"name": "npz"}, "path: missing required key"),
    ({"name": "csv", "path": "x.csv", "task": "ranking"}, "task: expected one of"),
    ({"name": "classification", "n_features": 2, "n_classes": 5}, "n_classes"),
])
def test_bad_values(spec, message):
    with pytest.raises(DataError, match=message):
        load_dataset(spec, seed=0)


def test_binary_task_needs_two_classes(tmp_path):
    path = tmp_path / "d.npz"
    np.savez(path, x=np.zeros((9, 1)), y=np.arange(9) % 3)
    with pytest.raises(DataError, match="binary task needs 2 classes"):
        load_dataset({"name": "npz", "path": str(path), "task": "binary"}, seed=0)


# --- batching -------------------------------------------------------------------

def test_num_batches():
    assert [num_batches(n, 4) for n in (0, 1, 4, 5, 8, 9)] == [0, 1, 1, 2, 2, 3]
    with pytest.raises(ValueError):
        num_batches(10, 0)


def test_iterate_batches_covers_every_sample_once():
    x, y = np.arange(23, dtype=np.float32).reshape(23, 1), np.arange(23)
    batches = list(iterate_batches(x, y, 5, np.random.default_rng(0)))
    assert [len(xb) for xb, _ in batches] == [5, 5, 5, 5, 3]
    assert len(batches) == num_batches(23, 5)
    seen = np.concatenate([yb for _, yb in batches])
    assert sorted(seen.tolist()) == list(range(23)) and seen.tolist() != list(range(23))
    for xb, yb in batches:
        np.testing.assert_array_equal(xb[:, 0], yb)  # pairs stay together


def test_iterate_batches_is_seeded_and_can_keep_order():
    x, y = np.zeros((10, 2)), np.arange(10)

    def order(rng, shuffle=True):
        return np.concatenate([yb for _, yb in iterate_batches(x, y, 3, rng, shuffle)]).tolist()

    assert order(np.random.default_rng(1)) == order(np.random.default_rng(1))
    assert order(np.random.default_rng(1)) != order(np.random.default_rng(2))
    assert order(np.random.default_rng(1), shuffle=False) == list(range(10))
