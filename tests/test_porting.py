"""The README's porting rule, as a test: its renaming table turns the TensorFlow original of
the worked example into the port, line for line, and the port runs."""
import re
import runpy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKER = "<!-- porting table:"


def porting_rows():
    """``(tensorflow, here)`` for each row of the README's porting table, in order."""
    lines = (ROOT / "README.md").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(MARKER))
    rows = []
    for line in lines[start + 3:]:  # the marker, the header and the rule
        if not line.startswith("|"):
            break
        cells = [re.findall(r"`([^`]+)`", cell) for cell in line.strip("|").split("|")]
        rows.append((cells[0][0], "\n".join(cells[1])))
    return rows


def port(code, rows):
    """Apply the rows: whole-word prefixes (``tf.`` is not ``xtf.``), in the table's order."""
    for tensorflow, here in rows:
        code = re.sub(r"(?<![\w.])" + re.escape(tensorflow), lambda _: here, code)
    return code


def code_of(path):
    """A file without its module docstring (each file's says which one it is)."""
    text = path.read_text()
    return text[text.index('"""', 3) + 3:]


def test_the_table_turns_the_original_into_the_port():
    rows = porting_rows()
    assert rows[0] == ("import tensorflow as tf", "import framework as fw")
    assert rows[-1] == ("tf.", "fw.")
    original = code_of(ROOT / "examples" / "tf2_original.py")
    assert "tf." in original and "fw." not in original
    assert port(original, rows) == code_of(ROOT / "examples" / "tf2_port.py")


def test_the_port_trains(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(sys, "argv", ["tf2_port.py", "--epochs", "3",
                                      "--checkpoints", str(tmp_path)])
    runpy.run_path(str(ROOT / "examples" / "tf2_port.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "epoch 3: loss" in out
    assert f"saved {tmp_path}/ckpt-3; latest True" in out
    accuracy = float(re.search(r"test accuracy: ([\d.]+)", out).group(1))
    assert accuracy > 0.9
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("ckpt-")) == [
        "ckpt-1", "ckpt-2", "ckpt-3"]
