"""Writing TFDS dataset directories that ``tfds.builder_from_directory`` loads."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from tfrx.tfds import features as features_lib
from tfrx.tfds.features.containers import _from_user
from tfrx.tfds._info import DEFAULT_TEMPLATE


def _example_bytes(features: features_lib.Feature, value) -> bytes:
    from tfrx.codec import make_example

    flat = features_lib.encode(features, value)
    values = {k: v for k, (_, v) in flat.items()}
    kinds = {k: kind for k, (kind, _) in flat.items()}
    return make_example(values, kinds=kinds).SerializeToString()


def write(
    data_dir,
    *,
    features,
    splits: Mapping[str, Iterable],
    name: str | None = None,
    version: str = "1.0.0",
    description: str = "",
    citation: str = "",
    homepage: str = "",
    supervised_keys: tuple | None = None,
    shard_size: int = 10_000,
    storage_options: dict | None = None,
) -> str:
    """Writes a prepared TFDS dataset to ``data_dir`` and returns it.

    ``features``: a :class:`tfrx.tfds.FeaturesDict` or a nested dict of
    connectors (``Tensor``, ``Image``, ``ClassLabel``...) and NumPy dtypes.
    ``splits``: ``{"train": iterable of example dicts, ...}``, each example as
    TFDS's ``_generate_examples`` yields it (arrays, lists, strings, label
    names). Examples go into shards of at most ``shard_size`` in the given
    order, streamed through :class:`tfrx.ShardedWriter` (crash-safe: shards
    get their final TFDS names only once all are complete), with ``dataset_info.json``,
    ``features.json`` and one ``<feature>.labels.txt`` per named ClassLabel or
    LabeledImage. An ``optional=True`` feature may be given ``None``: it is left
    out of the Example, as TFDS does, and TFDS reads it back as its default.
    ``data_dir`` is the version directory (``<root>/<name>/<version>``); a
    local path or an fsspec URL.
    """
    from tfrx.io._paths import is_url, url_to_fs
    from tfrx.io._sharded import ShardedWriter

    feats = _from_user(features)
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

    prefix = f"{data_dir.rstrip('/')}/{name}" if remote else os.path.join(data_dir, name)
    split_infos = []
    for split, examples in splits.items():
        # Streamed through ShardedWriter: shards fill one after the other under
        # temporary names and get their TFDS names ("-of-N" once N is known) on
        # close, in one journalled commit. An empty split gets one empty shard, as in TFDS.
        count, nbytes = 0, 0
        with ShardedWriter(
            f"{prefix}-{split}", max_records_per_shard=shard_size, manifest=False, storage_options=storage_options
        ) as writer:
            for ex in examples:
                blob = _example_bytes(feats, ex)
                writer.write(blob)
                count += 1
                nbytes += len(blob)
        lengths = [min(shard_size, count - start) for start in range(0, count, shard_size)] or [0]
        split_infos.append(
            {
                "filepathTemplate": DEFAULT_TEMPLATE,
                "name": split,
                "numBytes": str(nbytes),
                "shardLengths": [str(n) for n in lengths],
            }
        )

    info: dict[str, Any] = {
        "citation": citation,
        "description": description,
        "fileFormat": "tfrecord",
        "moduleName": "tfrx.tfds",
        "name": name,
        "splits": split_infos,
        "version": version,
    }
    if homepage:
        info["location"] = {"urls": [homepage]}
    if supervised_keys:
        info["supervisedKeys"] = {"tuple": {"items": [{"featureKey": k} for k in supervised_keys]}}
    put_text("dataset_info.json", json.dumps(info, indent=2, sort_keys=True))
    put_text("features.json", json.dumps(features_lib.to_json(feats), indent=4, sort_keys=True))
    for lname, label in features_lib.class_labels(feats, labeled_images=True):
        if label.names_given:  # ClassLabel(num_classes=n) has no file, as in TFDS
            put_text(f"{features_lib.label_file_stem(lname)}.labels.txt", "\n".join(label.names) + "\n")
    return data_dir
