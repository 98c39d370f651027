"""The run folder: what may be written there, when, and what a resume may change.

A run folder holds the runner's files (``RUN_FILES``) and whatever else its owner put there,
which the runner never touches. Its rules, in the order a run meets them:

- **One run at a time.** ``runlock.FolderLock`` holds the folder from the first check to the
  exit; its lock file (gone again at the exit) is the one thing written before the checks,
  and finds a read-only or full disk before anything is trained.
- **Checked before anything else is written.** ``check_folder`` only looks: an output path
  that is a file, a run already there without ``--resume``/``--overwrite``, a ``--resume``
  without a checkpoint are refused while the folder is exactly as it was. A folder without a
  checkpoint holds no run (its run stopped before its first checkpoint): the next run replaces
  its files. The runner then loads the data and builds the model, and ``check_space`` makes
  sure a checkpoint fits on the disk; only a run that got that far touches the folder.
- **Replaced at the new run's first checkpoint.** ``--overwrite`` deletes nothing up front:
  until the new run has written its first checkpoint (an atomic rename), the folder holds the
  old run as it was, the new run's records being staged beside it (``records.STAGED``). Then
  the new ``config.toml`` and records take the old ones' place, and the old files the new run
  does not write at all (another metrics format, say) go (``remove_leftovers``).
- **Crash leftovers cleared.** ``prepare_folder`` removes the temporary files a process killed
  in the middle of a save left behind.
- **Every write failure is one line.** ``writing`` turns the ``OSError`` of a full or read-only
  disk into a ``RunError`` naming the file; what was there before stays as it was.
- **A resume changes only what may change.** ``changed_keys`` lists every other key whose value
  differs from the checkpoint's config, as ``ConfigChanged``, before anything is restored.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .checkpoint import remove_stale_temporaries
from .config.reading import dump_toml, render_key
from .records import STAGED

CHECKPOINT = "checkpoint.npz"
RUN_FILES = ("config.toml", CHECKPOINT, "metrics.jsonl", "metrics.csv", "steps.jsonl",
             "steps.csv", "curves.png")
# Keys a resumed run may change: how long it goes on, where its records go, what it does
# after a non-finite step, where its arrays live (the checkpoint holds host arrays, restored
# onto either backend); none of them changes what the steps so far computed.
RESUMABLE_CHANGES = ("epochs", "name", "output_dir", "output", "on_nonfinite", "backend")
MISSING = object()  # a key that one of two configs compared does not have


class RunError(RuntimeError):
    """The run folder or checkpoint does not allow what was asked (start, resume), or a file
    of the run cannot be written. ``status`` is the command's exit status."""

    status = 2


class ConfigChanged(RunError):
    """A resume whose config differs from the checkpoint's in keys a resume may not change.

    ``changes`` holds ``(tokens, saved, current)`` per key, a value absent on one side as
    ``MISSING``, with ``tokens`` the key's path (``["optimizers", 1, "learning_rate"]``); ``saved``
    is the checkpoint's whole config, from which a command that resumes can be made."""

    def __init__(self, run_dir: Path, changes: list[tuple[list[Any], Any, Any]],
                 saved: dict[str, Any]):
        self.run_dir, self.changes, self.saved = run_dir, changes, saved
        described = "; ".join(f"{render_key(tokens)} is {_shown(old)} in the run but "
                              f"{_shown(new)} now" for tokens, old, new in changes)
        super().__init__(f"{run_dir}: cannot resume with a different config ({described}; only "
                         f"{', '.join(RESUMABLE_CHANGES)} may change on resume)")


def _shown(value: Any) -> str:
    return "not set" if value is MISSING else repr(value)


def check_path(run_dir: Path) -> None:
    """Refuse an output path that is, or goes through, a file (before the lock creates it)."""
    for parent in (run_dir, *run_dir.parents):
        if parent.exists() and not parent.is_dir():
            raise RunError(f"{run_dir}: the run folder's path goes through {parent}, which is a "
                           f"file, not a folder; pass --output DIR to put the run elsewhere")
        if parent.is_dir():
            break


