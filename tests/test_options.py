"""One vocabulary: shared option checks, one meaning of compression=None, renamed keywords that still work."""

from __future__ import annotations

import gzip
import os
import warnings

import numpy as np
import pytest

import tfrx
from tfrx import options

SPEC = {"a": tfrx.FixedLenFeature([], tfrx.int64)}


def _records(n=3):
    return [tfrx.make_example({"a": i}).SerializeToString() for i in range(n)]


@pytest.fixture
def plain_and_gzip(tmp_path):
    plain = str(tmp_path / "plain.tfrecord")
    tfrx.write_records(plain, _records())
    gz = str(tmp_path / "data.tfrecord.gz")
    tfrx.write_records(gz, _records(), compression="gzip")
    return plain, gz


# ---------------------------------------------------------------- on_error
def _on_error_entry_points(path, tmp_path):
    from tfrx.tools.convert import csv_to_tfrecord, tfrecord_to_jsonl

    csv = tmp_path / "t.csv"
    csv.write_text("a\n1\n")
    yield "RecordReader", lambda v: tfrx.RecordReader(path, on_error=v)
    yield "read_records", lambda v: tfrx.read_records(path, on_error=v)
    yield "TFRecordDataset", lambda v: tfrx.TFRecordDataset(path, on_error=v)
    yield "csv_to_tfrecord", lambda v: csv_to_tfrecord(csv, tmp_path / "o", on_error=v)
    yield "tfrecord_to_jsonl", lambda v: tfrecord_to_jsonl(path, tmp_path / "o.jsonl", on_error=v)
    yield "events.read", lambda v: tfrx.events.read(path, on_error=v)


def test_every_entry_point_checks_on_error_the_same_way(plain_and_gzip, tmp_path):
    for name, call in _on_error_entry_points(plain_and_gzip[0], tmp_path):
        with pytest.raises(ValueError, match=r"on_error must be 'raise', 'skip' or 'warn', got 'ignore'"):
            call("ignore")


def test_read_tfrecord_takes_on_error(tmp_path):
    pytest.importorskip("pyarrow")
    path = str(tmp_path / "damaged.tfrecord")
    tfrx.write_records(path, _records(4))
    data = bytearray(open(path, "rb").read())
    data[-3] ^= 0xFF  # the last record's data CRC
    open(path, "wb").write(bytes(data))
    with pytest.raises(ValueError, match="on_error must be"):
        tfrx.read_tfrecord(path, SPEC, on_error="sometimes")
    with pytest.raises(tfrx.CorruptRecordError):
        tfrx.read_tfrecord(path, SPEC)
    assert tfrx.read_tfrecord(path, SPEC, on_error="skip").column("a").to_pylist() == [0, 1, 2]
    with pytest.warns(tfrx.CorruptRecordWarning):
        assert tfrx.read_tfrecord(path, SPEC, on_error="warn").num_rows == 3


# ---------------------------------------------------------------- compression
@pytest.mark.parametrize(
    "value,expected",
    [
        (None, ""),
        ("", ""),
        ("none", ""),
        ("NONE", ""),
        ("gzip", "GZIP"),
        ("GZIP", "GZIP"),
        ("gz", "GZIP"),
        ("zlib", "ZLIB"),
        ("ZLIB", "ZLIB"),
        (tfrx.TFRecordOptions("gzip"), "GZIP"),
    ],
)
def test_compression_names(value, expected):
    assert options.normalize_compression(value) == expected
    assert options.normalize_compression(value, allow_auto=True) == expected


def test_auto_only_where_reading_and_bad_names_list_the_choices():
    assert options.normalize_compression("AUTO", allow_auto=True) == "auto"
    with pytest.raises(ValueError, match="compression must be '', None, 'GZIP' or 'ZLIB'"):
        options.normalize_compression("auto")
    with pytest.raises(ValueError, match="'auto', '', None"):
        options.normalize_compression("bz2", allow_auto=True)
    with pytest.raises(ValueError, match="compression_type must be"):
        tfrx.TFRecordOptions("snappy")
    with pytest.raises(ValueError, match="compression_type must be"):
        tfrx.TFRecordDataset([], compression_type="snappy")


