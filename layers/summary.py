"""``Layer.summary``'s table: each sublayer's output shape and parameter count, then totals."""

_HEADER = ("Layer (type)", "Output Shape", "Param #")


def summary_lines(model):
    """The lines of the summary of a built ``model`` (its direct sublayers, or itself)."""
    rows = [_row(layer) for _, layer in model._sublayers()] or [_row(model)]
    widths = [max(len(row[i]) for row in [*rows, _HEADER]) + 3 for i in range(3)]
    rule = "=" * sum(widths)
    total = model.count_params()
    trainable = sum(int(v._value.size) for v in model.trainable_variables)
    return [f'Model: "{model.name}"', _line(_HEADER, widths), rule,
            *(_line(row, widths) for row in rows), rule,
            f"Total params: {total:,}", f"Trainable params: {trainable:,}",
            f"Non-trainable params: {total - trainable:,}"]


def _row(layer):
    """Name (type), output shape with the batch axis as None, and parameter count."""
    name = f"{layer.name} ({type(layer).__name__})"
    if layer._unbuilt():
        return name, "?", "0"
    if layer._build_input_shape is None:  # weights made without a call (e.g. in __init__)
        return name, "?", f"{layer.count_params():,}"
    shape = layer.compute_output_shape(layer._build_input_shape)
    return name, str((None, *shape[1:])), f"{layer.count_params():,}"


def _line(cells, widths):
    return "".join(cell.ljust(width) for cell, width in zip(cells, widths)).rstrip()
