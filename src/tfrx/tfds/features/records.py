"""A feature tree and its serialized Examples: the parsing specs, the batched :class:`Decoder`, :func:`encode`.

Decoding parses a block of records with one native ``ExampleParser`` call,
from one spec built from the feature tree (:func:`batch_spec`); each connector
then turns the block's columns into its per-record values, following TFDS's
``example_parser`` / ``decode_example`` semantics.
"""

from __future__ import annotations

from tfrx.errors import ParseError
from tfrx.tfds.features.base import Feature, _Block, ragged_spec, sequence_spec


def batch_spec(features: Feature) -> dict:
    """The parsing spec :func:`decode_records` parses blocks of records with.

    Fixed shapes are ``FixedLenFeature`` (a required key, as in TFDS); keys
    with an unknown dimension are ``RaggedFeature`` (values and row splits per
    record, no padding); encoded tensors and images are bytes.
    """
    out: dict = {}
    features._spec("", (), out, ragged_spec)
    return out


class Decoder:
    """Decodes blocks of serialized records of one feature tree, each block in one native parse.

    ``decode(records)`` takes a :class:`tfrx.RecordBatch` or a list of bytes and
    returns one value per record, what ``tfds.as_numpy`` gives for it.
    ``skip_decoding``: flat keys of images kept as bytes; ``unknown="raw"``:
    unknown connectors give their stored values instead of raising.
    """

    def __init__(self, features: Feature, *, skip_decoding=frozenset(), unknown: str = "raise") -> None:
        from tfrx.parsing import ExampleParser

        if unknown not in ("raise", "raw"):
            raise ValueError(f"unknown must be 'raise' or 'raw', got {unknown!r}")
        self.features = features
        self.skip = frozenset(skip_decoding)
        self.raw_unknown = unknown == "raw"
        spec = batch_spec(features)
        self._parser = ExampleParser(spec, num_parallel_calls=1) if spec else None

    def __getstate__(self) -> dict:  # the native parser is rebuilt in DataLoader workers
        return {"features": self.features, "skip": self.skip, "raw_unknown": self.raw_unknown}

    def __setstate__(self, state: dict) -> None:
        # Rebuilds the parser on purpose (Decoder's own __init__, whatever the subclass).
        Decoder.__init__(
            self, state["features"], skip_decoding=state["skip"], unknown="raw" if state["raw_unknown"] else "raise"
        )

    def decode(self, records, *, where=None) -> list:
        """``records`` decoded; ``where(i)`` names record ``i`` in errors (default: its file and index)."""
        from tfrx.io import RecordBatch

        if not isinstance(records, RecordBatch):
            records = RecordBatch.from_records(list(records))
        where = where or _default_where(records)
        cols = self._parse(records, where) if self._parser is not None else {}
        block = _Block(cols, len(records), records, self.skip, self.raw_unknown, where)
        return list(self.features._decode_batch(block, "", ()))

    def _parse(self, records, where) -> dict:
        from tfrx.errors import DecodeError
        from tfrx.io import RecordBatch

        assert self._parser is not None  # decode() parses only when there is a parser
        try:
            return self._parser.parse(records)
        except (ParseError, DecodeError):
            if len(records) == 1:
                raise
        # Find the record at fault and report it where it lives.
        for i in range(len(records)):
            one = RecordBatch(records.data, records.starts[i : i + 1], records.lengths[i : i + 1])
            try:
                self._parser.parse(one)
            except (ParseError, DecodeError) as e:
                raise type(e)(f"{where(i)}: {e}") from None
        raise AssertionError("unreachable: the block failed but no record does")  # pragma: no cover


def _default_where(records):
    def where(i: int) -> str:
        if records.path:
            at = f" at byte {int(records.file_offsets[i])}" if records.file_offsets is not None else ""
            return f"{records.path!r}, record {records.first_index + i}{at}"
        return f"record {i}"

    return where


def decode_records(features: Feature, records, *, skip_decoding=frozenset(), unknown: str = "raise") -> list:
    """Serialized Examples of ``features`` -> TFDS's NumPy values, one per record (see :class:`Decoder`)."""
    return Decoder(features, skip_decoding=skip_decoding, unknown=unknown).decode(records)


def encode(features: Feature, value) -> dict:
    """A value as TFDS would serialize it: ``{key: (kind, values)}`` with kind int64/float/bytes."""
    out: dict = {}
    features._encode(value, "", out, ())
    return out


def parse_spec(feature: Feature) -> dict:
    """The tfrx parsing spec of the stored Example keys, as TFDS's ``example_parser`` builds it.

    ``{key: tfrx.FixedLenFeature | tfrx.FixedLenSequenceFeature}`` for every
    key a record of ``feature`` holds (flattened with ``/``; ragged nested
    sequences give their ``ragged_flat_values`` / ``ragged_row_lengths_<k>``
    keys; encoded tensors and images are bytes). Use it with
    ``tfrx.parse_single_example`` to read the stored values without decoding
    the connectors, or to filter on labels cheaply. Unknown connectors are left out.
    """
    out: dict = {}
    feature._spec("", (), out, sequence_spec)
    return out
