"""tfrx inspect / head."""

from __future__ import annotations

import json
import sys

import numpy as np

from tfrx.cli._common import CliError, add_input, name_of, reader, sources
from tfrx.tools.convert.jsonl import json_value

DESCRIPTION = """Print the first records of TFRecord files.

Examples and SequenceExamples are printed in protobuf text format, as
TensorFlow's print(tf.train.Example.FromString(record)) shows them, or with
--json as one JSON object per line (numbers as lists, bytes as UTF-8 text or
{"base64": ...}, null for a feature with no kind set). Records that are not
Examples (TensorBoard event files, other protos, plain text) are shown as
their length and bytes.

  tfrx inspect train.tfrecord-00000-of-00016 -n 2
  tfrx head --json data.tfrecord.gz | jq .label
  cat data.tfrecord | tfrx inspect -
"""


def add_arguments(p) -> None:
    add_input(p)
    p.add_argument(
        "-n",
        "--num-records",
        type=int,
        default=5,
        metavar="N",
        help="records to print per file (default 5; -1 for all)",
    )
    p.add_argument("--skip", type=int, default=0, metavar="K", help="skip the first K records of each file")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--json", action="store_true", help="one JSON object per record")
    mode.add_argument("--raw", action="store_true", help="show length and bytes of each record, whatever it holds")
    p.add_argument("--hex", action="store_true", help="with --raw: a hex dump instead of escaped bytes")
    p.add_argument(
        "--max-bytes",
        type=int,
        default=256,
        metavar="B",
        help="with --raw, or for non-Example records: bytes shown per record (default 256; -1 for all)",
    )
    p.add_argument(
        "--as",
        dest="as_kind",
        choices=["auto", "example", "sequence"],
        default="auto",
        help="payload type (default: detected from the first records)",
    )


def _records(source, args):
    with reader(source, args) as r:
        i = 0
        for rec in r:
            if i >= args.skip:
                yield i, rec
            i += 1
            if args.num_records >= 0 and i >= args.skip + args.num_records:
                return


def _raw_line(i: int, rec: bytes, args) -> str:
    shown = rec if args.max_bytes < 0 else rec[: args.max_bytes]
    more = "" if len(shown) == len(rec) else f" ... ({len(rec) - len(shown)} more bytes)"
    if args.hex:
        lines = [f"record {i}: {len(rec)} bytes"]
        for off in range(0, len(shown), 16):
            chunk = shown[off : off + 16]
            text = "".join(chr(c) if 32 <= c < 127 else "." for c in chunk)
            lines.append(f"  {off:08x}  {chunk.hex(' '):<47}  {text}")
        if more:
            lines.append(f"  {more.strip()}")
        return "\n".join(lines)
    return f"record {i}: {len(rec)} bytes: {shown!r}{more}"


def _show_events(name: str, items: list, args, out) -> bool:
    """TensorBoard event records as readable lines (or JSON); False when the records are not events."""
    from tfrx.codec.events import Event, Events, decode_event, is_event_file

    try:
        first = Event.FromString(items[0][1]) if items else None
    except Exception:
        return False
    # Protobuf parses most bytes as some message: events are recognised by name or by their first record.
    if not (is_event_file(name) or (first is not None and first.file_version.startswith("brain.Event"))):
        return False
    lines = []
    for i, rec in items:
        ev = Events()
        try:
            decode_event(rec, ev)
        except Exception:  # not Event protos after all
            return False
        e = Event.FromString(rec)
        what = e.WhichOneof("what") or "empty"
        parts = []
        parts += [f"scalar {s.tag} = {s.value:g}" for s in ev.scalars]
        parts += [
            f"histogram {h.tag} ({len(h.counts)} buckets, {float(np.sum(h.counts)):g} values)" for h in ev.histograms
        ]
        parts += [f"image {m.tag} {m.width}x{m.height} ({len(m.encoded)} bytes)" for m in ev.images]
        parts += [f"audio {a.tag} ({len(a.encoded)} bytes)" for a in ev.audio]
        parts += [f"text {t.tag} = {str(t.text)[:80]!r}" for t in ev.text]
        parts += [
            f"tensor {t.tag} [{t.plugin or 'no plugin'}] shape {tuple(t.value.shape) if t.value is not None else ()}"
            for t in ev.tensors
        ]
        if what != "summary":
            detail = getattr(e, what) if what != "empty" else ""
            parts.append(f"{what}" + (f" {detail!s}"[:90] if isinstance(detail, str) and detail else ""))
        if args.json:
            lines.append(
                json.dumps({"record": i, "step": int(e.step), "wall_time": e.wall_time, "what": what, "values": parts})
            )
        else:
            lines.append(f"record {i}: step {e.step}  wall_time {e.wall_time:.3f}  " + "; ".join(parts))
    if not args.json:
        out.write(f"# {name}: TensorBoard event file (tfrx.codec.events.read decodes it whole)\n")
    out.write("\n".join(lines) + ("\n" if lines else ""))
    return True


