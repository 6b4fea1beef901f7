"""Shared pieces of the subcommands: input options, stdin, payload checks."""

from __future__ import annotations

import argparse
import io
import re
import sys

from tfrx.options import ON_ERROR


class CliError(Exception):
    """A problem to report on one line; ``status`` is the exit status (2: usage, 1: damaged data)."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


# Library advice (Python arguments) -> the command-line flags that do the same, in every CLI message.
_ADVICE = (
    # A library message that spells the advice for each API ("compression="GZIP" (compression_type="GZIP"
    # for TFRecordDataset, --compression gzip on the command line)") needs only the command line's.
    (
        re.compile(
            r""" \(compression_type=(["'])[A-Za-z]*\1 for TFRecordDataset, --[\w-]+ \w+ on the command line\)"""
        ),
        "",
    ),
    (re.compile(r"""on_error=(["'])(raise|skip|warn)\1"""), r"--on-error \2"),
    (re.compile(r"\braw=True\b"), "--raw"),
    (re.compile(r"\bprogress=True\b"), "--progress"),
    (re.compile(r"tfrx reshard --compression (none|gzip|zlib)"), r"tfrx reshard --output-compression \1"),
)
_COMPRESSION_ADVICE = re.compile(r"""\bcompression(?:_type)?=(["'])([A-Za-z]*)\1""")
_NO_COMPRESSION = re.compile(r"""\(compression (["'])\1\)""")  # "read as uncompressed (compression "")"


def cli_message(message: str, command: str | None = None) -> str:
    """``message`` with the library's advice spelled as command-line flags (``--on-error skip``, not
    ``on_error="skip"``); every error a command prints goes through here."""
    for pattern, replacement in _ADVICE:
        message = pattern.sub(replacement, message)
    message = _NO_COMPRESSION.sub("(--compression none)", message)
    return _COMPRESSION_ADVICE.sub(lambda m: f"--compression {m.group(2).lower() or 'none'}", message)


class ParserWithHint(argparse.ArgumentParser):
    """argparse that exits with status 2 and a one-line message (its default), kept for subparsers."""


COMPRESSIONS = ["auto", "none", "gzip", "zlib"]


def add_input(p: argparse.ArgumentParser, *, many: bool = True, stdin: bool = True, on_error: bool = True) -> None:
    help_text = "TFRecord files, globs or URLs (s3://, gs://, ...)" + (" ('-' reads standard input)" if stdin else "")
    p.add_argument("paths", nargs="+" if many else None, metavar="PATH", help=help_text)
    p.add_argument(
        "-c",
        "--compression",
        default="auto",
        type=str.lower,
        choices=COMPRESSIONS,
        help="compression of the input (default: detected from the content)",
    )
    if on_error:
        add_on_error(
            p,
            "damaged records: stop with an error (raise, the default), leave them out (skip), "
            "or leave them out with a warning on stderr (warn)",
        )
    add_allow_incomplete(p)
    add_storage_options(p)


def add_on_error(p: argparse.ArgumentParser, help_text: str) -> None:
    """``--on-error {raise,skip,warn}``: the command-line form of the library's ``on_error``."""
    p.add_argument("--on-error", dest="on_error", choices=ON_ERROR, default="raise", help=help_text)


def add_allow_incomplete(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="read a glob of -NNNNN-of-MMMMM shards even when some of the set are missing, or "
        "shards of an interrupted commit (default: refuse, naming the missing shards; quote the "
        "glob so that tfrx, not the shell, expands it)",
    )


def add_storage_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("object stores (fsspec storage_options for s3://, gs://, ... URLs)")
    g.add_argument(
        "--storage-option",
        dest="storage_option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="one storage option; repeatable. VALUE is read as JSON when it parses (true, 3, {...}), "
        "else as text; a dotted KEY sets a nested option "
        "(client_kwargs.endpoint_url=http://localhost:9000)",
    )
    g.add_argument(
        "--storage-options",
        dest="storage_options_json",
        default=None,
        metavar="JSON",
        help="all storage options as one JSON object (or @file.json); --storage-option entries are applied on top",
    )


