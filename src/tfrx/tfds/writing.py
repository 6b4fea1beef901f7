"""Writing TFDS dataset directories that ``tfds.builder_from_directory`` loads."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from tfrx.tfds import features as features_lib
from tfrx.tfds.info import DEFAULT_TEMPLATE, shard_filename


def _example_bytes(features: features_lib.Feature, value) -> bytes:
    from tfrx.codec import make_example

    flat = features_lib.encode(features, value)
    values = {k: v for k, (_, v) in flat.items()}
    kinds = {k: kind for k, (kind, _) in flat.items()}
    return make_example(values, kinds=kinds).SerializeToString()


def write(data_dir, *, features, splits: Mapping[str, Iterable], name: str | None = None,
          version: str = "1.0.0", description: str = "", citation: str = "", homepage: str = "",
          supervised_keys: tuple | None = None, shard_size: int = 10_000,
          storage_options: dict | None = None) -> str:
    """Writes a prepared TFDS dataset to ``data_dir`` and returns it.

    ``features``: a :class:`tfrx.tfds.FeaturesDict` or a nested dict of
    connectors (``Tensor``, ``Image``, ``ClassLabel``...) and NumPy dtypes.
    ``splits``: ``{"train": iterable of example dicts, ...}``, each example as
    TFDS's ``_generate_examples`` yields it (arrays, lists, strings, label
    names). Examples go into shards of at most ``shard_size`` in the given
    order, named as TFDS names them, with ``dataset_info.json``,
    ``features.json`` and one ``<feature>.labels.txt`` per named ClassLabel.
    ``data_dir`` is the version directory (``<root>/<name>/<version>``); a
    local path or an fsspec URL.
    """
    from tfrx.io import TFRecordWriter
    from tfrx.io.paths import is_url, url_to_fs

    feats = features_lib._from_user(features)
    if not isinstance(feats, features_lib.FeaturesDict):
        raise TypeError(f"features must be a FeaturesDict or a dict, got {type(features).__name__}")
    data_dir = os.fsdecode(os.fspath(data_dir))
    name = name or os.path.basename(os.path.dirname(data_dir.rstrip("/"))) or "dataset"
    if shard_size < 1:
        raise ValueError(f"shard_size must be positive, got {shard_size}")
    remote = is_url(data_dir)
    if remote:
        fs, root = url_to_fs(data_dir, storage_options)
        fs.makedirs(root, exist_ok=True)

        def put_text(fname, text):
            with fs.open(f"{root}/{fname}", "w") as f:
                f.write(text)
    else:
        os.makedirs(data_dir, exist_ok=True)

        def put_text(fname, text):
            with open(os.path.join(data_dir, fname), "w", encoding="utf-8") as f:
                f.write(text)

    def join(fname):
        return f"{data_dir.rstrip('/')}/{fname}" if remote else os.path.join(data_dir, fname)

    def rename(src, dst):
        if remote:
            fs.mv(url_to_fs(src, storage_options)[1], url_to_fs(dst, storage_options)[1])
        else:
            os.replace(src, dst)

    split_infos = []
    for split, examples in splits.items():
        # Streamed: shards are written under temporary names while the examples
        # come, then renamed once their count (the "-of-N" part) is known.
        lengths: list = []
        nbytes = 0
        temp: list = []
        writer = None
        try:
            for ex in examples:
                if writer is None or lengths[-1] == shard_size:
                    if writer is not None:
                        writer.close()
                    temp.append(join(f".tmp-{name}-{split}-{len(temp):05d}"))
                    writer = TFRecordWriter(temp[-1], storage_options=storage_options)
                    lengths.append(0)
                blob = _example_bytes(feats, ex)
                writer.write(blob)
                lengths[-1] += 1
                nbytes += len(blob)
        finally:
            if writer is not None:
                writer.close()
        if not temp:  # an empty split still has one (empty) shard, as TFDS writes it
            temp.append(join(f".tmp-{name}-{split}-00000"))
            TFRecordWriter(temp[-1], storage_options=storage_options).close()
            lengths.append(0)
        for i, path in enumerate(temp):
            rename(path, join(shard_filename(DEFAULT_TEMPLATE, dataset=name, split=split, file_format="tfrecord",
                                             index=i, num_shards=len(temp))))
        split_infos.append({"filepathTemplate": DEFAULT_TEMPLATE, "name": split, "numBytes": str(nbytes),
                            "shardLengths": [str(n) for n in lengths]})

    info: dict[str, Any] = {
        "citation": citation, "description": description, "fileFormat": "tfrecord",
        "moduleName": "tfrx.tfds", "name": name, "splits": split_infos, "version": version,
    }
    if homepage:
        info["location"] = {"urls": [homepage]}
    if supervised_keys:
        info["supervisedKeys"] = {"tuple": {"items": [{"featureKey": k} for k in supervised_keys]}}
    put_text("dataset_info.json", json.dumps(info, indent=2, sort_keys=True))
    put_text("features.json", json.dumps(features_lib.to_json(feats), indent=4, sort_keys=True))
    for lname, label in features_lib.class_labels(feats):
        if label.names:
            put_text(f"{features_lib.label_file_stem(lname)}.labels.txt", "\n".join(label.names) + "\n")
    return data_dir
