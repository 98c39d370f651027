"""One run at a time in a run folder: an exclusive lock held from the first check to the exit.

Two commands on one folder at once (``--resume`` beside ``--overwrite``, two ``--resume``s)
would interleave their epochs in one ``metrics.jsonl`` and replace each other's checkpoints.
``FolderLock`` takes an advisory ``flock`` on ``LOCK`` inside the folder before the runner looks
at it and keeps it until the command ends; a second command is refused in one line naming the
holder's process. The kernel drops the lock of a process that dies however it dies (``kill
-9``, a power cut), so a lock file left behind is simply taken over: there is no stale lock to
clear by hand. Under MPI the root alone holds it, for the whole job. (POSIX ``flock``: Linux
and macOS.)

Taking the lock is also the folder's first write (the lock file holds the holder's PID), so a
read-only or full disk is found here, before any data is loaded or any epoch trained. A folder
the lock had to create is removed again at the exit if the run left nothing in it.
"""

from __future__ import annotations

import errno
import fcntl
import os
import socket
from pathlib import Path

from .runfolder import RunError

LOCK = ".tape-train.lock"


class FolderBusy(RunError):
    """Another process holds the run folder's lock."""


class FolderLock:
    """The lock of ``run_dir``: ``acquire`` (refusing a busy folder), then ``release``."""

    def __init__(self, run_dir: Path):
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOCK
        self._handle: int | None = None
        self._created: list[Path] = []  # folders made for the lock, innermost first

    def acquire(self) -> None:
        self._created = [p for p in (self.run_dir, *self.run_dir.parents) if not p.exists()]
        try:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            while self._handle is None:
                handle = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
                if not _try_lock(handle):
                    holder = _read_holder(handle)
                    os.close(handle)
                    raise FolderBusy(f"{self.run_dir} is in use by another tape-train run "
                                     f"({holder}); wait for it to end, or pass --output DIR for "
                                     f"a run of its own")
                if _same_file(handle, self.path):
                    self._handle = handle
                else:  # its holder released and removed the file meanwhile: lock the new one
                    os.close(handle)
            os.ftruncate(self._handle, 0)  # a dead holder's PID, if any
            text = f"process {os.getpid()} on {socket.gethostname()}\n".encode()
            if os.write(self._handle, text) != len(text):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.path))
            os.fsync(self._handle)
        except FolderBusy:
            self._remove_created()
            raise
        except OSError as error:
            self.release()
            raise RunError(f"{self.run_dir}: the run folder cannot be written "
                           f"({error.strerror or error}), so nothing was trained; free some "
                           f"space or make it writable, or pass --output DIR") from None

    def release(self) -> None:
        """Remove the lock file and unlock (in this order: a command waiting for the file then
        finds it gone and locks a new one); remove the folders made for it if left empty."""
        if self._handle is not None:
            try:
                self.path.unlink(missing_ok=True)
            except OSError:  # a read-only folder: the file stays, unlocked, and is taken over
                pass
            os.close(self._handle)  # closing releases the lock
            self._handle = None
        self._remove_created()

    def _remove_created(self) -> None:
        for folder in self._created:
            try:
                folder.rmdir()
            except OSError:  # not empty: the run wrote there (or someone else did)
                break
        self._created = []


def _try_lock(handle: int) -> bool:
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _read_holder(handle: int) -> str:
    """What the holder wrote in the file: ``process PID on HOST``."""
    try:
        text = os.pread(handle, 200, 0).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    return text or "a process that has not yet written its PID"


def _same_file(handle: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(handle), os.stat(path))
    except FileNotFoundError:
        return False
