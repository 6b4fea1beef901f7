import time

import pytest

from data_helpers import to_py
from tfrx.data import Dataset, Options


def _slow_first(x):
    if int(x) == 0:
        time.sleep(0.2)
    return x


def test_with_options_sets_nondeterminism_upstream():
    ds = Dataset.range(8).map(_slow_first, num_parallel_calls=4).with_options(deterministic=False)
    out = to_py(list(ds))
    assert sorted(out) == list(range(8)) and out[0] != 0


def test_explicit_argument_wins_over_options():
    ds = (
        Dataset.range(8)
        .map(_slow_first, num_parallel_calls=4, deterministic=True)
        .with_options(Options(deterministic=False))
    )
    assert to_py(list(ds)) == list(range(8))


def test_apply():
    assert to_py(list(Dataset.range(5).apply(lambda d: d.skip(1).take(2)))) == [1, 2]


def test_options_apply_to_stages_after_with_options():
    # tf.data applies options to the whole pipeline, not only to the stages before with_options.
    ds = Dataset.range(8).with_options(deterministic=False).map(_slow_first, num_parallel_calls=4)
    out = to_py(list(ds))
    assert sorted(out) == list(range(8)) and out[0] != 0


def test_tf_data_spelling_experimental_deterministic():
    options = Options()
    options.experimental_deterministic = False
    assert options.deterministic is False and options.experimental_deterministic is False
    ds = Dataset.range(8).map(_slow_first, num_parallel_calls=4).with_options(options)
    out = to_py(list(ds))
    assert sorted(out) == list(range(8)) and out[0] != 0


def test_later_options_win_and_inputs_options_propagate():
    a, b = Options(), Options()
    a.deterministic = False
    b.deterministic = True
    ds = Dataset.range(8).with_options(a).map(_slow_first, num_parallel_calls=4).with_options(b)
    assert ds.options().deterministic is True
    assert to_py(list(ds)) == list(range(8))
    zipped = Dataset.zip((Dataset.range(3).with_options(a), Dataset.range(3)))
    assert zipped.options().deterministic is False
    assert Dataset.range(3).options() == Options()


def test_unknown_attributes_raise():
    options = Options()
    with pytest.raises(AttributeError, match="has no option 'determinstic'"):
        options.determinstic = False  # a typo is not silently kept
    with pytest.raises(AttributeError, match="no tfrx counterpart"):
        options.experimental_optimization.map_parallelization = True
    with pytest.raises(AttributeError, match="no tfrx counterpart"):
        options.threading.max_intra_op_parallelism = 1
    with pytest.raises(ValueError):
        options.threading.private_threadpool_size = 0
    with pytest.raises(ValueError):
        options.deterministic = "no"


def test_private_threadpool_size_caps_map_threads():
    import threading

    seen = set()
    lock = threading.Lock()

    def record_thread(x):
        with lock:
            seen.add(threading.get_ident())
        time.sleep(0.01)
        return x

    options = Options()
    options.threading.private_threadpool_size = 1
    ds = Dataset.range(16).map(record_thread, num_parallel_calls=4).with_options(options)
    assert to_py(list(ds)) == list(range(16))
    assert len(seen) == 1
    experimental = Options()
    experimental.experimental_threading.private_threadpool_size = 2
    assert experimental.threading.private_threadpool_size == 2


def _golden():
    import importlib.util
    import json

    from conftest import GOLDEN_DIR

    spec = importlib.util.spec_from_file_location("make_options_golden", GOLDEN_DIR / "make_options_golden.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, json.loads((GOLDEN_DIR / "data_options.json").read_text())["cases"]


def test_options_match_tensorflow_golden():
    module, cases = _golden()
    assert set(cases) == set(module.CASES)
    for name, spec in module.CASES.items():
        ds = module.build(spec, Dataset, Options)
        assert module.reported(ds.options()) == cases[name], name


def test_options_match_tensorflow(tf):
    module, cases = _golden()
    for name, spec in module.CASES.items():
        ours = module.reported(module.build(spec, Dataset, Options).options())
        assert ours == module.reported(module.build(spec, tf.data.Dataset, tf.data.Options).options()), name
