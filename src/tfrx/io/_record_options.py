"""TFRecordOptions: compression settings under TensorFlow's names."""

from __future__ import annotations

from tfrx.options import normalize_compression

__all__ = ["TFRecordOptions"]


class TFRecordOptions:
    """Options for writing (and reading) TFRecord files, as ``tf.io.TFRecordOptions``.

    ``compression_type`` is ``None`` (none, the default, as in TensorFlow), ``"GZIP"`` or ``"ZLIB"``
    (``""``, ``"none"`` and lowercase spellings are accepted, see :mod:`tfrx.options`);
    ``compression_level`` is 0-9, or ``None`` for zlib's default (6), which is also TensorFlow's.
    """

    __slots__ = ("compression_type", "compression_level")

    def __init__(self, compression_type: str | None = None, compression_level: int | None = None) -> None:
        self.compression_type = normalize_compression(compression_type, name="compression_type")
        if compression_level is not None:
            if not isinstance(compression_level, int) or not -1 <= compression_level <= 9:
                raise ValueError(f"compression_level must be an integer from 0 to 9, got {compression_level!r}")
        self.compression_level = compression_level

    @classmethod
    def get_compression_type_string(cls, options) -> str:
        """TensorFlow's helper: the compression name of options, a string or ``None``."""
        return normalize_compression(options)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TFRecordOptions)
            and self.compression_type == other.compression_type
            and self.compression_level == other.compression_level
        )

    def __hash__(self) -> int:
        return hash((self.compression_type, self.compression_level))

    def __repr__(self) -> str:
        return (
            f"TFRecordOptions(compression_type={self.compression_type!r}, compression_level={self.compression_level!r})"
        )
