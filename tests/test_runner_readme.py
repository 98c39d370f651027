"""The README's ``tape-train`` commands run as written, in order, as a new user types them.

The README marks each code block whose commands this test runs with the line ``MARKER`` just
above its fence (the quick start, then the tour), so the commands are read from the README
itself and never copied here. Each ``tape-train`` command of a marked block (a shell line may
chain it after ``pip install ... &&``) runs in-process, in a fresh folder holding a copy of
``configs/``, and must succeed.
"""

import re
import shlex
import shutil
from pathlib import Path

import pytest

from training.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MARKER = "<!-- tested: tests/test_runner_readme.py runs these commands in order -->"


def marked_commands(text):
    """The ``tape-train`` commands of the marked fenced blocks, in order, as argument lists."""
    commands = []
    for block in re.findall(re.escape(MARKER) + r"\s*\n```[a-z]*\n(.*?)\n```", text, re.S):
        for line in block.splitlines():
            for part in line.split("&&"):
                words = shlex.split(part, comments=True)
                if words[:1] == ["tape-train"]:
                    commands.append(words)
    return commands


def test_marked_commands_are_found_and_stripped_of_comments():
    text = (f"{MARKER}\n```bash\npip install x && tape-train a.toml --no-progress\n```\n"
            f"```bash\ntape-train unmarked.toml\n```\n{MARKER}\n```bash\n"
            f"tape-train a.toml --set 'b[1].c=2' --resume   # go on\n```\n")
    assert marked_commands(text) == [["tape-train", "a.toml", "--no-progress"],
                                     ["tape-train", "a.toml", "--set", "b[1].c=2", "--resume"]]


def test_the_readme_commands_run_as_written(tmp_path, monkeypatch, capsys):
    commands = marked_commands(README.read_text(encoding="utf-8"))
    if not commands:
        pytest.skip(f"README.md marks no block with {MARKER}")
    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    monkeypatch.chdir(tmp_path)
    for command in commands:
        status = main(command[1:])
        assert status == 0, f"{shlex.join(command)} -> {status}: {capsys.readouterr().err}"
