"""The ``tfrx`` command: look inside, check, convert and reshard TFRecord files.

Each subcommand lives in its own module with ``add_arguments(parser)`` and
``run(args) -> int``. Exit status: 0 success, 1 the data is damaged (verify
found corruption, a record could not be read; validate found anomalies), 2 a usage problem (missing
file, wrong format or compression), reported on one line without a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings

from tfrx.cli._common import CliError, ParserWithHint

__all__ = ["COMMANDS", "main"]

# name -> (module, one-line help)
COMMANDS = {
    "inspect": ("inspect", "print the first records (protobuf text format, --json lines, or raw bytes)"),
    "head": ("inspect", "same as inspect"),
    "count": ("count", "count the records of each file"),
    "schema": ("schema", "infer the feature spec (Python code or --json)"),
    "stats": ("stats", "per-feature statistics: presence, kinds, value counts, numeric ranges, top values"),
    "validate": ("validate", "check data against a TFDV schema.pbtxt: anomalies, drift, skew; exit status 1 if any"),
    "verify": ("verify", "check the CRC of every record; exit status 1 if any file is damaged"),
    "index": ("index", "write record-offset index files for random access"),
    "convert": ("convert", "convert image folders, CSV, JSON Lines, Parquet <-> TFRecord shards"),
    "reshard": ("reshard", "merge or split TFRecord files into N shards, change compression"),
    "preview": ("preview", "save a PNG grid of the first images with their labels"),
    "view": ("view", "look inside files in the browser: records, images with boxes, schema, statistics, damage"),
    "bert-data": ("bert_data", "raw text to BERT pre-training records (masked LM + next sentence)"),
    "demo": ("demo", "run the tfrx demo"),
}


def _load(name: str):
    return importlib.import_module(f"tfrx.cli.{COMMANDS[name][0]}")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``tfrx`` parser; ``only``: the command whose module (and options) to load, the others
    listed by name (``tfrx --help`` and one command's start-up import no other command)."""
    from tfrx import __version__

    parser = ParserWithHint(
        prog="tfrx",
        description="Read, check, convert and reshard TFRecord files without TensorFlow.",
        epilog="Run 'tfrx COMMAND --help' for the options of a command.",
    )
    parser.add_argument("--version", action="version", version=f"tfrx {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=ParserWithHint)
    sub.required = True
    for name, (_, summary) in COMMANDS.items():
        if only is not None and name != only:
            sub.add_parser(name, help=summary)
            continue
        module = _load(name)
        p = sub.add_parser(
            name,
            help=summary,
            description=getattr(module, "DESCRIPTION", summary),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(p)
        p.set_defaults(_run=module.run, _command=name)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Runs the ``tfrx`` command with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    if argv is None:  # the `tfrx` command: the process is tfrx's own (tfrx/memory.py)
        from tfrx.memory import tune_owned_process

        tune_owned_process()
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(only=next((a for a in argv if not a.startswith("-")), ""))
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version, usage errors
        return int(e.code or 0) if not isinstance(e.code, str) else 2
    command = args._command
    format_warning = warnings.formatwarning
    warnings.formatwarning = _warning_format(command)
    try:
        from tfrx.cli import tfds_view

        found = tfds_view.detect(args) if command in tfds_view.COMMANDS else None
        if found is not None:
            status = tfds_view.run(command, args, found)
            if status is not None:
                return int(status)
            if found[1] is None:  # a dataset directory: its shards
                args.paths = [
                    found[0].rstrip("/") + "/*.tfrecord*"
                    if "://" in found[0]
                    else os.path.join(found[0], "*.tfrecord*")
                ]
        return int(args._run(args) or 0)
    except CliError as e:
        return _fail(command, str(e), e.status)
    except KeyboardInterrupt:
        print(f"tfrx {command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # tfrx inspect ... | head
        try:
            sys.stdout = None  # nothing more can be written; keep the interpreter from complaining at exit
        except Exception:
            pass
        return 0
    except Exception as e:
        from tfrx.errors import CorruptRecordError

        if isinstance(e, CorruptRecordError):
            from tfrx.cli._common import not_tfrecord_message

            wrong = not_tfrecord_message(e)
            return _fail(command, wrong, 2) if wrong else _fail(command, str(e), 1)
        if isinstance(e, (FileNotFoundError, IsADirectoryError, PermissionError)):
            return _fail(command, _os_message(e), 2)
        if isinstance(e, (ValueError, TypeError, OSError, ImportError, EOFError)) or _is_tfrx(e):
            return _fail(command, f"{e}", 2)
        raise
    finally:
        warnings.formatwarning = format_warning


def _warning_format(command: str):
    """Warnings (``--on-error warn``) as one line each, advice spelled as flags."""
    from tfrx.cli._common import cli_message

    def format_warning(message, category, filename, lineno, line=None):
        return f"tfrx {command}: warning: {cli_message(' '.join(str(message).split(chr(10))), command)}\n"

    return format_warning


def _is_tfrx(e: Exception) -> bool:
    from tfrx.errors import TfrxError

    return isinstance(e, TfrxError)


def _os_message(e: OSError) -> str:
    if e.filename is not None and e.strerror:
        return f"{e.strerror}: {e.filename!r}"
    return str(e)


def _fail(command: str, message: str, status: int) -> int:
    from tfrx.cli._common import cli_message

    message = cli_message(" ".join(str(message).split("\n")), command)
    print(f"tfrx {command}: error: {message}", file=sys.stderr)
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
