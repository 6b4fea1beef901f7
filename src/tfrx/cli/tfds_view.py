"""inspect / schema / stats / preview of a prepared TFDS directory (or a shard inside one).

The subcommands hand over here when their only PATH is a TFDS dataset
directory (``dataset_info.json`` + ``features.json``), a directory above its
version, or a file inside it; they then show TFDS feature names, label names
and split sizes instead of the raw Example keys.
"""

from __future__ import annotations

import json
import math
import os
import sys

import numpy as np

from tfrx.cli._common import CliError

COMMANDS = ("inspect", "head", "schema", "stats", "preview")


def detect(args) -> tuple[str, str | None] | None:
    """``(version directory, the shard given or None)`` when the PATH is a TFDS dataset (local or URL)."""
    paths = getattr(args, "paths", None)
    if not isinstance(paths, list) or len(paths) != 1 or not isinstance(paths[0], str) or paths[0] == "-":
        return None
    from tfrx.cli._common import storage_options
    from tfrx.tfds._loading import _Dirs, _find_version_dir, _local

    path = _local(paths[0])
    opts = storage_options(args) if hasattr(args, "storage_option") else None
    try:
        d = _Dirs(path, opts)
        if d.isfile(path):
            parent = d.dirname(path)
            if d.exists(d.join(parent, "dataset_info.json")) and d.exists(d.join(parent, "features.json")):
                return parent, path if d.remote else os.path.abspath(path)
            return None
        if d.isdir(path):
            version_dir = _find_version_dir(path, opts)
            if d.exists(d.join(version_dir, "dataset_info.json")):
                return version_dir, None
    except Exception:  # noqa: BLE001 - no fsspec, an unreachable store, missing credentials...
        return None  # best effort: the plain TFRecord view runs and reports the real error
    return None


def _open(found, args):
    import tfrx.tfds as tt
    from tfrx.cli._common import storage_options

    d, shard = found
    b = tt.builder(d, storage_options=storage_options(args) if hasattr(args, "storage_option") else None)
    split, files = None, None
    if shard is not None:
        norm = (lambda f: f) if "://" in shard else os.path.abspath
        for name, si in b.info.splits.items():
            if shard in [norm(f) for f in si.filenames]:
                split, files = name, [shard]
        if split is None:
            raise CliError(f"{shard}: inside the TFDS dataset {b.info.full_name} but not one of its shards")
    return b, split, files


def _labels(feature, prefix=""):
    from tfrx.tfds import features as F

    return [(name, f) for name, f in F.class_labels(feature, prefix)]


def _header(b) -> str:
    info = b.info
    lines = [f"TFDS dataset {info.full_name} ({info.data_dir})"]
    for name, si in info.splits.items():
        lines.append(f"  split {name}: {si.num_examples} examples in {si.num_shards} shard(s), {si.num_bytes} bytes")
    return "\n".join(lines)


def _label_lines(b) -> list[str]:
    out = []
    for name, lab in _labels(b.info.features):
        if lab.names_given:
            shown = ", ".join(f"{i}={n}" for i, n in enumerate(lab.names[:20]))
            more = f", ... ({len(lab.names)} in all)" if len(lab.names) > 20 else ""
            out.append(f"  labels of {name!r}: {shown}{more}")
        else:
            out.append(f"  labels of {name!r}: {lab.num_classes} classes, no names")
    return out


def _summary(v, label=None) -> str:
    if isinstance(v, bytes):
        return repr(v[:80]) + ("..." if len(v) > 80 else "")
    if isinstance(v, list):
        return f"[{len(v)} items]"
    a = np.asarray(v)
    if a.ndim == 0:
        s = repr(a.item())
        if label is not None and label.names_given and 0 <= int(a) < len(label.names):
            s += f" ({label.names[int(a)]})"
        return s
    if a.size <= 8:
        return f"{a.dtype.name}{list(a.shape)} {a.tolist()}"
    return f"{a.dtype.name}{list(a.shape)} min={a.min() if a.dtype != object else '-'} max={a.max() if a.dtype != object else '-'}"


def _leaves(value, prefix=""):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, f"{prefix}/{k}" if prefix else k)
    else:
        yield prefix, value


def _jsonable(v):
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_jsonable(x) for x in v]
    if isinstance(v, bytes):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            import base64

            return {"base64": base64.b64encode(v).decode()}
    a = np.asarray(v)
    if a.dtype == object:
        return [_jsonable(x) for x in a.tolist()]
    return a.tolist()


def _batches(b, split, files):
    """``(split, path, RecordBatch)`` of the shard given, else of every shard of ``split`` (all splits: None)."""
    from tfrx.io import RecordReader

    for name, si in b.info.splits.items():
        if split is not None and name != split:
            continue
        for path in files or si.filenames:
            with RecordReader(path, storage_options=b.storage_options) as reader:
                for batch in reader.iter_batches(max_records=256):
                    yield name, path, batch


def _examples(b, split, files, n):
    """The first ``n`` (-1: all) decoded examples of the shard given, else of the first split (read in order)."""
    from tfrx.tfds import features as F

    decoder = F.Decoder(b.info.features)
    i = 0
    for name, _, batch in _batches(b, split or next(iter(b.info.splits)), files):
        if 0 <= n <= i:
            return
        if n >= 0:
            batch = batch[: n - i]
        for ex in decoder.decode(batch):
            yield name, ex
            i += 1


