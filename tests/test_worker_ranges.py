"""More of tfrx's own workers than files: record ranges per worker, batch-native, exactly once, resumable."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfrx
from tfrx.data import TFRecordDataset
from tfrx.data import _range_shard
from tfrx.data._range_shard import range_shard_pipeline, shard_ranges
from tfrx.io.ranges import RecordRange
from tfrx.testing import assert_resumes_exactly

SPEC = {"id": tfrx.FixedLenFeature([], tfrx.int64)}


@pytest.fixture(autouse=True)
def _small_ranges(monkeypatch):
    monkeypatch.setattr(_range_shard, "MIN_SPLIT_BYTES", 1)  # (test files are a few KB; forked workers inherit it)


def _files(root, counts, index=False):
    paths = []
    for f, count in enumerate(counts):
        p = str(root / f"r-{f}.tfrecord")
        ids = np.arange(f * 10_000, f * 10_000 + count)
        with tfrx.TFRecordWriter(p) as w:
            w.write_many(tfrx.encode_examples({"id": ids, "pad": [b"x" * (int(i) % 53) for i in ids]}))
        if index:
            tfrx.build_index(p)
        paths.append(p)
    return paths


def _all_ids(counts):
    return sorted(f * 10_000 + i for f, c in enumerate(counts) for i in range(c))


def _ids(batches):
    return [i for b in batches for i in b["id"].tolist()]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    counts=st.lists(st.integers(0, 90), min_size=1, max_size=4),
    extra=st.integers(1, 6),
    batch=st.integers(1, 17),
    shuffle=st.booleans(),
    index=st.booleans(),
)
def test_every_record_once_over_the_workers_ranges(tmp_path_factory, counts, extra, batch, shuffle, index):
    root = tmp_path_factory.mktemp("ranges")
    paths = _files(root, counts, index)
    workers = len(counts) + extra

    def pipeline():
        ds = TFRecordDataset(paths)
        return (ds.shuffle(13, seed=2) if shuffle else ds).batch(batch).parse(SPEC)

    got = []
    for w in range(workers):
        part = range_shard_pipeline(pipeline(), [(workers, w)])
        batches = list(part)
        assert all(len(b["id"]) == batch for b in batches[:-1])  # whole batches, joined across ranges
        got += _ids(batches)
    assert sorted(got) == _all_ids(counts)


def test_each_worker_reads_only_its_ranges_batch_native(tmp_path):
    paths = _files(tmp_path, [200, 100])
    parts = [range_shard_pipeline(TFRecordDataset(paths).batch(8).parse(SPEC), [(6, w)]) for w in range(6)]
    for part in parts:
        plan = part._plan()
        assert "record ranges" in plan and "shard(" not in plan and "batch-native" in plan
    sizes = [len(_ids(p)) for p in parts]
    assert sum(sizes) == 300 and min(sizes) > 0
    # contiguous: each worker's records are a run of one file's
    for part in parts:
        ids = _ids(part)
        assert ids == sorted(ids)


def test_nested_levels_partition_ranks_and_workers(tmp_path):
    paths = _files(tmp_path, [120, 80, 60])
    got = []
    for rank in range(2):
        for w in range(3):
            got += _ids(range_shard_pipeline(TFRecordDataset(paths).batch(5).parse(SPEC), [(2, rank), (3, w)]))
    assert sorted(got) == _all_ids([120, 80, 60])


def test_enough_files_small_files_and_shuffled_names_keep_todays_sharding(tmp_path, monkeypatch):
    paths = _files(tmp_path, [30, 30, 30])
    assert "record ranges" not in range_shard_pipeline(TFRecordDataset(paths).batch(4), [(3, 0)])._plan()
    files = tfrx.data.Dataset.list_files(str(tmp_path / "*.tfrecord"), shuffle=True, seed=1)
    assert "record ranges" not in range_shard_pipeline(TFRecordDataset(files).batch(4), [(5, 0)])._plan()
    monkeypatch.setattr(_range_shard, "MIN_SPLIT_BYTES", 1 << 30)
    assert "record ranges" not in range_shard_pipeline(TFRecordDataset(paths).batch(4), [(5, 0)])._plan()


def test_a_users_own_shard_is_kept(tmp_path):
    # shard(2, 1) of the user's, under the workers' split: what today's split gives, never records of shard 0
    from tfrx.data._shard import shard_pipeline

    paths = _files(tmp_path, [90, 60])

    def pipeline():
        return TFRecordDataset(paths).shard(2, 1).batch(4).parse(SPEC)

    for w in range(5):
        assert _ids(range_shard_pipeline(pipeline(), [(5, w)])) == _ids(shard_pipeline(pipeline(), [(5, w)]))


@pytest.mark.parametrize("shuffle", [False, True])
def test_a_workers_ranges_resume_exactly(tmp_path, shuffle):
    paths = _files(tmp_path, [70, 45])

    def pipeline():
        ds = TFRecordDataset(paths)
        return range_shard_pipeline((ds.shuffle(9, seed=4) if shuffle else ds).batch(6).parse(SPEC), [(5, 2)])

    assert_resumes_exactly(pipeline)
    assert_resumes_exactly(lambda: range_shard_pipeline(TFRecordDataset(paths), [(5, 1)]), steps=[0, 1, 7, 20])


def test_shard_ranges_deals_contiguous_groups_of_equal_bytes():
    ranges = [RecordRange("f", i, i + 1, nbytes=n) for i, n in enumerate([10, 10, 10, 10, 10, 10, 10, 10, 10])]
    groups = shard_ranges(ranges, 4)
    assert [len(g) for g in groups] == [2, 2, 3, 2]
    assert [r for g in groups for r in g] == ranges
    assert [len(g) for g in shard_ranges(ranges[:2], 4)] == [0, 1, 0, 1]


# ------------------------------------------------------------------ through tfrx's own worker processes

torch = pytest.importorskip("torch")


def _round_robin(parts):
    out, parts = [], [list(p) for p in parts]
    while any(parts):
        for p in parts:
            if p:
                out.append(p.pop(0))
    return out


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(counts=st.lists(st.integers(1, 80), min_size=1, max_size=3), extra=st.integers(1, 3))
def test_own_workers_more_than_files_exactly_once_in_order(tmp_path_factory, counts, extra):
    paths = _files(tmp_path_factory.mktemp("own"), counts)
    workers = len(counts) + extra

    def pipeline():
        return TFRecordDataset(paths).batch(7).parse(SPEC)

    want = _round_robin([_ids_per_batch(range_shard_pipeline(pipeline(), [(workers, w)])) for w in range(workers)])
    tds = pipeline().to_torch(num_workers=workers, multiprocessing_context="fork")
    got = [b["id"].tolist() for b in tds]
    tds.close()
    assert got == want  # PyTorch's order over the workers' ranges
    assert sorted(i for b in got for i in b) == _all_ids(counts)


def _ids_per_batch(part):
    return [b["id"].tolist() for b in part]


def test_own_workers_over_ranges_resume_from_state_dict(tmp_path):
    paths = _files(tmp_path, [90, 40])

    def pipeline():
        return TFRecordDataset(paths).shuffle(11, seed=5).batch(6).parse(SPEC)

    tds = pipeline().to_torch(num_workers=5, multiprocessing_context="fork")
    want = [b["id"].tolist() for b in tds]
    tds.close()
    for stop in (1, 4, len(want) - 2):
        tds = pipeline().to_torch(num_workers=5, multiprocessing_context="fork")
        it = iter(tds)
        head = [next(it)["id"].tolist() for _ in range(stop)]
        state = tds.state_dict()
        it.close()
        tds.close()
        again = pipeline().to_torch(num_workers=5, multiprocessing_context="fork")
        again.load_state_dict(state)
        assert head + [b["id"].tolist() for b in again] == want
        again.close()