def test_none_means_no_compression_everywhere(plain_and_gzip):
    plain, gz = plain_and_gzip
    assert tfrx.TFRecordOptions(None).compression_type == ""
    for read in (
        lambda c: list(tfrx.RecordReader(gz, compression=c)),
        lambda c: list(tfrx.read_records(gz, compression=c)),
        lambda c: list(tfrx.TFRecordDataset(gz, compression_type=c)),
        lambda c: list(tfrx.TFRecordDataset(gz, compression=c)),
    ):
        with pytest.raises(tfrx.CorruptRecordError, match="GZIP") as e:
            read(None)
        assert e.value.kind == "compressed"
        assert read("gzip") == _records()
        assert read("auto") == _records()
    assert list(tfrx.TFRecordDataset(plain, None)) == _records()


def test_readers_detect_compression_by_default(plain_and_gzip):
    for path in plain_and_gzip:
        assert list(tfrx.RecordReader(path)) == _records()
        assert list(tfrx.TFRecordDataset(path)) == _records()
        assert list(tfrx.TFRecordDataset(path, num_parallel_reads=2)) == _records()


def test_tfrecord_dataset_takes_one_of_compression_type_and_compression(plain_and_gzip):
    with pytest.raises(TypeError, match="not both"):
        tfrx.TFRecordDataset(plain_and_gzip[1], "GZIP", compression="gzip")


def test_written_gzip_is_gzip(tmp_path):
    path = str(tmp_path / "w.gz")
    with tfrx.TFRecordWriter(path, compression="GZIP") as w:
        w.write(b"x")
    assert gzip.decompress(open(path, "rb").read())[12:13] == b"x"


def test_compression_is_checked_by_every_entry_point(plain_and_gzip, tmp_path):
    plain, _ = plain_and_gzip
    ds = tfrx.data.Dataset.range(2)
    calls = {
        "snapshot": lambda v: ds.snapshot(str(tmp_path / "snap"), compression=v),
        "experimental.snapshot": lambda v: ds.apply(tfrx.data.experimental.snapshot(str(tmp_path / "s2"), v)),
        "save": lambda v: tfrx.data.Dataset.range(0).save(str(tmp_path / "saved0"), compression=v),
        "load": lambda v: tfrx.data.Dataset.load(str(tmp_path / "nothing-there"), compression=v),
        "plan_ranges": lambda v: tfrx.io.plan_ranges([plain], num_ranges=1, compression=v),
        "TFRecordDataset(compression=)": lambda v: tfrx.TFRecordDataset(plain, compression=v),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError, match=r"compression must be .*'GZIP' or 'ZLIB' \(any case\), got 'bogus'"):
            call("bogus")
    for value in ("auto", "AUTO", None, "gzip", "SNAPPY"):  # tf.data's snapshot names, tfrx's default
        assert list(ds.snapshot(str(tmp_path / f"snap-{value}"), compression=value).as_numpy_iterator()) == [0, 1]


def test_load_reads_what_save_wrote_and_none_means_none(tmp_path):
    path = str(tmp_path / "saved")
    tfrx.data.Dataset.range(3).save(path, compression="gz")
    assert list(tfrx.data.Dataset.load(path).as_numpy_iterator()) == [0, 1, 2]  # "auto": as saved
    assert list(tfrx.data.Dataset.load(path, compression="GZIP").as_numpy_iterator()) == [0, 1, 2]
    with pytest.raises(tfrx.CorruptRecordError, match="looks GZIP-compressed"):
        list(tfrx.data.Dataset.load(path, compression=None))  # None: no compression, as in TensorFlow


def test_tfrecord_options_default_is_no_compression():
    assert tfrx.TFRecordOptions().compression_type == tfrx.TFRecordOptions(None).compression_type == ""


# ---------------------------------------------------------------- progress
def _told():
    told: list = []
    return told, told.append


