"""``tape-train CONFIG`` (also ``python -m training CONFIG``): train what a TOML file describes.

The command line only chooses what to do with the config: overrides, printing it, resuming or
overwriting a run, quiet progress for CI. Every error a user can fix (config, data, run folder,
checkpoint, a full or read-only disk) is one line on stderr and exit status 2, never a
traceback; a run stopped by a loss or gradient that is not finite exits with 3, Ctrl-C with 130,
a closed standard output (``tape-train ... | head -2``) with 141, as a shell reports SIGPIPE:
the run stops there, saying so on stderr, its last checkpoint intact.
The lines that suggest a command (Ctrl-C, a refused resume) give this command's own ``--set``,
``--output`` and ``--no-progress``, so that they can be pasted as they are.

Under MPI (``mpiexec -n 4 tape-train CONFIG``) every rank runs this command; the root alone
prints the config, the progress and the results. A rank's own error is printed with its rank,
since it may be that rank's alone (a data file missing on its machine); an error the root
found in the run folder or checkpoint is printed once, by the root.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shlex
import sys
from typing import Any

import framework as fw

from .config.reading import ConfigError, apply_override, dump_toml, load_config, parse_key, read_toml

EPILOG = """examples:
  tape-train configs/layerwise_mlp.toml
  tape-train configs/mlp_digits.toml --set optimizer.learning_rate=0.01 --set epochs=3
  tape-train configs/layerwise_mlp.toml --print-config
  tape-train configs/layerwise_mlp.toml --resume          # continue after a crash or Ctrl-C
  mpiexec -n 2 tape-train configs/layerwise_mlp.toml      # data-parallel over 2 processes
"""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="tape-train", epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Train the model a TOML config describes: progress bar, metrics per epoch, "
                    "a checkpoint each epoch and loss/accuracy curves, in runs/<config name>.")
    parser.add_argument("config", help="the run's TOML file, e.g. configs/layerwise_mlp.toml")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="KEY=VALUE",
                        help="override a config key (dotted: optimizer.learning_rate, "
                             "optimizers.1.learning_rate, model.layers.dense1.units); VALUE "
                             "is a TOML literal such as 0.01, true, [100, 50] or \"adam\"; "
                             "repeatable")
    parser.add_argument("--print-config", action="store_true",
                        help="print the resolved config (file, overrides, defaults) and exit")
    existing = parser.add_mutually_exclusive_group()
    existing.add_argument("--resume", action="store_true",
                          help="continue the run in the output folder from its last checkpoint")
    existing.add_argument("--overwrite", action="store_true",
                          help="replace the run in the output folder")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bars (log lines only), e.g. for CI")
    parser.add_argument("--output", metavar="DIR",
                        help="the run folder (default: output_dir, else runs/<config name>)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.output is not None and not args.output.strip():
        return _fail(f"--output {args.output!r}: an empty path; give the run folder, e.g. "
                     f"--output runs/NAME (or leave --output out)", ranked=False)
    try:
        fw.distributed.init()  # first, as hvd.init(): under MPI, every rank joins the job here
    except RuntimeError as error:  # started by mpiexec, but mpi4py is missing
        return _fail(str(error), ranked=False)
    try:
        config, source = load_config(args.config, _overrides(args, args.overrides))
        if args.print_config:
            if fw.distributed.is_root():
                print(dump_toml(config), end="")
            return 0
        from .data import DataError
        from .loop import ConfigChanged, Diverged, OutputClosed, RunError, train
        from .parallel import ReportedByRoot
    except ConfigError as error:
        return _fail(str(error))
    except ModuleNotFoundError as error:
        return _fail(f"{error.name} is missing; the runner needs the examples extra: "
                     f"pip install \".[examples]\"")
    try:
        final = train(config, source, resume=args.resume, overwrite=args.overwrite,
                      progress=not args.no_progress)
    except ConfigChanged as error:
        return _fail(f"{error}; {_resume_hint(args, error)}")
    except Diverged as error:  # every rank meets it at the same step: the root says it
        return _fail(str(error), status=error.status, quiet=not fw.distributed.is_root())
    except RunError as error:
        return _fail(str(error), status=error.status)
    except (ConfigError, DataError) as error:
        return _fail(str(error))
    except OSError as error:  # every write is checked where it is made; this is the last net
        return _fail(f"{error.filename or 'a file of the run'}: {error.strerror or error}")
    except MemoryError as error:  # a model that builds but whose training state does not fit
        return _fail(f"out of memory: {error or 'the model and its training state do not fit'}")
    except ReportedByRoot:
        return 2
    except KeyboardInterrupt as error:  # mpiexec passes Ctrl-C to every rank: the root says it
        return _fail(_interrupted_hint(args, error), status=130,
                     quiet=not fw.distributed.is_root())
    except OutputClosed as error:
        return _output_closed(_interrupted_hint(args, error, "stdout was closed (broken pipe), "
                                                             "so the run stopped"))
    if fw.distributed.is_root():
        try:
            for key, value in final.items():
                print(f"test {key.removeprefix('test_')}: {value:.4f}", flush=True)
        except BrokenPipeError:
            return _output_closed(f"stdout was closed (broken pipe) before the test results "
                                  f"were printed; the run is complete, its records are in "
                                  f"{config['output_dir']}")
    return 0


def _output_closed(message: str) -> int:
    """One line on stderr; stdout pointed at the null device, so that Python's own flush of it
    at the exit does not fail a second time."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        pass  # stdout is not a file (captured, replaced): nothing will flush it
    return _fail(message, status=141)


