"""The reference layout's line reading, byte for byte as create_pretraining_data reads its inputs.

The reference (TensorFlow Model Garden's ``create_pretraining_data.py``) reads each
input with ``tf.io.gfile.GFile(path, "rb").readline()`` until it returns an empty
string, decodes each line with ``tokenization.convert_to_unicode`` (UTF-8, invalid
bytes dropped) and ``.strip()``s it; a blank line starts a new document. TensorFlow's
``readline`` (``BufferedInputStream::ReadLine``) ends lines at ``\\n`` only and drops
every ``\\r``. The pinned cases below hold without TensorFlow; the last tests run the
same bytes through TensorFlow's own ``GFile`` (the ``tf`` fixture).
"""

from __future__ import annotations

import pytest
from bert_helpers import GOLDEN, assert_same_records
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tfrx.text import create_pretraining_data
from tfrx.text._sources import iter_documents

VOCAB = GOLDEN / "vocab.txt"

# bytes -> documents (lists of stripped, non-empty lines), as the reference reads them
PINNED = {
    "lf": (b"a b\nc\n\nd\n", [["a b", "c"], ["d"]]),
    "crlf": (b"a b\r\nc\r\n\r\nd\r\n", [["a b", "c"], ["d"]]),
    "cr_inside_joins": (b"ab\rcd\nx\r\ry\n", [["abcd", "xy"]]),
    "bare_cr_ends_no_line": (b"one\rtwo\r\rthree\r", [["onetwothree"]]),
    "cr_before_invalid_utf8": (b"caf\xc3\r\xa9\n", [["caf\u00e9"]]),
    "trailing_whitespace": (b"a \t \nb\x0b\x0c\n  c  \n", [["a", "b", "c"]]),
    "whitespace_line_is_blank": (b"a\n \t \nb\n\r\nc\n", [["a"], ["b"], ["c"]]),
    "unicode_whitespace_stripped": ("\u3000a\u00a0\n\u2028\nb\n".encode(), [["a"], ["b"]]),
    "blank_lines_collapse": (b"\n\n\na\n\n\n\nb\n\n", [["a"], ["b"]]),
    "no_final_newline": (b"a\nb", [["a", "b"]]),
    "no_final_newline_crlf": (b"a\r\nb\r", [["a", "b"]]),
    "only_crs": (b"\r\r\r", []),
    "empty": (b"", []),
}


def _documents(tmp_path, data: bytes, name: str = "c.txt") -> list[list[str]]:
    path = tmp_path / name
    path.write_bytes(data)
    return list(iter_documents(str(path)))


@pytest.mark.parametrize("case", sorted(PINNED))
def test_line_reading_is_the_references(tmp_path, case):
    data, expected = PINNED[case]
    assert _documents(tmp_path, data) == expected


def test_a_last_line_of_only_cr_does_not_close_the_document(tmp_path):
    # The reference's readline returns "" for b"\r" at the end of a file and it stops there,
    # so the document runs on into the next file; a last "\n" or " " line would close it.
    (tmp_path / "a.txt").write_bytes(b"x\ny\n\r")
    (tmp_path / "b.txt").write_bytes(b"z\n")
    assert list(iter_documents(str(tmp_path / "*.txt"))) == [["x", "y", "z"]]
    (tmp_path / "a.txt").write_bytes(b"x\ny\n\xff")  # invalid UTF-8 alone: also ""
    assert list(iter_documents(str(tmp_path / "*.txt"))) == [["x", "y", "z"]]
    (tmp_path / "a.txt").write_bytes(b"x\ny\n ")
    assert list(iter_documents(str(tmp_path / "*.txt"))) == [["x", "y"], ["z"]]


def test_carriage_returns_give_the_records_of_the_corpus_without_them(tmp_path):
    clean = (GOLDEN / "corpus_a.txt").read_bytes()
    # \r inside words, at line ends (CRLF), alone at the end of the file
    dirty = clean.replace(b"e", b"e\r").replace(b"\n", b"\r\n") + b"\r"
    assert dirty.count(b"\r") > 100
    (tmp_path / "clean.txt").write_bytes(clean)
    (tmp_path / "dirty.txt").write_bytes(dirty)
    common = dict(max_seq_length=64, max_predictions_per_seq=10, dupe_factor=2, metadata=False)
    flags = {"max_seq_length": 64, "max_predictions_per_seq": 10}
    for mode in ("exact", "fast"):
        a = create_pretraining_data(
            tmp_path / "clean.txt", VOCAB, [str(tmp_path / f"{mode}-clean")], mode=mode, **common
        )
        b = create_pretraining_data(
            tmp_path / "dirty.txt", VOCAB, [str(tmp_path / f"{mode}-dirty")], mode=mode, **common
        )
        assert a.num_instances == b.num_instances > 0
        assert_same_records(tmp_path / f"{mode}-clean", tmp_path / f"{mode}-dirty", flags)


def _reference_documents(tf, path: str) -> list[list[str]]:
    """The reference's reading loop, unchanged but for tokenization (a non-empty line is kept)."""
    documents: list[list[str]] = [[]]
    with tf.io.gfile.GFile(path, "rb") as reader:
        while True:
            line = reader.readline().decode("utf-8", "ignore")  # tokenization.convert_to_unicode
            if not line:
                break
            line = line.strip()
            if not line:
                documents.append([])
            if line:
                documents[-1].append(line)
    return [d for d in documents if d]


@pytest.mark.parametrize("case", sorted(PINNED))
def test_pinned_cases_are_what_tensorflow_gfile_reads(tf, tmp_path, case):
    data, expected = PINNED[case]
    path = tmp_path / "c.txt"
    path.write_bytes(data)
    assert _reference_documents(tf, str(path)) == expected


_PIECES = st.sampled_from([b"a", b"b c", b" ", b"\t", b"\n", b"\r", b"\r\n", b"\xc3", b"\xa9", b"\xff", b"\x0b", b"x"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=st.lists(_PIECES, max_size=30))
def test_arbitrary_bytes_read_as_tensorflow_gfile_reads_them(tf, tmp_path, pieces):
    data = b"".join(pieces)
    path = tmp_path / "h.txt"
    path.write_bytes(data)
    assert list(iter_documents(str(path))) == _reference_documents(tf, str(path))
