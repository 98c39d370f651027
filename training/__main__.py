"""``python -m training CONFIG``: the same command as ``tape-train``."""
from .cli import main

raise SystemExit(main())
