"""tfrx.dask with Dask's local (synchronous) scheduler: round trips, splits, projection, damage, failed writes."""

from __future__ import annotations

import os
from typing import Any
import re

import numpy as np
import pytest

import tfrx

pytest.importorskip("dask.dataframe")
pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")

import dask  # noqa: E402
import dask.dataframe as dd  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tfrx.integrations import _scaleout as so  # noqa: E402
from tfrx.integrations import dask as tdask  # noqa: E402


@pytest.fixture(autouse=True)
def _sync_scheduler():
    with dask.config.set(scheduler="synchronous"):
        yield


def _frame(n: int) -> Any:
    return pd.DataFrame(
        {
            "id": pd.array(np.arange(n), pd.ArrowDtype(pa.int64())),
            "f": pd.array([None if i % 4 == 1 else i / 4 for i in range(n)], pd.ArrowDtype(pa.float32())),
            "b": pd.array([b"\x00\xff" * (i % 3) for i in range(n)], pd.ArrowDtype(pa.binary())),
            "l": pd.array([list(range(i % 4)) for i in range(n)], pd.ArrowDtype(pa.large_list(pa.int64()))),
            "lb": pd.array([[b"w%d" % i] * (i % 3) for i in range(n)], pd.ArrowDtype(pa.large_list(pa.binary()))),
        }
    )


def test_round_trip_of_every_type(tmp_path):
    frame = _frame(50)
    paths = tdask.to_tfrecord(dd.from_pandas(frame, npartitions=3), tmp_path / "train")
    assert [os.path.basename(p) for p in paths] == [f"train.tfrecord-{i:05d}-of-00003" for i in range(3)]
    assert not [n for n in os.listdir(tmp_path / ".tfrx") if n.endswith(".part")]
    back = tdask.read_tfrecord(str(tmp_path / "train.*"))
    assert back.npartitions == 3
    got = back.compute().sort_values("id").reset_index(drop=True)
    assert dict(got.dtypes.astype(str)) == {
        "b": "binary[pyarrow]",
        "f": "float[pyarrow]",
        "id": "int64[pyarrow]",
        "l": "large_list<item: int64>[pyarrow]",  # VarLen features: int64 offsets, as tfrx.integrations.arrow
        "lb": "large_list<item: binary>[pyarrow]",
    }
    pd.testing.assert_frame_equal(got[frame.columns], frame)


def test_sequence_examples_round_trip(tmp_path):
    steps = pa.list_(pa.list_(pa.float32()))
    frame = pd.DataFrame(
        {
            "id": pd.array(np.arange(20), pd.ArrowDtype(pa.int64())),
            "steps": pd.array([[[float(i)] * j for j in range(i % 4)] for i in range(20)], pd.ArrowDtype(steps)),
        }
    )
    tdask.to_tfrecord(
        dd.from_pandas(frame, npartitions=2), tmp_path / "seq", record_type="SequenceExample", compression="gzip"
    )
    back = tdask.read_tfrecord(str(tmp_path / "seq.*"), record_type="sequence_example").compute()
    assert str(back["steps"].dtype) == "list<item: list<item: float>>[pyarrow]"
    pd.testing.assert_frame_equal(back.sort_values("id").reset_index(drop=True)[["id", "steps"]], frame)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    values=st.lists(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=4), min_size=1, max_size=40),
    parts=st.integers(1, 4),
)
def test_round_trip_property(tmp_path_factory, values, parts):
    out = tmp_path_factory.mktemp("prop")
    frame = pd.DataFrame(
        {
            "id": pd.array(np.arange(len(values)), pd.ArrowDtype(pa.int64())),
            "v": pd.array(values, pd.ArrowDtype(pa.list_(pa.int64()))),
        }
    )
    tdask.to_tfrecord(dd.from_pandas(frame, npartitions=parts), out / "p")
    spec = {"id": tfrx.FixedLenFeature([], tfrx.int64), "v": tfrx.VarLenFeature(tfrx.int64)}
    back = tdask.read_tfrecord(str(out / "p.*"), spec).compute().sort_values("id").reset_index(drop=True)
    assert back["v"].tolist() == [list(v) for v in values]


def _write_examples(path, n: int) -> None:
    with tfrx.TFRecordWriter(str(path)) as w:
        for i in range(n):
            feature = {
                "id": tfrx.train.Feature(int64_list=tfrx.train.Int64List(value=[i])),
                "pad": tfrx.train.Feature(float_list=tfrx.train.FloatList(value=[0.5] * 40)),
            }
            w.write(tfrx.train.Example(features=tfrx.train.Features(feature=feature)).SerializeToString())