def test_progress_callables_are_told_a_progress(plain_and_gzip, tmp_path):
    from tfrx.tools.convert import csv_to_tfrecord, tfrecord_to_jsonl

    plain, gz = plain_and_gzip
    size = os.path.getsize(plain)
    told, tell = _told()
    tfrx.build_index(plain, progress=tell)
    assert told and all(isinstance(p, tfrx.Progress) for p in told)
    assert told[-1] == tfrx.Progress(size, size, "B", "index")

    told, tell = _told()
    checks = tfrx.tools.verify_files([plain, gz], progress=tell)
    total = size + os.path.getsize(gz)
    assert [c.records for c in checks] == [3, 3]
    assert told[-1] == tfrx.Progress(total, total, "B", "verify")
    assert [p.done for p in told] == sorted(p.done for p in told)

    told, tell = _told()
    tfrecord_to_jsonl(plain, tmp_path / "o.jsonl", progress=tell)
    assert told[-1].done == 3 and told[-1].unit == "rec"

    csv = tmp_path / "t.csv"
    csv.write_text("a\n1\n2\n")
    told, tell = _told()
    csv_to_tfrecord(csv, tmp_path / "csv-out", progress=tell)
    assert told and told[-1].done == told[-1].total == os.path.getsize(csv) and told[-1].unit == "B"


def test_progress_values_are_checked(plain_and_gzip, tmp_path):
    plain, _ = plain_and_gzip
    for call in (
        lambda v: tfrx.build_index(plain, progress=v),
        lambda v: tfrx.tools.verify_files(plain, progress=v),
        lambda v: tfrx.tools.convert.tfrecord_to_jsonl(plain, tmp_path / "o.jsonl", progress=v),
    ):
        with pytest.raises(
            TypeError, match=r"progress must be True, False, None or a callable taking one tfrx.Progress"
        ):
            call("yes")
    for value in (None, False):
        tfrx.tools.verify_files(plain, progress=value)
        tfrx.build_index(plain, progress=value)


def test_former_progress_callbacks_warn_and_keep_their_shape(plain_and_gzip):
    plain, _ = plain_and_gzip
    size = os.path.getsize(plain)
    told: list = []
    with _deprecated(r"build_index: a progress\(bytes_scanned, file_size\) callback is deprecated"):
        tfrx.build_index(plain, progress=lambda done, total: told.append((done, total)))
    assert told[-1] == (size, size)
    told.clear()
    with _deprecated(r"verify_files: a progress\(records, payload_bytes\) callback is deprecated"):
        tfrx.tools.verify_files(plain, progress=lambda records, payload: told.append((records, payload)))
    assert told == [(3, sum(len(r) for r in _records()))]


def test_cli_index_progress_reaches_build_index(plain_and_gzip, monkeypatch):
    from tfrx.cli import main
    from tfrx.io.index import scan_index

    plain, _ = plain_and_gzip
    seen = []
    monkeypatch.setattr(tfrx, "build_index", lambda path, **kw: seen.append(kw["progress"]) or scan_index(path))
    main(["index", "--progress", plain])
    main(["index", "--no-progress", plain])
    main(["index", plain])
    assert seen == [True, False, None]


# ---------------------------------------------------------------- parallelism
def test_parallelism():
    cores = options.usable_cores()
    assert cores >= 1
    assert options.resolve_parallelism(None) == 1
    assert options.resolve_parallelism(None, default=None) == cores
    assert options.resolve_parallelism(tfrx.AUTOTUNE) == cores
    assert options.resolve_parallelism(3) == 3
    for bad in (0, -2, 1.5, True, "2"):
        with pytest.raises(ValueError, match="num_parallel_calls must be a positive int, None or tfrx.AUTOTUNE"):
            options.resolve_parallelism(bad)
    with pytest.raises(ValueError, match="num_parallel_reads must be"):
        tfrx.TFRecordDataset([], num_parallel_reads=0)
    with pytest.raises(ValueError, match="num_parallel_calls must be"):
        tfrx.ExampleParser(SPEC, num_parallel_calls=0)


