"""``tape-train CONFIG`` (also ``python -m training CONFIG``): train what a TOML file describes.

The command line only chooses what to do with the config: overrides, printing it, resuming or
overwriting a run, quiet progress for CI. Every error a user can fix (config, data, run folder)
is one line on stderr and exit status 2, never a traceback.

Under MPI (``mpiexec -n 4 tape-train CONFIG``) every rank runs this command; the root alone
prints the config, the progress and the results. A rank's own error is printed with its rank,
since it may be that rank's alone (a data file missing on its machine); an error the root
found in the run folder or checkpoint is printed once, by the root.
"""

from __future__ import annotations

import argparse
import json
import sys

import framework as fw

from .config import ConfigError, dump_toml, load_config

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
    try:
        fw.distributed.init()  # first, as hvd.init(): under MPI, every rank joins the job here
    except RuntimeError as error:  # started by mpiexec, but mpi4py is missing
        return _fail(str(error), ranked=False)
    overrides = list(args.overrides)
    if args.output:
        overrides.append(f"output_dir={json.dumps(args.output)}")
    try:
        config, source = load_config(args.config, overrides)
        if args.print_config:
            if fw.distributed.is_root():
                print(dump_toml(config), end="")
            return 0
        from .data import DataError
        from .loop import RunError, train
        from .parallel import ReportedByRoot
    except ConfigError as error:
        return _fail(str(error))
    except ModuleNotFoundError as error:
        return _fail(f"{error.name} is missing; the runner needs the examples extra: "
                     f"pip install \".[examples]\"")
    try:
        final = train(config, source, resume=args.resume, overwrite=args.overwrite,
                      progress=not args.no_progress)
    except (ConfigError, DataError, RunError) as error:
        return _fail(str(error))
    except ReportedByRoot:
        return 2
    except KeyboardInterrupt:  # mpiexec passes Ctrl-C to every rank: the root says it once
        return _fail(f"interrupted; the last checkpoint is intact: continue with "
                     f"tape-train {args.config} --resume", status=130,
                     quiet=not fw.distributed.is_root())
    if fw.distributed.is_root():
        for key, value in final.items():
            print(f"test {key.removeprefix('test_')}: {value:.4f}")
    return 0


def _fail(message: str, status: int = 2, quiet: bool = False, ranked: bool = True) -> int:
    if not quiet:
        rank = f" (rank {fw.distributed.rank()})" if ranked and fw.distributed.size() > 1 else ""
        print(f"tape-train: error{rank}: {message}", file=sys.stderr)
    return status
