"""The promise every bad argument and bad input keeps: one line that starts by naming the
culprit (the layer, op or key, then the argument)."""
import pytest


def raises_one_line(call, error, start):
    """``call()`` raises ``error`` (a type or a tuple of them) with a one-line message that
    starts with ``start``; returns the message."""
    with pytest.raises(error) as raised:
        call()
    message = str(raised.value)
    assert message.startswith(start) and "\n" not in message, message
    return message