def check_folder(run_dir: Path, resume: bool, overwrite: bool) -> None:
    """Refuse what the folder does not allow, before anything is written (see the docstring).

    A folder is "a run" only once it holds a checkpoint: the files of a run that stopped before
    its first one (divergence or a crash in epoch 1) are replaced by the next run, as
    ``--overwrite`` would, since there is nothing to resume."""
    if resume:
        if not (run_dir / CHECKPOINT).is_file():
            left = existing_files(run_dir)
            stopped = (f" (its {', '.join(left)} are of a run that stopped before its first "
                       f"checkpoint)" if left else "")
            raise RunError(f"{run_dir}: no {CHECKPOINT} to resume from{stopped}; start the run "
                           f"without --resume")
        return
    if (run_dir / CHECKPOINT).exists() and not overwrite:
        raise RunError(f"{run_dir} already holds a run ({', '.join(existing_files(run_dir))}); "
                       f"pass --resume to continue it or --overwrite to start again (or "
                       f"--output DIR)")


def check_space(run_dir: Path, needed: int) -> None:
    """Refuse a disk without room for one more checkpoint of ``needed`` bytes (each is written
    beside the last one before it replaces it), before any epoch is trained."""
    try:
        stats = os.statvfs(run_dir)
    except (AttributeError, OSError):  # no statvfs here: the writes themselves will tell
        return
    free = stats.f_bavail * stats.f_frsize
    if free < needed:
        raise RunError(f"{run_dir}: {_size(free)} free on its disk, but each {CHECKPOINT} of "
                       f"this model needs about {_size(needed)}; free some space or pass "
                       f"--output DIR")


def _size(count: float) -> str:
    units = ("bytes", "KiB", "MiB", "GiB")
    scale = 0
    while count >= 1024 and scale < len(units) - 1:
        count, scale = count / 1024, scale + 1
    return f"{count:.0f} bytes" if scale == 0 else f"{count:.1f} {units[scale]}"


def existing_files(run_dir: Path) -> list[str]:
    return [name for name in RUN_FILES if (run_dir / name).exists()]


def prepare_folder(run_dir: Path) -> list[str]:
    """Create the folder; remove what killed saves left there. Returns the names removed."""
    with writing(run_dir):
        run_dir.mkdir(parents=True, exist_ok=True)
        removed = remove_stale_temporaries(run_dir / CHECKPOINT)
        for name in RUN_FILES:  # the records' temporary and staged copies (records.py)
            for leftover in (run_dir / f"{name}.tmp", run_dir / f"{name}{STAGED}"):
                if leftover.exists():
                    leftover.unlink()
                    removed.append(leftover.name)
    return removed


def write_config(run_dir: Path, config: dict[str, Any]) -> None:
    """``config.toml``, replaced by a rename: a failed write leaves the previous one whole."""
    path = run_dir / "config.toml"
    temporary = path.with_name(path.name + ".tmp")
    with writing(path):
        try:
            temporary.write_text(dump_toml(config), encoding="utf-8")
            os.replace(temporary, path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise


def remove_leftovers(run_dir: Path, written: set[str]) -> None:
    """Delete the runner's files that the new run does not write (``written``: those it does)."""
    with writing(run_dir):
        for name in RUN_FILES:
            if name not in written and (run_dir / name).exists():
                (run_dir / name).unlink()


@contextlib.contextmanager
def writing(path: Path) -> Iterator[None]:
    """Turn a failed write under ``path`` (disk full, read-only, not a folder) into a RunError."""
    try:
        yield
    except OSError as error:
        culprit = error.filename or path
        raise RunError(f"cannot write {culprit}: {error.strerror or error}; the run folder keeps "
                       f"what it held before this write") from None


def changed_keys(saved: Any, current: Any, prefix: tuple[Any, ...] = ()
                 ) -> list[tuple[list[Any], Any, Any]]:
    """``(tokens, saved, current)`` for every key whose value differs, tables and arrays of
    tables entered key by key, leaving out the top-level keys a resume may change."""
    if isinstance(saved, dict) and isinstance(current, dict):
        keys = [key for key in [*saved, *(k for k in current if k not in saved)]
                if prefix or key not in RESUMABLE_CHANGES]
        pairs = [(key, saved.get(key, MISSING), current.get(key, MISSING)) for key in keys]
    elif (isinstance(saved, list) and isinstance(current, list) and len(saved) == len(current)
          and all(isinstance(item, dict) for item in [*saved, *current])):
        pairs = list(zip(range(len(saved)), saved, current))
    else:
        return [] if saved == current else [(list(prefix), saved, current)]
    changed = []
    for key, old, new in pairs:
        changed += changed_keys(old, new, (*prefix, key))
    return changed