def _inspect(b, split, files, args) -> int:
    labels = dict(_labels(b.info.features))
    n = getattr(args, "num_records", 5)
    out = sys.stdout
    if not args.json:
        out.write(_header(b) + "\n" + "\n".join(_label_lines(b)) + ("\n" if _label_lines(b) else ""))
    for i, (sp, ex) in enumerate(_examples(b, split, files, n)):
        if args.json:
            out.write(json.dumps(_jsonable(ex)) + "\n")
            continue
        out.write(f"\n{sp} example {i}:\n")
        for k, v in _leaves(ex):
            out.write(f"  {k}: {_summary(v, labels.get(k))}\n")
    return 0


def _schema(b, args) -> int:
    from tfrx.tfds import features as F

    if args.json:
        splits = {
            k: {"num_examples": v.num_examples, "shard_lengths": v.shard_lengths} for k, v in b.info.splits.items()
        }
        labels = {k: lab.names for k, lab in _labels(b.info.features) if lab.names_given}
        print(
            json.dumps(
                {
                    "name": b.info.name,
                    "version": b.info.version,
                    "features": F.to_json(b.info.features),
                    "labels": labels,
                    "splits": splits,
                },
                indent=2,
            )
        )
        return 0
    print(_header(b))
    print("features = " + b.info.features.describe())
    for line in _label_lines(b):
        print(line)
    if b.info.supervised_keys:
        print(f"supervised_keys = {b.info.supervised_keys}")
    return 0


def _stats(b, split, files, args) -> int:
    from tfrx.parsing import ExampleParser, RaggedFeature

    labels = _labels(b.info.features)
    # Only the label keys are parsed (natively, a block at a time); nothing else is decoded.
    parser = ExampleParser({ln: RaggedFeature("int64") for ln, _ in labels}, num_parallel_calls=1) if labels else None
    counts: dict = {name: {ln: {} for ln, _ in labels} for name in b.info.splits}
    if parser is not None:
        for name, _, batch in _batches(b, split, files):
            for ln, col in parser.parse(batch).items():
                ks, cs = np.unique(np.asarray(col.values, dtype=np.int64), return_counts=True)
                hist = counts[name][ln]
                for k, c in zip(ks.tolist(), cs.tolist()):
                    hist[k] = hist.get(k, 0) + c
    result = {}
    for name, si in b.info.splits.items():
        if split is not None and name != split:
            continue
        result[name] = {
            "num_examples": si.num_examples,
            "num_shards": si.num_shards,
            "num_bytes": si.num_bytes,
            "labels": {
                ln: {
                    (lab.names[k] if lab.names and 0 <= k < len(lab.names) else str(k)): c
                    for k, c in sorted(counts[name][ln].items())
                }
                for ln, lab in labels
            },
        }
    if args.json:
        print(json.dumps({"name": b.info.full_name, "splits": result}, indent=2))
        return 0
    print(_header(b))
    for name, r in result.items():
        for ln, hist in r["labels"].items():
            shown = ", ".join(f"{k}: {c}" for k, c in list(hist.items())[:30])
            print(f"  {name} / {ln}: {shown}")
    return 0


def _preview(b, split, files, args) -> int:
    try:
        from PIL import Image, ImageDraw
    except ImportError:
        raise CliError("preview needs Pillow: pip install 'tfrx[image]'") from None
    from tfrx.tfds import features as F

    feats = b.info.features
    image_key = args.image_key or next((k for k, f in feats.items() if isinstance(f, F.Image)), None)
    if image_key is None or image_key not in feats.features:
        raise CliError(f"no top-level Image feature in {b.info.full_name}; pass --image-key; features: {list(feats)}")
    labels = dict(_labels(feats))
    label_key = args.label_key if args.label_key is not None else next(iter(labels), "")
    items = [ex for _, ex in _examples(b, split, files, args.num_images)]
    if not items:
        raise CliError("no examples to preview")
    cell = args.cell
    cols = args.columns or math.ceil(math.sqrt(len(items)))
    rows = math.ceil(len(items) / cols)
    text_h = 14 if label_key else 0
    grid = Image.new("RGB", (cols * cell, rows * (cell + text_h)), "white")
    draw = ImageDraw.Draw(grid)
    for n, ex in enumerate(items):
        x, y = (n % cols) * cell, (n // cols) * (cell + text_h)
        img = np.asarray(ex[image_key])
        if img.dtype != np.uint8:
            lo, hi = float(img.min()), float(img.max())
            img = ((img - lo) / ((hi - lo) or 1) * 255).astype(np.uint8)
        img = img[..., 0] if img.shape[-1] == 1 else img[..., :3]
        tile = Image.fromarray(img)
        tile.thumbnail((cell, cell))
        grid.paste(tile, (x + (cell - tile.width) // 2, y + (cell - tile.height) // 2))
        if label_key:
            v = ex
            for part in label_key.split("/"):
                v = v[part]
            text = _summary(v, labels.get(label_key))
            draw.text((x + 2, y + cell), text[: cell // 6], fill="black")
    grid.save(args.output, format="PNG")
    print(
        f"{args.output}: {len(items)} images ({cols}x{rows}) from {b.info.full_name}"
        + (f", labels from {label_key!r}" if label_key else ""),
        file=sys.stderr,
    )
    return 0


def run(command: str, args, found) -> int | None:
    """The subcommand's exit status, or ``None`` to fall back to the plain TFRecord view."""
    if getattr(args, "format", None) == "tfdv" or getattr(args, "infer", False):
        return None  # TFDV's statistics / schema: of the records, as for any TFRecord files
    b, split, files = _open(found, args)
    if command in ("inspect", "head"):
        if getattr(args, "raw", False):
            return None  # raw bytes: the plain TFRecord view
        return _inspect(b, split, files, args)
    if command == "schema":
        return _schema(b, args)
    if command == "stats":
        return _stats(b, split, files, args)
    return _preview(b, split, files, args)
