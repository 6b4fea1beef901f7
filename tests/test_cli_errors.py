"""CLI errors report damage as damage and give advice as the command's own flags, never as Python arguments."""

from __future__ import annotations

import gzip

import pytest

import tfrx
from tfrx.cli import main
from tfrx.cli._common import cli_message

READING = ["inspect", "head", "count", "schema", "stats", "reshard", "preview", "convert"]


def _run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def damaged(tmp_path):
    """Five Examples; the payload of record 0 has one flipped byte (its data CRC no longer matches)."""
    path = tmp_path / "damaged.tfrecord"
    with tfrx.TFRecordWriter(str(path)) as w:
        for i in range(5):
            w.write(tfrx.make_example({"i": [i], "s": [b"hello %d" % i]}).SerializeToString())
    data = bytearray(path.read_bytes())
    data[20] ^= 0xFF
    path.write_bytes(bytes(data))
    return str(path)


@pytest.mark.parametrize("command", READING)
def test_every_reading_command_has_on_error(capsys, command):
    status, out, _ = _run(capsys, command, "--help")
    assert status == 0 and "--on-error {raise,skip,warn}" in out


@pytest.mark.parametrize("command", ["schema", "stats", "inspect"])
def test_a_bad_crc_is_reported_as_damage_with_the_flag(capsys, damaged, command):
    status, _, err = _run(capsys, command, damaged)
    assert status == 1
    assert "data CRC mismatch" in err and "record 0 at byte 0" in err
    assert "not tf.train.Example" not in err
    assert "--on-error skip" in err and "on_error=" not in err


def test_on_error_skip_and_warn_read_past_the_damage(capsys, damaged):
    import json

    status, out, err = _run(capsys, "stats", "--json", "--on-error", "skip", damaged)
    assert status == 0 and json.loads(out)["records"] == 4
    with pytest.warns(tfrx.CorruptRecordWarning, match="data CRC mismatch"):
        status, out, err = _run(capsys, "schema", "--on-error", "warn", damaged)
    assert status == 0 and "'i': " in out
    status, out, _ = _run(capsys, "inspect", "--json", "-n", "-1", "--on-error", "skip", damaged)
    assert [json.loads(line)["i"] for line in out.splitlines()] == [[1], [2], [3], [4]]


def test_index_of_a_gzip_file_builds_its_checkpoint_index_also_at_a_url(capsys, tmp_path):
    path = tmp_path / "data.tfrecord.gz"
    plain = tmp_path / "plain.tfrecord"
    with tfrx.TFRecordWriter(str(plain)) as w:
        w.write(b"record")
    path.write_bytes(gzip.compress(plain.read_bytes()))
    status, _, err = _run(capsys, "index", str(path))
    assert status == 0, err
    assert tfrx.RandomAccessDataset(str(path))[0] == b"record"
    fsspec = pytest.importorskip("fsspec")
    fsspec.filesystem("memory").pipe("/cli-errors/data.tfrecord.gz", path.read_bytes())
    status, _, err = _run(capsys, "index", "memory://cli-errors/data.tfrecord.gz")
    assert status == 0, err
    assert fsspec.filesystem("memory").exists("/cli-errors/.tfrx/data.tfrecord.gz.tfrxzidx")  # beside the object
    assert tfrx.RandomAccessDataset("memory://cli-errors/data.tfrecord.gz", index="sidecar")[0] == b"record"
    status, _, err = _run(capsys, "index", "--output", str(tmp_path / "x.tfrxidx"), str(path))
    assert status == 2
    assert "cannot describe a compressed stream" in err
    assert "--output-compression none" in err and "reshard --compression" not in err


def test_reshard_help_names_the_output_flag(capsys):
    _, out, _ = _run(capsys, "reshard", "--help")
    assert "--output-compression gzip" in out and "--num-shards 16 --compression" not in out


@pytest.mark.parametrize(
    ("message", "command", "expected"),
    [
        (
            'bad; pass on_error="skip" to skip corrupt records',
            "count",
            "bad; pass --on-error skip to skip corrupt records",
        ),
        ("use on_error='warn'", "stats", "use --on-error warn"),
        ("pass raw=True to keep bytes", "convert", "pass --raw to keep bytes"),
        ("(`tfrx reshard --compression none`, or", "index", "(`tfrx reshard --output-compression none`, or"),
        ('looks GZIP-compressed; pass compression="GZIP"', "count", "looks GZIP-compressed; pass --compression gzip"),
        ("pass compression_type='ZLIB'", "convert", "pass --compression zlib"),
        ('pass compression=""', "inspect", "pass --compression none"),
    ],
)
def test_library_advice_becomes_flags(message, command, expected):
    assert cli_message(message, command) == expected


