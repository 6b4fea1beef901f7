"""Writes ``tf_glob.json``: what TensorFlow's glob matches among shards and tfrx's files beside them.

Run from the repository root with TensorFlow installed:

    python tests/golden/glob/make_glob_golden.py

``FILES`` is a folder as tfrx leaves it (shards, the ``.tfrx/`` folder with
indexes, a manifest, uncommitted ``.part`` shards and a commit journal) plus
the sidecars earlier versions wrote beside the shards. For every pattern in
``PATTERNS`` the JSON records the names ``tf.io.gfile.glob`` returns, so the
tests check without TensorFlow that no pattern written for shards reaches a
file in ``.tfrx/``, and that their own model of such globs (dot files
included, ``*`` never crossing ``/``) agrees with TensorFlow's.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

SHARDS = [f"train.tfrecord-{i:05d}-of-00003" for i in range(3)]
FILES = [
    *SHARDS,
    ".tfrx/train.manifest.json",
    ".tfrx/train.commit.json",
    ".tfrx/train-00003.part",
    *(f".tfrx/{s}.tfrxidx" for s in SHARDS),
    *(f".tfrx/{s}.idx" for s in SHARDS),
    # written beside the shards by earlier versions of tfrx
    "train.manifest.json",
    f"{SHARDS[0]}.tfrxidx",
    ".train-00001.part",
]
PATTERNS = ["train*", "train.tfrecord-*", "*-of-*", "*.tfrecord*", "train.tfrecord-?????-of-00003", "*"]


def main() -> None:
    import tensorflow as tf

    with tempfile.TemporaryDirectory() as tmp:
        for name in FILES:
            path = os.path.join(tmp, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            open(path, "wb").close()
        matches = {p: sorted(os.path.relpath(m, tmp) for m in tf.io.gfile.glob(os.path.join(tmp, p))) for p in PATTERNS}
    out = {"tensorflow": tf.__version__, "files": FILES, "matches": matches}
    (HERE / "tf_glob.json").write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