def test_every_entry_point_checks_parallelism(plain_and_gzip):
    plain, _ = plain_and_gzip
    pixels = np.zeros((2, 2, 3), np.uint8)
    png = tfrx.image.encode_png(pixels)
    ds = tfrx.data.Dataset.range(3)
    calls = {
        "batch": lambda v: ds.batch(2, num_parallel_calls=v),
        "interleave": lambda v: ds.interleave(lambda x: ds, num_parallel_calls=v),
        "decode_png (one image)": lambda v: tfrx.image.decode_png(png, num_parallel_calls=v),
        "decode_image (one image)": lambda v: tfrx.image.decode_image(png, num_parallel_calls=v),
        "map": lambda v: ds.map(lambda x: x, num_parallel_calls=v),
        "TFRecordDataset": lambda v: tfrx.TFRecordDataset(plain, num_parallel_reads=v),
    }
    for name, call in calls.items():
        for bad in (0, "4", 2.5):
            with pytest.raises(ValueError, match=r"num_parallel_\w+ must be a positive int, None or tfrx.AUTOTUNE"):
                call(bad)
        call(tfrx.AUTOTUNE)


def test_one_usable_cores_helper():
    assert tfrx.data.usable_cores is options.usable_cores
    assert tfrx.data.AUTOTUNE == tfrx.AUTOTUNE == options.AUTOTUNE
    if hasattr(os, "sched_getaffinity"):
        assert options.usable_cores() == len(os.sched_getaffinity(0))


def test_parsers_accept_autotune():
    recs = _records(5)
    assert tfrx.parse_example(recs, SPEC, num_parallel_calls=tfrx.AUTOTUNE)["a"].tolist() == [0, 1, 2, 3, 4]
    parser = tfrx.ExampleParser(SPEC, num_parallel_calls=2)
    assert parser.parse(recs, num_parallel_calls=1)["a"].tolist() == [0, 1, 2, 3, 4]


# ---------------------------------------------------------------- renamed keywords
def _deprecated(match):
    return pytest.warns(DeprecationWarning, match=match)


def test_old_thread_keywords_warn_and_still_work():
    recs = _records(4)
    seq = [tfrx.make_sequence_example({"a": 1}, {"s": [[1], [2]]}).SerializeToString()]
    ctx_spec, seq_spec = {"a": tfrx.FixedLenFeature([], tfrx.int64)}, {"s": tfrx.VarLenFeature(tfrx.int64)}
    with _deprecated(r"parse_example\(num_threads=...\) is deprecated.*pass num_parallel_calls="):
        assert tfrx.parse_example(recs, SPEC, num_threads=2)["a"].tolist() == [0, 1, 2, 3]
    with _deprecated(r"ExampleParser\(num_threads=...\)"):
        parser = tfrx.ExampleParser(SPEC, num_threads=1)
    assert parser.num_parallel_calls == 1
    with _deprecated(r"ExampleParser.parse\(num_threads=...\)"):
        assert parser.parse(recs, num_threads=2)["a"].tolist() == [0, 1, 2, 3]
    with _deprecated(r"SequenceExampleParser\(num_threads=...\)"):
        assert tfrx.SequenceExampleParser(ctx_spec, seq_spec, num_threads=1).parse(seq)[0]["a"].tolist() == [1]
    with _deprecated(r"parse_sequence_example\(num_threads=...\)"):
        assert tfrx.parse_sequence_example(seq, ctx_spec, seq_spec, num_threads=1)[2] == {}
    with pytest.raises(TypeError, match="got both num_threads= and num_parallel_calls="):
        tfrx.parse_example(recs, SPEC, num_threads=1, num_parallel_calls=1)


def test_image_decoders_old_thread_keyword():
    image = pytest.importorskip("tfrx.image")
    png = image.encode_png(np.arange(12, dtype=np.uint8).reshape(2, 2, 3))
    with _deprecated(r"decode_png\(num_threads=...\)"):
        out = image.decode_png([png, png], num_threads=2)
    assert out.shape == (2, 2, 2, 3)
    with _deprecated(r"decode_batch\(num_threads=...\)"):
        assert image.decode_batch([png], num_threads=1).shape == (1, 2, 2, 3)
    jpeg = image.encode_jpeg(np.zeros((8, 8, 3), np.uint8))
    with _deprecated(r"decode_jpeg\(num_threads=...\)"):  # the public decode_jpeg, which dispatches on device=
        assert image.decode_jpeg([jpeg, jpeg], num_threads=2).shape == (2, 8, 8, 3)


