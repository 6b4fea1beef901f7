"""The interleave planner: one turn order behind Dataset.interleave and the batch-native parallel reads.

The per-element form (``Dataset.interleave``) is checked against tf.data in
test_data_interleave.py; here the batch-native form (whole runs of records
per file, many rounds planned at once) must give exactly its order, for
random cycle and block lengths, file sizes, piece sizes and batch sizes.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfrx
import tfrx.data._parallel_reads as parallel_reads
from data_helpers import write_fake_files
from tfrx.data import Dataset, TFRecordDataset
from tfrx.data._interleave_plan import InterleavePlanner
from tfrx.testing import assert_resumes_exactly


class _Pieces:
    """A slot whose input gives ``pieces`` elements at a time (as a reader hands over batches)."""

    def __init__(self, name: int, pieces: list[int]) -> None:
        self.name, self.pieces, self.left, self.taken, self.closed = name, list(pieces), 0, 0, False

    def available(self) -> int:
        while not self.left and self.pieces:
            self.left = self.pieces.pop(0)
        return self.left

    def ready(self) -> bool:
        return True

    def take(self, n: int) -> list:
        assert 1 <= n <= self.left
        self.left -= n
        self.taken += n
        return [(self.name, i) for i in range(self.taken - n, self.taken)]

    def close(self) -> None:
        self.closed = True


def _planner(inputs, cycle, block):
    queue = [_Pieces(i, p) for i, p in enumerate(inputs)]
    return InterleavePlanner(cycle, block, lambda: queue.pop(0) if queue else None)


def _per_element(inputs, cycle, block):
    plan, out = _planner(inputs, cycle, block), []
    while (slot := plan.next_one()) is not None:
        out += slot.take(1)
    return out


def _reference(inputs, cycle, block):
    """tf.data's deterministic interleave written out directly, element by element."""
    its = [iter([(i, k) for k in range(sum(p))]) for i, p in enumerate(inputs)]
    slots, out, pos, taken, end = [None] * cycle, [], 0, 0, False
    while not end or any(s is not None for s in slots):
        if slots[pos] is None:
            if not end:
                if its:
                    slots[pos] = its.pop(0)
                    continue
                end = True
            pos, taken = (pos + 1) % cycle, 0
            continue
        value = next(slots[pos], None)
        if value is None:
            slots[pos], pos, taken = None, (pos + 1) % cycle, 0
            continue
        out.append(value)
        taken += 1
        if taken == block:
            pos, taken = (pos + 1) % cycle, 0
    return out


_inputs = st.lists(st.lists(st.integers(0, 7), max_size=5), max_size=7)


@settings(max_examples=300, deadline=None)
@given(
    inputs=_inputs,
    cycle=st.integers(1, 5),
    block=st.integers(1, 6),
    limits=st.lists(st.integers(1, 20), min_size=1, max_size=8),
)
def test_planned_turns_give_the_per_element_order(inputs, cycle, block, limits):
    expected = _reference(inputs, cycle, block)
    assert _per_element(inputs, cycle, block) == expected
    plan, out, step = _planner(inputs, cycle, block), [], 0
    while (planned := plan.plan_turns(limits[step % len(limits)])) is not None:
        order, lengths = planned
        assert 1 <= int(lengths.sum()) <= limits[step % len(limits)] and (lengths > 0).all()
        for j, n in zip(order.tolist(), lengths.tolist()):
            out += plan.slots[j].take(n)
        step += 1
    assert out == expected


def test_the_planner_closes_every_input_it_opened():
    queue = [_Pieces(i, [2, 1]) for i in range(4)]
    opened = list(queue)
    plan = InterleavePlanner(2, 2, lambda: queue.pop(0) if queue else None)
    while (planned := plan.plan_turns(3)) is not None:
        for j, n in zip(*(a.tolist() for a in planned)):
            plan.slots[j].take(n)
    assert all(s.closed for s in opened)


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    """Files of various sizes (records ``b"<file>-<record>"``) to draw file lists from."""
    return write_fake_files(tmp_path_factory.mktemp("pool"), [0, 1, 2, 3, 5, 8, 13, 21])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.data(), cycle=st.integers(1, 4), block=st.integers(1, 5), size=st.integers(1, 30), piece=st.integers(1, 9)
)
def test_batch_native_interleave_gives_the_per_record_order(pool, monkeypatch, data, cycle, block, size, piece):
    files = data.draw(st.lists(st.sampled_from(pool), max_size=6))
    monkeypatch.setattr(parallel_reads, "_PARALLEL_READ_BATCH", piece)  # pieces end inside runs and batches
    per_record = (
        Dataset.from_tensor_slices(files or [""])
        .take(len(files))
        .interleave(TFRecordDataset, cycle_length=cycle, block_length=block)
    )
    # Element by element (a lambda is not known to read records, so it is not read batch-native).
    expected = list(
        Dataset.from_tensor_slices(files or [""])
        .take(len(files))
        .interleave(lambda f: TFRecordDataset(f), cycle_length=cycle, block_length=block)
    )
    assert list(per_record) == expected  # files.interleave(TFRecordDataset) record by record: batch-native, split
    native = per_record.batch(size)._natively_batched()
    assert native is not None
    batches = list(native)
    assert all(isinstance(b, tfrx.RecordBatch) for b in batches)
    assert all(len(b) == size for b in batches[:-1])
    assert [r for b in batches for r in b] == expected
    if block == 1 and files:
        assert [r for b in TFRecordDataset(files, num_parallel_reads=cycle).record_batches(size) for r in b] == expected


@pytest.mark.parametrize("cycle,block,size", [(2, 3, 4), (3, 2, 5), (2, 1, 3)])
def test_batch_native_interleave_resumes(tmp_path, monkeypatch, cycle, block, size):
    monkeypatch.setattr(parallel_reads, "_PARALLEL_READ_BATCH", 2)
    files = write_fake_files(tmp_path, [4, 0, 7, 5, 1])

    def make():
        ds = Dataset.from_tensor_slices(files).interleave(TFRecordDataset, cycle_length=cycle, block_length=block)
        return ds.batch(size)._natively_batched().map(list)  # the RecordBatch es parse would read

    assert_resumes_exactly(make)


def test_explain_names_the_batch_native_interleave(tmp_path):
    files = write_fake_files(tmp_path, [3, 3])
    spec = {"x": tfrx.FixedLenFeature([], "int64", default_value=0)}
    native = (
        Dataset.from_tensor_slices(files)
        .interleave(TFRecordDataset, cycle_length=2, block_length=4)
        .batch(8)
        .parse(spec)
    )
    assert "interleave(TFRecordDataset, cycle_length=2, block_length=4)" in native._plan()
    per_record = (
        Dataset.from_tensor_slices(files).interleave(lambda f: TFRecordDataset(f), cycle_length=2).batch(8).parse(spec)
    )
    assert "map_func does not read records from each file name" in per_record._plan()
    reads = TFRecordDataset(files, num_parallel_reads=2).batch(8).parse(spec)._plan()
    assert "2 files at a time in runs of records" in reads and "filled whole by the reader" not in reads
