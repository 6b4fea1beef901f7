import pytest

from data_helpers import to_py
from tfrx.testing import assert_resumes_exactly
from tfrx.data import Dataset


def _counting(n, calls):
    return Dataset.range(n).map(lambda x: calls.append(int(x)) or x)


def test_memory_cache_reads_input_once():
    calls = []
    ds = _counting(5, calls).cache()
    assert to_py(list(ds)) == to_py(list(ds)) == list(range(5))
    assert calls == list(range(5))


def test_partial_pass_does_not_fill_cache():
    calls = []
    ds = _counting(5, calls).cache()
    it = iter(ds)
    next(it), next(it)
    it.close()
    assert to_py(list(ds)) == list(range(5))
    assert to_py(list(ds)) == list(range(5))
    assert calls == [0, 1] + list(range(5))


def test_file_cache(tmp_path):
    calls = []
    name = tmp_path / "cache.bin"
    it = iter(_counting(6, calls).cache(str(name)))
    next(it)
    it.close()
    assert not name.exists() and not list(tmp_path.iterdir())  # incomplete caches are never left behind
    assert to_py(list(_counting(6, calls).cache(str(name)))) == list(range(6))
    assert name.exists()
    calls.clear()
    assert to_py(list(_counting(6, calls).cache(str(name)))) == list(range(6))  # a new pipeline reuses the file
    assert calls == []


def test_cache_then_shuffle_repeat_like_tf(tf):
    ours = Dataset.range(8).cache().shuffle(8, seed=1).repeat(2)
    assert sorted(to_py(list(ours))) == sorted(list(range(8)) * 2)
    assert ours.cardinality() == int(tf.data.Dataset.range(8).cache().shuffle(8).repeat(2).cardinality())


@pytest.mark.parametrize("use_file", [False, True])
def test_cache_resumes(tmp_path, use_file):
    name = str(tmp_path / "c.bin") if use_file else ""
    cached = Dataset.range(9).map(lambda x: x * 2).cache(name)
    list(cached)  # fill
    assert_resumes_exactly(lambda: cached.batch(2))
    assert_resumes_exactly(lambda: Dataset.range(9).cache().batch(2))  # while filling
