"""Writes the event files of tests/test_events.py with TensorFlow, and what TensorBoard's loader reads from them.

    python tests/golden/make_events_golden.py      # needs tensorflow and tensorboard

``tf2.tfevents``: ``tf.summary`` scalars, a histogram, images and text (TF2's
tensor summaries). ``tf1.tfevents``: TF1-style ``Summary`` values
(``simple_value``, ``histo``, ``image``) written as Event protos. ``expected.json``:
for each file and tag, the plugin and each (step, value) as TensorBoard's
``plugin_event_accumulator`` gives them (TF1 values converted by its data_compat).
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent / "events"


def write_tf2(tf, path: Path) -> None:
    import numpy as np

    tmp = path.parent / "tf2-tmp"
    writer = tf.summary.create_file_writer(str(tmp))
    rng = np.random.default_rng(0)
    with writer.as_default():
        for step in range(5):
            tf.summary.scalar("loss", 1.0 / (step + 1), step=step)
            tf.summary.scalar("metrics/accuracy", 0.5 + step / 10, step=step)
            tf.summary.histogram("weights", rng.normal(size=100).astype(np.float32), step=step, buckets=8)
        tf.summary.image("samples", rng.integers(0, 255, size=(2, 6, 5, 3)).astype(np.uint8), step=3)
        tf.summary.text("notes", "hello event files", step=4)
    writer.close()
    (written,) = list(tmp.iterdir())
    os.replace(written, path)
    tmp.rmdir()


def write_tf1(tf, path: Path) -> None:
    import numpy as np

    from PIL import Image

    png = io.BytesIO()
    Image.fromarray(np.arange(4 * 3 * 3, dtype=np.uint8).reshape(4, 3, 3)).save(png, format="PNG")
    with tf.io.TFRecordWriter(str(path)) as w:
        w.write(tf.compat.v1.Event(wall_time=1.0, file_version="brain.Event:2").SerializeToString())
        for step in range(3):
            histo = tf.compat.v1.HistogramProto(
                min=-1.0,
                max=2.0,
                num=10,
                sum=3.0,
                sum_squares=9.5,
                bucket_limit=[0.0, 1.0, 2.0],
                bucket=[3.0, 5.0, 2.0 + step],
            )
            summary = tf.compat.v1.Summary(
                value=[
                    tf.compat.v1.Summary.Value(tag="lr", simple_value=0.1 * (step + 1)),
                    tf.compat.v1.Summary.Value(tag="hist", histo=histo),
                ]
            )
            w.write(tf.compat.v1.Event(wall_time=10.0 + step, step=step, summary=summary).SerializeToString())
        image = tf.compat.v1.Summary.Image(height=4, width=3, colorspace=3, encoded_image_string=png.getvalue())
        summary = tf.compat.v1.Summary(value=[tf.compat.v1.Summary.Value(tag="picture", image=image)])
        w.write(tf.compat.v1.Event(wall_time=20.0, step=7, summary=summary).SerializeToString())


def tensorboard_view(path: Path) -> dict:
    """{tag: {"plugin": name, "points": [[step, value as a nested list or a list of hex strings]]}}."""
    from tensorboard.backend.event_processing import plugin_event_accumulator as pea
    from tensorboard.util import tensor_util

    acc = pea.EventAccumulator(str(path), size_guidance={pea.TENSORS: 0})
    acc.Reload()
    out = {}
    for tag in acc.Tags()["tensors"]:
        try:
            plugin = acc.SummaryMetadata(tag).plugin_data.plugin_name
        except KeyError:  # TensorBoard lists some tensors it keeps no metadata for
            plugin = ""
        points = []
        for ev in acc.Tensors(tag):
            value = tensor_util.make_ndarray(ev.tensor_proto)
            if value.dtype == object:
                value = [v.hex() for v in value.reshape(-1)]
            else:
                value = value.tolist()
            points.append([int(ev.step), value])
        out[tag] = {"plugin": plugin, "points": points}
    return out


def main() -> int:
    import tensorflow as tf

    HERE.mkdir(exist_ok=True)
    write_tf2(tf, HERE / "tf2.tfevents")
    write_tf1(tf, HERE / "tf1.tfevents")
    expected = {name: tensorboard_view(HERE / name) for name in ("tf2.tfevents", "tf1.tfevents")}
    (HERE / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
