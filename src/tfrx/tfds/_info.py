"""``dataset_info.json`` of a prepared TFDS directory: splits, shard files and lengths, metadata."""

from __future__ import annotations

import dataclasses
import json
import os
import posixpath
from typing import Any

from tfrx.errors import SpecError
from tfrx.tfds import features as features_lib

DEFAULT_TEMPLATE = "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"


def _join(root: str, name: str) -> str:
    return posixpath.join(root, name) if "://" in root else os.path.join(root, name)


def shard_filename(template: str, *, dataset: str, split: str, file_format: str, index: int, num_shards: int) -> str:
    """TFDS's ``ShardedFileTemplate`` naming: ``mnist-train.tfrecord-00000-of-00004``."""
    return (
        template.replace("{SHARD_X_OF_Y}", f"{index:05d}-of-{num_shards:05d}")
        .replace("{SHARD_INDEX}", f"{index:05d}")
        .replace("{NUM_SHARDS}", f"{num_shards:05d}")
        .replace("{DATASET}", dataset)
        .replace("{SPLIT}", split)
        .replace("{FILEFORMAT}", file_format)
    )


@dataclasses.dataclass
class SplitInfo:
    """One split: ``name``, ``shard_lengths``, ``num_bytes``, ``filenames`` (full paths, in order)."""

    name: str
    shard_lengths: list
    num_bytes: int
    filenames: list

    @property
    def num_examples(self) -> int:
        return int(sum(self.shard_lengths))

    @property
    def num_shards(self) -> int:
        return len(self.shard_lengths)

    def __repr__(self) -> str:
        return f"<SplitInfo num_examples={self.num_examples}, num_shards={self.num_shards}>"


@dataclasses.dataclass
class DatasetInfo:
    """What ``tfds.core.DatasetInfo`` holds that reading needs (printable)."""

    name: str
    version: str
    config_name: str
    description: str
    citation: str
    homepage: str
    file_format: str
    data_dir: str
    features: features_lib.Feature
    splits: dict
    supervised_keys: Any
    raw: dict = dataclasses.field(repr=False, default_factory=dict)

    @property
    def disable_shuffling(self) -> bool:
        """``disable_shuffling`` of the builder: TFDS then reads shards one after another by default."""
        return bool(self.raw.get("disableShuffling", False))

    @property
    def full_name(self) -> str:
        parts = [self.name] + ([self.config_name] if self.config_name else []) + [self.version]
        return "/".join(parts)

    def __repr__(self) -> str:
        splits = ",\n".join(f"        '{k}': {v!r}" for k, v in self.splits.items())
        desc = (self.description or "").strip().replace("\n", "\n    ")
        feats = self.features.describe(1) if hasattr(self.features, "describe") else repr(self.features)
        return (
            f"tfrx.tfds.DatasetInfo(\n    name='{self.name}',\n    full_name='{self.full_name}',\n"
            f'    description="""\n    {desc}\n    """,\n    homepage=\'{self.homepage}\',\n'
            f"    data_dir='{self.data_dir}',\n    file_format={self.file_format},\n"
            f"    features={feats},\n    supervised_keys={self.supervised_keys},\n"
            f'    splits={{\n{splits}\n    }},\n    citation="""{self.citation}""",\n)'
        )


def _supervised(raw) -> Any:
    sk = raw.get("supervisedKeys")
    if not sk:
        return None
    if "tuple" in sk:
        return tuple(_feature_key(i) for i in sk["tuple"].get("items", []))
    if "input" in sk:  # older layout {"input": "image", "output": "label"}
        return (sk["input"], sk["output"])
    return sk


def _feature_key(item):
    if "featureKey" in item:
        return item["featureKey"]
    if "tuple" in item:
        return tuple(_feature_key(i) for i in item["tuple"].get("items", []))
    if "dict" in item:
        return {k: _feature_key(v) for k, v in item["dict"].get("dict", {}).items()}
    return item


def read_info(data_dir: str, *, open_file, index_cache_dir: str | None = None) -> DatasetInfo:
    """Reads ``dataset_info.json``, ``features.json`` and the ``*.labels.txt`` files of ``data_dir``."""

    def read_text(name):
        with open_file(_join(data_dir, name)) as f:
            data = f.read()
        return data.decode("utf-8") if isinstance(data, bytes) else data

    try:
        raw = json.loads(read_text("dataset_info.json"))
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{data_dir!r} is not a prepared TFDS dataset directory: it has no "
            "dataset_info.json (expected <data_dir>/<name>/[<config>/]<version>/)"
        ) from None
    except json.JSONDecodeError as e:
        raise SpecError(f"{_join(data_dir, 'dataset_info.json')}: not valid JSON ({e})") from None

    def labels(name):
        stem = features_lib.label_file_stem(name)
        try:
            return [line.strip() for line in read_text(f"{stem}.labels.txt").splitlines() if line.strip()]
        except FileNotFoundError:
            return None

    try:
        feats_json = json.loads(read_text("features.json"))
    except FileNotFoundError:
        feats_json = raw.get("features")
        if feats_json is None:
            raise FileNotFoundError(
                f"{data_dir!r}: no features.json and no features in dataset_info.json; "
                "tfrx needs the feature description TFDS writes when preparing"
            ) from None
    features = features_lib.from_json(feats_json, labels=labels)

    name = raw.get("name", posixpath.basename(data_dir.rstrip("/")))
    file_format = raw.get("fileFormat", "tfrecord")
    if file_format not in ("tfrecord", ""):
        raise SpecError(
            f"{data_dir!r}: file format {file_format!r}; tfrx reads TFDS datasets prepared as "
            "tfrecord (array_record and parquet are not TFRecord files)"
        )
    file_format = "tfrecord"
    splits = {}
    for s in raw.get("splits", []):
        lengths = [int(x) for x in s.get("shardLengths", [])]
        template = s.get("filepathTemplate") or DEFAULT_TEMPLATE
        num_shards = len(lengths) if lengths or "numShards" not in s else int(s["numShards"])
        files = [
            _join(
                data_dir,
                shard_filename(
                    template, dataset=name, split=s["name"], file_format=file_format, index=i, num_shards=num_shards
                ),
            )
            for i in range(num_shards)
        ]
        if num_shards and not lengths:
            # TFDS 1.x wrote only numShards: count the records (through cached tfrx indexes).
            from tfrx.io.index import load_index

            lengths = [len(load_index(f, cache_dir=index_cache_dir)) for f in files]
        splits[s["name"]] = SplitInfo(s["name"], lengths, int(s.get("numBytes", 0)), files)
    return DatasetInfo(
        name=name,
        version=raw.get("version", ""),
        config_name=raw.get("configName", ""),
        description=raw.get("description", ""),
        citation=raw.get("citation", ""),
        homepage=raw.get("location", {}).get("urls", [""])[0] if raw.get("location") else "",
        file_format=file_format,
        data_dir=data_dir,
        features=features,
        splits=splits,
        supervised_keys=_supervised(raw),
        raw=raw,
    )