def storage_options(args) -> dict | None:
    """The fsspec ``storage_options`` given on the command line, or ``None``."""
    import json

    text = getattr(args, "storage_options_json", None)
    opts: dict = {}
    if text is not None:
        if text.startswith("@"):
            try:
                with open(text[1:], encoding="utf-8") as f:
                    text = f.read()
            except OSError as e:
                raise CliError(f"--storage-options: cannot read {text[1:]!r}: {e.strerror or e}") from None
        try:
            opts = json.loads(text)
        except json.JSONDecodeError as e:
            raise CliError(f"--storage-options is not valid JSON: {e}") from None
        if not isinstance(opts, dict):
            raise CliError(f"--storage-options must be a JSON object, got {type(opts).__name__}")
    for item in getattr(args, "storage_option", None) or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CliError(f"--storage-option expects KEY=VALUE, got {item!r}")
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            parsed = value
        *parents, leaf = key.split(".")
        node = opts
        for part in parents:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise CliError(f"--storage-option {item!r}: {part!r} is already set to a value, not an object")
            node = child
        node[leaf] = parsed
    return opts or None


def add_progress(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--progress",
        dest="progress",
        action="store_const",
        const=True,
        default=None,
        help="show a progress bar even when stderr is not a terminal (needs tqdm)",
    )
    g.add_argument(
        "--no-progress", dest="progress", action="store_const", const=False, help="never show a progress bar"
    )


def sources(args) -> list:
    """The inputs, with '-' as standard input, checked to exist."""
    from tfrx.io._data_files import expand_paths

    from tfrx.io._shardsets import check_shard_sets

    paths = args.paths if isinstance(args.paths, list) else [args.paths]
    opts = storage_options(args)
    out, matched = [], []
    for p in paths:
        if p == "-":
            out.append(_stdin())
        else:
            # URLs come back carrying the options, so whatever opens them later uses them.
            found = expand_paths(p, storage_options=opts, require_all_shards=False)
            out.extend(found)
            if any(c in p for c in "*?["):
                matched.extend(found)
    names = [s for s in out if isinstance(s, str)]
    if not getattr(args, "allow_incomplete", False) and (matched or len(names) > 1):
        # as the library: names are completed for what a (quoted) glob matched, journals checked for all
        check_shard_sets(names, matched=matched)
    return out


def _stdin():
    data = sys.stdin.buffer.read()
    return _Named(data, "<stdin>")


class _Named(io.BytesIO):
    def __init__(self, data: bytes, name: str) -> None:
        super().__init__(data)
        self.name = name


def name_of(source) -> str:
    return source if isinstance(source, str) else getattr(source, "name", "<stream>")


def compression_arg(args) -> str:
    c = args.compression
    return "auto" if c == "auto" else ("" if c == "none" else c)


def reader(source, args, **kwargs):
    """A RecordReader of ``source`` with the command's ``--compression`` and ``--on-error``."""
    from tfrx.io._reader import RecordReader

    kwargs.setdefault("on_error", getattr(args, "on_error", "raise"))
    if hasattr(source, "seek"):
        try:
            source.seek(0)
        except Exception:
            pass
    return RecordReader(source, compression=compression_arg(args), **kwargs)


def first_records(source, args, n: int, **kwargs) -> list[bytes]:
    out: list[bytes] = []
    if n <= 0:
        return out
    with reader(source, args, **kwargs) as r:
        for rec in r:
            out.append(rec)
            if len(out) >= n:
                break
    return out


def payload_check(source, args, sample: int = 32) -> tuple[str, list[bytes]]:
    from tfrx.codec._sniff import payload_kind

    # CRCs checked: a damaged record is reported as damage (per --on-error), not judged as a payload
    records = first_records(source, args, sample)
    return payload_kind(records), records


def require_examples(srcs, args) -> None:
    """Refuses sources whose records are not Examples or SequenceExamples (CliError saying what they look
    like), then rewinds the ones read from standard input for the command's own read."""
    from tfrx.codec._sniff import OTHER

    for source in srcs:
        kind, sample = payload_check(source, args)
        if kind == OTHER:
            raise CliError(not_examples_message(source, sample))
    for source in srcs:
        if hasattr(source, "seek"):
            source.seek(0)  # the payload check read standard input's copy


def not_examples_message(source, records) -> str:
    from tfrx.codec._sniff import describe

    return (
        f"{name_of(source)}: the records are not tf.train.Example or SequenceExample protos "
        f"(they look like {describe(records)}); 'tfrx inspect --raw' shows their bytes"
    )


# ------------------------------------------------------------------ JSON of decoded features
def not_tfrecord_message(e) -> str | None:
    """For damage at the very first header: the file is probably not TFRecord (or not this compression)."""
    if e.offset == 0 and e.record_index == 0 and e.kind in ("length_crc", "bogus_length"):
        return (
            f"{e.path!r} is not a TFRecord file: its first 12 bytes are not a valid record header "
            "(wrong file, or compressed in a way --compression does not say?)"
        )
    if e.kind == "compression" and not e.record_index:
        reason = str(e).split("; no record was read")[0]
        return f"{reason}; is --compression right? (leave it out to detect the compression)"
    return None
