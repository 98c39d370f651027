"""The training runner: configs, data, checkpoints and the loop, on top of layers and optimizers."""
