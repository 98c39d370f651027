"""``fw.__version__``: the version the package was installed with, or, in a source checkout
that is not installed, the one ``pyproject.toml`` declares (one number, kept in one place)."""
import pathlib
import re
from importlib import metadata


def _version():
    pyproject = pathlib.Path(__file__).resolve().parent.parent / "pyproject.toml"
    if pyproject.is_file():  # a checkout: its own declaration, even if another is installed
        found = re.search(r'^version\s*=\s*"([^"]+)"', pyproject.read_text(), re.MULTILINE)
        if found:
            return found.group(1)
    try:
        return metadata.version("tape-framework")
    except metadata.PackageNotFoundError:
        return "0+unknown"


__version__ = _version()