def test_example_to_dict_is_a_deprecated_decode_example():
    ex = tfrx.make_example({"a": [1, 2], "b": b"x"})
    with _deprecated(r"tfrx.example_to_dict is deprecated.*use tfrx.decode_example"):
        old = tfrx.example_to_dict(ex)
    new = tfrx.decode_example(ex)
    assert old.keys() == new.keys() and new["a"].tolist() == [1, 2] and new["b"] == [b"x"]
    assert tfrx.decode_example(ex.SerializeToString())["b"] == [b"x"]
    seq = tfrx.make_sequence_example({"a": 1}, {"s": [[1], [2]]})
    with _deprecated(r"tfrx.sequence_example_to_dict is deprecated"):
        context, lists = tfrx.sequence_example_to_dict(seq)
    assert [s.tolist() for s in lists["s"]] == [[1], [2]]
    assert "example_to_dict" not in tfrx.__all__


def test_random_access_dataset_paths(tmp_path):
    path = str(tmp_path / "r.tfrecord")
    tfrx.write_records(path, _records())
    with _deprecated(r"RandomAccessDataset\(files=...\)"):
        ds = tfrx.RandomAccessDataset(files=path)
    assert ds.paths == [path] and len(ds) == 3 and not ds.use_mmap
    with _deprecated(r"RandomAccessDataset.files is deprecated"):
        assert ds.files == [path]
    assert bytes(tfrx.RandomAccessDataset(path, use_mmap=True)[2]) == _records()[2]
    assert not tfrx.RecordReader(path).use_mmap


def test_converters_old_workers_keyword(tmp_path):
    from tfrx.tools.convert import csv_to_tfrecord

    src = tmp_path / "t.csv"
    src.write_text("a,b\n1,x\n2,y\n")
    with _deprecated(r"csv_to_tfrecord\(workers=...\)"):
        summary = csv_to_tfrecord(src, tmp_path / "out", workers=1)
    assert summary.records == 2
    with pytest.raises(ValueError, match="num_parallel_calls must be"):
        csv_to_tfrecord(src, tmp_path / "out2", num_parallel_calls=0)


def test_bert_read_old_compression_keyword(tmp_path):
    from tfrx.text import _bert as bert

    with _deprecated(r"read\(compression_type=...\)"), pytest.raises(FileNotFoundError):
        bert.read(str(tmp_path / "missing-*.tfrecord"), compression_type="gzip")


