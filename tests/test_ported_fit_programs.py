"""Public TF2 programs that train through ``compile``/``fit`` and callbacks (tests/programs/),
ported by ``tf`` -> ``fw`` alone, against TensorFlow 2.21 / Keras 3's runs of the same code from
the same initial weights (tests/reference/make_fit_programs_reference.py)."""
import json
from pathlib import Path

import numpy as np
import pytest

import framework as fw
from programs_setup import FIT_PROGRAMS, init_weights
from test_ported_programs import close, load

REFERENCE = json.loads((Path(__file__).parent / "reference"
                        / "fit_programs_reference.json").read_text())


@pytest.mark.parametrize("name", FIT_PROGRAMS)
def test_a_fit_program_gives_tensorflows_numbers(name):
    got = json.loads(json.dumps(load(name).main(fw, init=init_weights)))  # (tuples as lists)
    close(got, REFERENCE[name], 1e-4)


def test_a_sequential_built_from_an_int_input_feeds_its_embedding_ids():
    model = fw.keras.Sequential([fw.keras.Input((3,), dtype="int32"),
                                 fw.keras.layers.Embedding(5, 2)])
    assert [w.shape for w in model.get_weights()] == [(5, 2)]  # (built on int32 zeros)
    ids = np.array([[1, 2, 4]], "int32")
    assert np.allclose(model(ids), model.get_weights()[0][[1, 2, 4]][None])


def test_an_embedding_takes_the_ids_of_a_float_input():
    """Keras's ``Input(shape=(maxlen,))`` is float32, and its Embedding casts the ids to int32
    (keras.io's Transformer text classifier relies on it), eagerly and compiled alike."""
    inputs = fw.keras.Input((3,))
    layer = fw.keras.layers.Embedding(5, 2)
    model = fw.keras.Model(inputs, layer(inputs))
    table = layer.embeddings.numpy()
    ids = np.array([[1, 2, 4]], "float32")
    np.testing.assert_array_equal(model(ids), table[[1, 2, 4]][None])
    lookup = fw.function(lambda x: layer(x))
    for rows in ([[0, 3, 3]], [[4, 1, 0]]):  # (a second call, on other ids)
        np.testing.assert_array_equal(lookup(fw.constant(np.array(rows, "float32"))),
                                      table[rows[0]][None])
