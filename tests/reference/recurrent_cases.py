"""The recurrent cases, shared by the recording script (run with Keras) and the test that replays
them (with ``layers``): each builds a layer from a spec, ``{"class": name, "config": {...}}``,
whose config values may be specs themselves (a wrapped layer, a list of cells)."""

CASES = {
    "simple_rnn": {"layer": {"class": "SimpleRNN", "config": {"units": 4}}, "input": [2, 5, 3]},
    "simple_rnn_relu_sequences_state": {
        "layer": {"class": "SimpleRNN", "config": {"units": 4, "activation": "relu",
                                                   "return_sequences": True,
                                                   "return_state": True}},
        "input": [2, 5, 3]},
    "gru_sequences": {"layer": {"class": "GRU", "config": {"units": 4, "return_sequences": True}},
                      "input": [2, 5, 3]},
    "gru_reset_before_backwards_state": {
        "layer": {"class": "GRU", "config": {"units": 3, "reset_after": False,
                                             "go_backwards": True, "return_state": True}},
        "input": [2, 6, 4]},
    "gru_hard_sigmoid_no_bias": {
        "layer": {"class": "GRU", "config": {"units": 3, "recurrent_activation": "hard_sigmoid",
                                             "use_bias": False, "return_sequences": True}},
        "input": [2, 4, 3]},
    "lstm_sequences_state": {
        "layer": {"class": "LSTM", "config": {"units": 4, "return_sequences": True,
                                              "return_state": True}},
        "input": [2, 5, 3]},
    "lstm_no_forget_bias_backwards": {
        "layer": {"class": "LSTM", "config": {"units": 3, "unit_forget_bias": False,
                                              "go_backwards": True, "return_sequences": True,
                                              "activation": "relu"}},
        "input": [3, 4, 2]},
    "lstm_initial_state": {
        "layer": {"class": "LSTM", "config": {"units": 3, "return_state": True}},
        "input": [2, 4, 2], "initial_state": [[2, 3], [2, 3]]},
    "lstm_mask_initial_state": {
        "layer": {"class": "LSTM", "config": {"units": 3, "return_sequences": True,
                                              "return_state": True}},
        "input": [3, 6, 2], "initial_state": [[3, 3], [3, 3]],
        "mask": [[1, 1, 1, 1, 0, 0], [0, 0, 1, 1, 1, 1], [1, 0, 1, 0, 0, 1]]},
    "gru_mask_backwards": {
        "layer": {"class": "GRU", "config": {"units": 3, "return_sequences": True,
                                             "go_backwards": True}},
        "input": [3, 5, 2], "mask": [[1, 1, 1, 0, 0], [0, 1, 1, 1, 1], [1, 0, 1, 1, 0]]},
    "simple_rnn_mask_last": {
        "layer": {"class": "SimpleRNN", "config": {"units": 3}},
        "input": [3, 5, 2], "mask": [[1, 1, 1, 0, 0], [0, 1, 1, 1, 1], [1, 1, 1, 1, 0]]},
    "stacked_cells": {
        "layer": {"class": "RNN", "config": {
            "cell": [{"class": "LSTMCell", "config": {"units": 3}},
                     {"class": "GRUCell", "config": {"units": 4}}],
            "return_sequences": True, "return_state": True}},
        "input": [2, 4, 3]},
    "rnn_simple_cell_mask": {
        "layer": {"class": "RNN", "config": {
            "cell": {"class": "SimpleRNNCell", "config": {"units": 3}},
            "return_sequences": True}},
        "input": [2, 4, 3], "mask": [[1, 1, 0, 1], [0, 1, 1, 0]]},
    "masking_lstm": {
        "layer": {"class": "Sequential", "config": {"layers": [
            {"class": "Masking", "config": {}},
            {"class": "LSTM", "config": {"units": 3, "return_sequences": True}}]}},
        "input": [3, 5, 2], "zero_steps": [[0, 3], [1, 4], [2, 0], [2, 1]]},
    "masking_average_pooling": {
        "layer": {"class": "Sequential", "config": {"layers": [
            {"class": "Masking", "config": {}},
            {"class": "GlobalAveragePooling1D", "config": {}}]}},
        "input": [2, 5, 3], "zero_steps": [[0, 1], [0, 4], [1, 0]]},
    "time_distributed_dense": {
        "layer": {"class": "TimeDistributed", "config": {
            "layer": {"class": "Dense", "config": {"units": 3, "activation": "tanh"}}}},
        "input": [2, 4, 3]},
}
for _mode in ("concat", "sum", "mul", "ave", None):
    CASES[f"bidirectional_{_mode}"] = {
        "layer": {"class": "Bidirectional", "config": {
            "layer": {"class": "LSTM", "config": {"units": 3, "return_sequences": True}},
            "merge_mode": _mode}},
        "input": [3, 5, 2], "mask": [[1, 1, 1, 0, 0], [0, 1, 1, 1, 1], [1, 0, 1, 1, 1]]}
CASES["bidirectional_state_backward_gru"] = {
    "layer": {"class": "Bidirectional", "config": {
        "layer": {"class": "GRU", "config": {"units": 3, "return_state": True}},
        "backward_layer": {"class": "GRU", "config": {"units": 2, "return_state": True,
                                                      "go_backwards": True}}}},
    "input": [2, 4, 3], "mask": [[1, 1, 1, 0], [1, 1, 1, 1]]}
CASES["bidirectional_last_mask"] = {
    "layer": {"class": "Bidirectional", "config": {
        "layer": {"class": "SimpleRNN", "config": {"units": 3}}, "merge_mode": "sum"}},
    "input": [2, 4, 3], "mask": [[1, 1, 0, 0], [0, 1, 1, 1]]}

# A text classifier trained on one batch: Embedding(mask_zero) -> LSTM -> Dense, Adam.
CLASSIFIER = {
    "layers": [{"class": "Embedding", "config": {"input_dim": 12, "output_dim": 6,
                                                 "mask_zero": True}},
               {"class": "LSTM", "config": {"units": 8}},
               {"class": "Dense", "config": {"units": 3}}],
    "batch": 8, "steps": 7, "train_steps": 20, "learning_rate": 0.02,
}


def make(module, spec):
    """The layer ``spec`` describes, from ``module`` (``keras.layers`` or ``layers``)."""
    if isinstance(spec, list) and spec and all(isinstance(s, dict) for s in spec):
        return [make(module, s) for s in spec]
    if isinstance(spec, dict) and "class" in spec:
        config = {key: make(module, value) for key, value in spec["config"].items()}
        return getattr(module, spec["class"])(**config)
    return spec