def _overrides(args: argparse.Namespace, overrides: list[str]) -> list[str]:
    """The ``--set`` assignments with ``--output`` as the last one (it wins over the file)."""
    return [*overrides,
            *([f"output_dir={json.dumps(args.output)}"] if args.output is not None else [])]


def command(args: argparse.Namespace, overrides: list[str], mode: str | None,
            config: str | None = None) -> str:
    """The shell command that runs ``config`` (default: this one's) with ``overrides``, this
    command's ``--output`` and ``--no-progress``, and ``mode`` (``--resume``, ``--overwrite``)."""
    parts = ["tape-train", config or args.config]
    for assignment in overrides:
        parts += ["--set", assignment]
    if args.output:
        parts += ["--output", args.output]
    if args.no_progress:
        parts.append("--no-progress")
    return shlex.join(parts + ([mode] if mode else []))


def _interrupted_hint(args: argparse.Namespace, error: BaseException,
                      what: str = "interrupted") -> str:
    if getattr(error, "checkpointed", False):
        return (f"{what}; the last checkpoint is intact: continue with "
                f"{command(args, args.overrides, '--resume')}")
    if getattr(error, "wrote", False):
        return (f"{what} before this run's first checkpoint; start it again with "
                f"{command(args, args.overrides, '--overwrite')}")
    mode = "--resume" if args.resume else ("--overwrite" if args.overwrite else None)
    return (f"{what} before anything was written; start it again with "
            f"{command(args, args.overrides, mode)}")


def _resume_hint(args: argparse.Namespace, error: Any) -> str:
    """A command that resumes the run in the folder (the saved values of the keys that differ,
    else the run's own config.toml), each checked to resolve to the checkpoint's config."""
    from .runfolder import MISSING, RESUMABLE_CHANGES, changed_keys
    literals = [(tokens, _literal(saved)) for tokens, saved, _ in error.changes
                if saved is not MISSING]
    kept = [o for o in args.overrides if not _touches(args.config, o, error.changes)]
    candidates = [] if any(text is None for _, text in literals) else \
        [(None, kept + [f"{'.'.join(map(str, tokens))}={text}" for tokens, text in literals])]
    saved_file = str(error.run_dir / "config.toml")
    resumable = [o for o in args.overrides if o.partition("=")[0].strip().split(".")[0]
                 in RESUMABLE_CHANGES]
    candidates.append((saved_file, resumable))
    for config, overrides in candidates:
        try:
            resolved, _ = load_config(config or args.config, _overrides(args, overrides))
        except ConfigError:
            continue
        if not changed_keys(error.saved, resolved):
            return (f"to continue the run: {command(args, overrides, '--resume', config)}; to "
                    f"start it again with this config: "
                    f"{command(args, args.overrides, '--overwrite')}")
    return (f"start it again with this config: {command(args, args.overrides, '--overwrite')}, "
            f"or pass --output DIR for a new run")


def _literal(value: Any) -> str | None:
    """``value`` as a TOML literal for ``--set``, or None for a table (not one token)."""
    text = dump_toml({"value": value})
    return text[len("value = "):].strip() if text.startswith("value = ") \
        and text.count("\n") == 1 else None


def _touches(config_path: str, assignment: str, changes: list[tuple[list[Any], Any, Any]]) -> bool:
    """Whether ``--set assignment`` sets one of the changed keys, or a table inside one."""
    try:
        raw = read_toml(config_path)
        tokens = parse_key(apply_override(raw, assignment))
    except ConfigError:
        return False
    return any(tokens[:len(key)] == key or key[:len(tokens)] == tokens for key, _, _ in changes)


def _fail(message: str, status: int = 2, quiet: bool = False, ranked: bool = True) -> int:
    if not quiet:
        rank = f" (rank {fw.distributed.rank()})" if ranked and fw.distributed.size() > 1 else ""
        try:
            print(f"tape-train: error{rank}: {message}", file=sys.stderr)
        except BrokenPipeError:  # stderr closed too (``2>&1 | head``): no one to tell
            pass
    return status