@pytest.mark.parametrize(("command", "flag"), [("count", "--compression"), ("convert", "--compression")])
def test_a_compressed_file_read_as_plain_gets_one_flag_of_advice(tmp_path, command, flag):
    import gzip

    from tfrx.io import TFRecordWriter

    path = tmp_path / "data.tfrecord"
    with TFRecordWriter(str(path)) as w:
        w.write(b"x" * 40)
    path.write_bytes(gzip.compress(path.read_bytes()))
    with pytest.raises(tfrx.CorruptRecordError) as info:
        list(tfrx.read_records(str(path), compression=""))
    message = cli_message(str(info.value), command)
    assert f"read as uncompressed ({flag} none)" in message
    assert f"read it with {flag} gzip, or leave the compression out" in message
    assert "TFRecordDataset" not in message and "on the command line" not in message
    assert message.count(f"{flag} gzip") == 1


def test_warnings_are_one_line_with_flags(damaged):
    import os
    import subprocess
    import sys

    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [os.path.dirname(tfrx.__path__[0]), os.environ.get("PYTHONPATH")])),
    )
    done = subprocess.run(
        [sys.executable, "-m", "tfrx", "stats", "--on-error", "warn", damaged],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0 and done.stdout.startswith("4 records")
    assert done.stderr.startswith("tfrx stats: warning: data CRC mismatch")
    assert len(done.stderr.splitlines()) == 1 and "on_error=" not in done.stderr


def test_inspect_json_keeps_features_with_no_kind(capsys, tmp_path, corpus_dir):
    import json

    # TFX's CSV ExampleGen writes a missing value as a Feature with no kind set
    example = tfrx.train.Example()
    example.features.feature["age"].int64_list.value.append(3)
    example.features.feature["city"].SetInParent()
    path = tmp_path / "empty_kind.tfrecord"
    with tfrx.TFRecordWriter(str(path)) as w:
        w.write(example.SerializeToString())
    status, out, _ = _run(capsys, "inspect", "--json", str(path))
    assert status == 0 and json.loads(out) == {"age": [3], "city": None}
    _, text, _ = _run(capsys, "inspect", str(path))
    assert '"city"' in text
    corpus = corpus_dir / "tfx__csv_example_gen_unlabelled_data_tfrecord-00000-of-00012.gz"
    status, out, _ = _run(capsys, "inspect", "--json", "-n", "-1", str(corpus))
    rows = [json.loads(line) for line in out.splitlines()]
    names = {k for r in rows for k in r}
    assert all(set(r) == names for r in rows)  # every feature of every record, set or not
    assert any(v is None for r in rows for v in r.values())


def test_progress_without_tqdm_says_so(capsys, monkeypatch, damaged):
    import sys

    monkeypatch.setitem(sys.modules, "tqdm", None)  # as if tqdm were not installed
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    with pytest.warns(UserWarning, match=r"progress=True needs tqdm.*pip install 'tfrx\[progress\]'"):
        status, _, _ = _run(capsys, "stats", "--progress", "--on-error", "skip", damaged)
    assert status == 0
    assert cli_message("progress=True needs tqdm", "count") == "--progress needs tqdm"


def test_verify_progress_total_is_the_file_sizes(capsys, monkeypatch, tmp_path, damaged):
    import os
    import sys
    import types

    bars = []

    class FakeBar:
        def __init__(self, total=None, unit=None, **kwargs):
            self.total, self.unit, self.n = total, unit, 0
            bars.append(self)

        def update(self, n=1):
            self.n += n

        def close(self):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.close()

    fake = types.ModuleType("tqdm.auto")
    fake.tqdm = FakeBar
    monkeypatch.setitem(sys.modules, "tqdm", types.ModuleType("tqdm"))
    monkeypatch.setitem(sys.modules, "tqdm.auto", fake)
    intact = tmp_path / "intact.tfrecord"
    with tfrx.TFRecordWriter(str(intact)) as w:
        w.write_many([b"x" * i for i in range(50)])
    status, _, _ = _run(capsys, "verify", "--progress", str(intact), damaged)
    assert status == 1
    (bar,) = bars
    assert bar.unit == "B" and bar.total == os.path.getsize(intact) + os.path.getsize(damaged)
    assert bar.n == bar.total