@pytest.mark.parametrize("build_index", [False, True])
def test_one_large_file_gives_several_partitions_and_every_record_once(tmp_path, build_index):
    path = tmp_path / "big.tfrecord"
    _write_examples(path, 2000)
    size = os.path.getsize(path)
    ddf = tdask.read_tfrecord(str(path), split_bytes=size // 6, build_index=build_index)
    assert ddf.npartitions >= 6
    assert sorted(ddf["id"].compute().tolist()) == list(range(2000))


def test_column_selection_is_pushed_into_the_reads(tmp_path, monkeypatch):
    path = tmp_path / "p.tfrecord"
    _write_examples(path, 30)
    seen = []
    real = tdask._ReadRange.__call__

    def spy(self, piece, columns=None):
        seen.append(None if columns is None else list(columns))
        return real(self, piece, columns)

    monkeypatch.setattr(tdask._ReadRange, "__call__", spy)
    ddf = tdask.read_tfrecord(str(path))
    assert list(ddf.columns) == ["id", "pad"]
    assert ddf["id"].sum().compute() == sum(range(30))
    assert seen and all(c == ["id"] for c in seen)


def test_damaged_input_raises_the_located_error(tmp_path):
    path = tmp_path / "damaged.tfrecord"
    _write_examples(path, 40)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(tfrx.CorruptRecordError) as local:
        list(tfrx.read_records(str(path)))
    spec = {"id": tfrx.FixedLenFeature([], tfrx.int64)}
    with pytest.raises(tfrx.CorruptRecordError) as remote:
        tdask.read_tfrecord(str(path), spec).compute()
    assert str(path) in str(remote.value)
    assert remote.value.record_index == local.value.record_index and remote.value.offset == local.value.offset
    skipped = tdask.read_tfrecord(str(path), spec, on_error="skip").compute()
    assert len(skipped) == 39


def test_a_partition_failing_mid_write_leaves_no_shard_and_no_part(tmp_path, monkeypatch):
    tdask.to_tfrecord(dd.from_pandas(_frame(10), npartitions=1), tmp_path / "train")
    before = sorted(os.listdir(tmp_path))
    calls = []
    real = so.PartWriter.write

    def dies_on_the_third_batch(self, batch):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("the worker dies here")
        return real(self, batch)

    monkeypatch.setattr(so.PartWriter, "write", dies_on_the_third_batch)
    with pytest.raises(RuntimeError, match="dies here"):
        tdask.to_tfrecord(dd.from_pandas(_frame(40), npartitions=2), tmp_path / "train", batch_rows=8)
    assert sorted(os.listdir(tmp_path)) == before
    assert not [n for n in os.listdir(tmp_path / ".tfrx") if n.endswith(".part")]
    assert len(tdask.read_tfrecord(str(tmp_path / "train.*")).compute()) == 10


def test_inferred_scalars_are_nullable_and_kind_conflicts_are_named(tmp_path):
    for i, value in enumerate([[1], [], [2]]):
        feature = {"k": tfrx.train.Feature(int64_list=tfrx.train.Int64List(value=value))} if value else {}
        feature["id"] = tfrx.train.Feature(int64_list=tfrx.train.Int64List(value=[i]))
        with tfrx.TFRecordWriter(str(tmp_path / f"a{i}.tfrecord")) as w:
            w.write(tfrx.train.Example(features=tfrx.train.Features(feature=feature)).SerializeToString())
    got = tdask.read_tfrecord(str(tmp_path / "a*.tfrecord")).compute()
    assert str(got["k"].dtype) == "int64[pyarrow]"
    assert got["k"].isna().tolist() == [False, True, False] and got["k"].dropna().tolist() == [1, 2]
    with tfrx.TFRecordWriter(str(tmp_path / "a3.tfrecord")) as w:
        feature = {"k": tfrx.train.Feature(float_list=tfrx.train.FloatList(value=[1.5]))}
        w.write(tfrx.train.Example(features=tfrx.train.Features(feature=feature)).SerializeToString())
    with pytest.raises(
        ValueError, match=re.escape("'k' (a0.tfrecord: int64, a2.tfrecord: int64, a3.tfrecord: float32)")
    ):
        tdask.read_tfrecord(str(tmp_path / "a*.tfrecord"))


def test_to_tfrecord_writes_an_index_per_shard_and_raw_records(tmp_path):
    frame = pd.DataFrame({"record": pd.array([b"a", b"bc", b""], pd.ArrowDtype(pa.binary()))})
    paths = tdask.to_tfrecord(dd.from_pandas(frame, npartitions=2), tmp_path / "raw", record_type="bytes", index=True)
    assert all(os.path.exists(tmp_path / ".tfrx" / (os.path.basename(p) + ".tfrxidx")) for p in paths)
    assert [bytes(r) for r in tfrx.read_records(paths)] == [b"a", b"bc", b""]
    back = tdask.read_tfrecord(str(tmp_path / "raw.*"), record_type="bytes").compute()
    assert back["record"].tolist() == [b"a", b"bc", b""]


def test_short_names_are_the_integration_modules():
    import tfrx.dask
    import tfrx.integrations

    assert tfrx.dask is tdask and tfrx.integrations.dask is tdask
    assert "dask" in tfrx.integrations.INTEGRATIONS and "spark" in tfrx.integrations.INTEGRATIONS
