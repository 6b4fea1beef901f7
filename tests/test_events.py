"""tfrx.events: TensorBoard event files read without TensorFlow, against TensorBoard's own loader."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tfrx.events as events

GOLDEN = Path(__file__).resolve().parent / "golden" / "events"


def tensorboard_shape(ev: events.Events) -> dict:
    """Our records in the form make_events_golden.py stores TensorBoard's: {tag: {plugin, points}}."""
    out: dict = {}

    def add(tag, plugin, step, value):
        entry = out.setdefault(tag, {"plugin": plugin, "points": []})
        entry["points"].append([step, value])

    for s in ev.scalars:
        add(s.tag, "scalars", s.step, float(np.float32(s.value)))
    for h in ev.histograms:
        add(h.tag, "histograms", h.step, h.table().tolist())
    images: dict = {}
    for im in ev.images:
        key = (im.tag, im.step)
        if key not in images:
            images[key] = [str(im.width).encode().hex(), str(im.height).encode().hex()]
        images[key].append(im.encoded.hex())
    for (tag, step), value in images.items():
        add(tag, "images", step, value)
    for t in ev.text:
        values = [t.text] if isinstance(t.text, str) else list(np.asarray(t.text).reshape(-1))
        add(t.tag, "text", t.step, [v.encode().hex() for v in values])
    return out


def _close(a, b):
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y)
    elif isinstance(a, float) or isinstance(b, float):
        assert a == pytest.approx(b, rel=1e-6, abs=1e-9)
    else:
        assert a == b


@pytest.mark.parametrize("name", ["tf1.tfevents", "tf2.tfevents"])
def test_golden_files_read_as_tensorboard_reads_them(name):
    expected = json.loads((GOLDEN / "expected.json").read_text())[name]
    got = tensorboard_shape(events.read(GOLDEN / name))
    assert sorted(got) == sorted(expected)
    for tag in expected:
        assert got[tag]["plugin"] == expected[tag]["plugin"], tag
        _close(got[tag]["points"], expected[tag]["points"])


def test_kinds_fields_and_pandas():
    ev = events.read(GOLDEN / "tf1.tfevents")
    assert ev.events == 5 and ev.files == [str(GOLDEN / "tf1.tfevents")]
    assert [(s.step, s.wall_time) for s in ev.scalars] == [(0, 10.0), (1, 11.0), (2, 12.0)]
    h = ev.histograms[2]
    assert (h.min, h.max, h.num, h.sum, h.sum_squares) == (-1.0, 2.0, 10.0, 3.0, 9.5)
    assert h.counts.tolist() == [3.0, 5.0, 4.0] and h.limits.tolist() == [0.0, 1.0, 2.0]
    assert ev.images[0].encoded.startswith(b"\x89PNG") and (ev.images[0].width, ev.images[0].height) == (3, 4)
    text = events.read(GOLDEN / "tf2.tfevents").text
    assert [(t.tag, t.step, t.text) for t in text] == [("notes", 4, "hello event files")]
    assert ev.tags() == {"scalars": ["lr"], "histograms": ["hist"], "images": ["picture"]}
    pd = pytest.importorskip("pandas")
    frames = ev.to_pandas()
    assert isinstance(frames["scalars"], pd.DataFrame) and frames["scalars"]["value"].round(3).tolist() == [
        0.1,
        0.2,
        0.3,
    ]


def test_a_folder_of_runs(tmp_path):
    for run in ("train", "eval/a"):
        (tmp_path / run).mkdir(parents=True)
        (tmp_path / run / "events.out.tfevents.1.host").write_bytes((GOLDEN / "tf1.tfevents").read_bytes())
    (tmp_path / "notes.txt").write_text("not an event file")
    ev = events.read(tmp_path)
    assert sorted({s.run for s in ev.scalars}) == ["eval/a", "train"] and len(ev.scalars) == 6


def test_a_truncated_file_reads_what_is_whole(tmp_path):
    data = (GOLDEN / "tf2.tfevents").read_bytes()
    cut = tmp_path / "events.out.tfevents.cut"
    cut.write_bytes(data[:-7])
    with pytest.raises(Exception, match="events.out.tfevents.cut"):
        events.read(cut)
    with pytest.warns(Warning):
        partial = events.read(cut, on_error="warn")
    assert 0 < partial.events < events.read(GOLDEN / "tf2.tfevents").events


def test_pytorch_summary_writer(tmp_path):
    tb = pytest.importorskip("torch.utils.tensorboard")
    writer = tb.SummaryWriter(str(tmp_path))
    values = np.linspace(-1, 1, 50)
    for step in range(4):
        writer.add_scalar("train/loss", 2.0 - step * 0.5, step)
    writer.add_histogram("w", values, 1)
    writer.add_text("msg", "from torch", 2)
    writer.add_image("img", np.zeros((3, 4, 5), np.uint8), 3)
    writer.close()
    ev = events.read(tmp_path)
    assert [(s.step, s.value) for s in ev.scalars if s.tag == "train/loss"] == [(0, 2.0), (1, 1.5), (2, 1.0), (3, 0.5)]
    (h,) = ev.histograms
    assert h.counts.sum() == 50 and h.min == -1.0 and h.max == 1.0
    assert any(t.tag.startswith("msg") and "from torch" in str(t.text) for t in ev.text + ev.tensors)
    (im,) = ev.images
    assert im.encoded.startswith(b"\x89PNG") and (im.width, im.height) == (5, 4)


def test_corpus_event_files_match_tensorboard(tf, corpus_dir):
    pytest.importorskip("tensorboard.backend.event_processing.plugin_event_accumulator")
    import sys

    sys.path.insert(0, str(GOLDEN.parent))
    from make_events_golden import tensorboard_view

    files = sorted(corpus_dir.glob("*tfevents*"))
    assert files
    for path in files:
        ours = tensorboard_shape(events.read(path))
        theirs = tensorboard_view(path)
        for tag, entry in theirs.items():
            if entry["plugin"] in ("scalars", "histograms", "images", "text"):
                assert tag in ours, (path.name, tag)
                assert ours[tag]["plugin"] == entry["plugin"]
                _close(ours[tag]["points"], entry["points"])
        assert set(ours) <= set(theirs), path.name


def test_golden_files_are_what_tensorflow_writes(tf, tmp_path):
    pytest.importorskip("tensorboard.backend.event_processing.plugin_event_accumulator")
    import sys

    sys.path.insert(0, str(GOLDEN.parent))
    import make_events_golden as mk

    mk.write_tf2(tf, tmp_path / "tf2.tfevents")
    fresh = mk.tensorboard_view(tmp_path / "tf2.tfevents")
    expected = json.loads((GOLDEN / "expected.json").read_text())["tf2.tfevents"]
    assert sorted(fresh) == sorted(expected)
    got = tensorboard_shape(events.read(tmp_path / "tf2.tfevents"))
    for tag in fresh:
        _close(got[tag]["points"], fresh[tag]["points"])