def test_new_names_do_not_warn(plain_and_gzip, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        tfrx.parse_example(_records(), SPEC, num_parallel_calls=1)
        tfrx.decode_example(_records()[0])
        list(tfrx.TFRecordDataset(plain_and_gzip[1], compression="gzip"))
        tfrx.RandomAccessDataset(plain_and_gzip[0]).paths


# ---------------------------------------------------------------- errors and framing
def test_every_error_lives_in_errors_and_old_locations_still_work():
    import tfrx.index
    import tfrx.io._reader
    import tfrx.text._sources
    import tfrx.tools.convert
    from tfrx import errors

    assert tfrx.index.IndexFileError is errors.IndexFileError is tfrx.IndexFileError
    assert tfrx.index.StaleIndexError is errors.StaleIndexError is tfrx.StaleIndexError
    assert tfrx.index.CompressedFileError is errors.CompressedFileError
    assert tfrx.tools.convert.ConvertError is errors.ConvertError is tfrx.ConvertError
    assert tfrx.io._reader.CorruptRecordWarning is errors.CorruptRecordWarning is tfrx.io.CorruptRecordWarning
    assert tfrx.text._sources.InputFormatError is errors.InputFormatError
    from tfrx.viewer._query import FilterError

    assert FilterError is errors.FilterError and issubclass(FilterError, ValueError)
    for name in errors.__all__:
        cls = getattr(errors, name)
        assert issubclass(cls, (errors.TfrxError, Warning)), name
        assert cls.__module__ == "tfrx.errors", name


def test_framing_sizes_match_the_native_framer():
    from tfrx import _native
    from tfrx.io import _framing as framing

    header, footer = _native.record_framing(b"payload")
    assert (len(header), len(footer)) == (framing.HEADER_BYTES, framing.FOOTER_BYTES)
    assert framing.FRAMING_BYTES == framing.HEADER_BYTES + framing.FOOTER_BYTES == 16


def test_options_objects_of_any_origin_are_read_by_their_compression_type():
    class OptionsLikeTensorFlows:  # tf.io.TFRecordOptions keeps the name as given
        compression_type = "gzip"

    assert options.normalize_compression(OptionsLikeTensorFlows()) == "GZIP"


# ---------------------------------------------------------------- one vocabulary in every public signature
_OTHER_NAMES = {  # a concept's other spellings, which public signatures no longer use
    "num_threads": "num_parallel_calls",
    "threads": "num_parallel_calls",
    "workers": "num_parallel_calls",
    "parallelism": "num_parallel_calls",
    "errors": "on_error",
    "fs_options": "storage_options",
    "filesystem_options": "storage_options",
}
_DEFAULTS = {  # the defaults a shared option may have
    "compression": {"'auto'", "None"},
    "on_error": {"'raise'"},
    "progress": {"None", "False"},
    "storage_options": {"None"},
}
_EXCEPTIONS = {  # (module, function, parameter): why
    ("tfrx/image/_png.py", "encode_png", "compression"): "tf.io.encode_png's zlib level, an int",
    ("tfrx/integrations/ray.py", "get_read_tasks", "parallelism"): "Ray Data's Datasource method, called by Ray",
}


def _public_signatures():
    import ast
    import pathlib

    def functions(node, public):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                yield from functions(child, public and not child.name.startswith("_"))
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if public and (not child.name.startswith("_") or child.name == "__init__"):
                    yield child

    import importlib

    root = pathlib.Path(tfrx.__file__).parent
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        if rel.startswith("tfrx/cli/"):
            continue  # argparse flags, checked by the CLI's tests
        private = [p for p in path.relative_to(root).parts if p.startswith("_") and p != "__init__.py"]
        exported: set[str] | None = None  # a private module's public functions: those its package exports
        if private:
            package = ".".join(["tfrx", *path.relative_to(root).parts[:-1]])
            exported = set(getattr(importlib.import_module(package), "__all__", ())) if len(private) == 1 else set()
        for node in functions(ast.parse(path.read_text()), True):
            if exported is not None and node.name not in exported and node.name != "__init__":
                continue
            a = node.args
            positional = a.posonlyargs + a.args
            defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
            for arg, default in zip(positional + a.kwonlyargs, defaults + list(a.kw_defaults)):
                yield rel, node.name, arg.arg, None if default is None else ast.unparse(default)


def test_public_signatures_use_one_vocabulary():
    wrong = []
    for module, func, name, default in _public_signatures():
        if (module, func, name) in _EXCEPTIONS:
            continue
        if name in _OTHER_NAMES:
            wrong.append(f"{module}: {func}({name}=) is spelled {_OTHER_NAMES[name]}= everywhere else")
        if name in _DEFAULTS and default is not None and default not in _DEFAULTS[name]:
            wrong.append(f"{module}: {func}({name}={default}); the defaults used everywhere: {sorted(_DEFAULTS[name])}")
    assert not wrong, "\n".join(wrong)


def test_engine_adapters_take_num_parallel_calls(plain_and_gzip):
    pytest.importorskip("polars")
    from tfrx.integrations.polars import scan_tfrecord

    plain, _ = plain_and_gzip
    assert scan_tfrecord(plain, spec=SPEC, num_parallel_calls=2).collect()["a"].to_list() == [0, 1, 2]
    with _deprecated(r"scan_tfrecord\(num_threads=\.\.\.\) is deprecated.*pass num_parallel_calls="):
        assert scan_tfrecord(plain, spec=SPEC, num_threads=1).collect().height == 3