def _say_no_records(name: str, source, args, out) -> None:
    """A file with nothing to show says so (in --json mode on stderr, keeping stdout JSON lines)."""
    import os

    if args.skip:
        text = f"{name}: no records after the first {args.skip}"
    else:
        try:
            size = os.path.getsize(source) if isinstance(source, (str, os.PathLike)) else None
        except OSError:
            size = None
        text = f"{name}: empty file (0 bytes), no records" if size == 0 else f"{name}: no records"
    if args.json:
        print(f"tfrx inspect: note: {text}", file=sys.stderr)
    else:
        out.write(f"# {text}\n")


def run(args) -> int:
    from tfrx import train
    from tfrx.codec import decode_example, decode_sequence_example
    from tfrx.codec._sniff import EMPTY, EXAMPLE, OTHER, SEQUENCE_EXAMPLE, describe, payload_kind

    out = sys.stdout
    srcs = sources(args)
    for n, source in enumerate(srcs):
        name = name_of(source)
        if len(srcs) > 1 and not args.json:
            out.write(f"{'' if n == 0 else chr(10)}==> {name} <==\n")
        items = list(_records(source, args))
        if not items:
            _say_no_records(name, source, args, out)
            continue
        kind = {"example": EXAMPLE, "sequence": SEQUENCE_EXAMPLE}.get(args.as_kind) or payload_kind(r for _, r in items)
        if kind == EMPTY:
            kind = EXAMPLE
        if kind == OTHER and not args.raw and _show_events(name, items, args, out):
            continue
        raw = args.raw or kind == OTHER
        if kind == OTHER and not args.raw:
            print(
                f"tfrx inspect: note: records of {name} are not tf.train.Example or SequenceExample "
                f"(they look like {describe([r for _, r in items])}); showing raw bytes",
                file=sys.stderr,
            )
            if args.json:
                for i, rec in items:
                    out.write(
                        json.dumps(
                            {
                                "record": i,
                                "length": len(rec),
                                "hex": rec[: max(args.max_bytes, 0) if args.max_bytes >= 0 else None].hex(),
                            }
                        )
                        + "\n"
                    )
                continue
        for i, rec in items:
            if raw:
                out.write(_raw_line(i, rec, args) + "\n")
            elif args.json:
                # keep_empty: a Feature with no kind set (TFX's missing CSV value) is null, as the text form shows it
                if kind == SEQUENCE_EXAMPLE:
                    context, lists = decode_sequence_example(rec, keep_empty=True)
                    obj = {
                        "context": {k: json_value(v) for k, v in context.items()},
                        "feature_lists": {k: [json_value(s) for s in steps] for k, steps in lists.items()},
                    }
                else:
                    obj = {k: json_value(v) for k, v in decode_example(rec, keep_empty=True).items()}
                out.write(json.dumps(obj, ensure_ascii=False) + "\n")
            else:
                cls = train.SequenceExample if kind == SEQUENCE_EXAMPLE else train.Example
                try:
                    msg = cls.FromString(rec)
                except Exception as e:  # protobuf's DecodeError
                    raise CliError(f"{name}: record {i} is not a valid {cls.__name__}: {e}", 1) from None
                out.write(f"# record {i} of {name}\n" if len(items) > 1 or n else "")
                out.write(str(msg))
        out.flush()
    return 0
