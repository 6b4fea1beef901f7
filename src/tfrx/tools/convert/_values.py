"""Column kinds and cell values shared by the table converters: spec names, text, JSON and sequence rows."""

from __future__ import annotations

_KINDS = ("int64", "float", "bytes")
_SPEC_ALIASES = {
    "int": "int64",
    "int64": "int64",
    "integer": "int64",
    "bool": "int64",
    "float": "float",
    "float32": "float",
    "double": "float",
    "float64": "float",
    "bytes": "bytes",
    "string": "bytes",
    "str": "bytes",
}


def _normalize_spec(spec) -> dict[str, str]:
    """A spec given as {name: "int64"|"float"|"bytes"}, or a tfrx features dict, as kinds."""
    out = {}
    for name, v in dict(spec).items():
        if isinstance(v, str):
            kind = _SPEC_ALIASES.get(v.lower())
        else:
            dtype = getattr(v, "dtype", None)
            kind = _SPEC_ALIASES.get(str(getattr(dtype, "name", dtype)).lower().replace("tfrx.", ""))
        if kind is None:
            raise ValueError(f"spec for {name!r} must be 'int64', 'float' or 'bytes' (or a tfrx feature), got {v!r}")
        out[name] = kind
    return out


def _text_kind(values: list[str]) -> str:
    kind = "int64"
    for v in values:
        if v == "":
            continue
        if kind == "int64":
            try:
                int(v)
                continue
            except ValueError:
                kind = "float"
        if kind == "float":
            try:
                float(v)
                continue
            except ValueError:
                return "bytes"
    return kind


def _convert_text(value: str, kind: str):
    if kind == "int64":
        return int(value)
    if kind == "float":
        return float(value)
    return value.encode("utf-8")


def _rows_to_columns(rows: list[dict], kinds: dict[str, str]) -> dict:
    columns = {}
    for name, kind in kinds.items():
        col = [r.get(name) for r in rows]
        columns[name] = col
    return columns


def _write_rows(writer, rows, kinds) -> None:
    from tfrx.codec import encode_examples

    if rows:
        writer.write_many(encode_examples(_rows_to_columns(rows, kinds), kinds=kinds, as_batch=True))


def _json_kind(value):
    """The kind of a JSON value (scalar or list), or None for null / empty list."""
    if isinstance(value, list):
        kinds = {_json_kind(v) for v in value} - {None}
        if not kinds:
            return None
        if kinds <= {"int64"}:
            return "int64"
        if kinds <= {"int64", "float"}:
            return "float"
        if len(kinds) == 1:
            return kinds.pop()
        return "mixed"
    if isinstance(value, bool) or isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "bytes"
    if isinstance(value, dict) and set(value) == {"base64"}:
        return "bytes"
    if value is None:
        return None
    return "mixed"


def _json_cell(value, kind: str):
    """A JSON value converted to ``kind``; ValueError when it does not fit."""
    if value is None:
        return None
    items = value if isinstance(value, list) else [value]
    out: list = []
    for v in items:
        if kind == "int64":
            if isinstance(v, bool) or isinstance(v, int):
                out.append(int(v))
            elif isinstance(v, float) and v.is_integer():
                out.append(int(v))
            else:
                raise ValueError
        elif kind == "float":
            if isinstance(v, (int, float)) and not isinstance(v, bool) or isinstance(v, bool):
                out.append(float(v))
            else:
                raise ValueError
        else:
            if isinstance(v, str):
                out.append(v.encode("utf-8"))
            elif isinstance(v, dict) and set(v) == {"base64"}:
                import base64

                out.append(base64.b64decode(v["base64"]))
            else:
                raise ValueError
    return out if isinstance(value, list) else out[0]


def _sequence_row(obj) -> bool:
    """Whether a JSON object is a SequenceExample as ``tfrecord_to_jsonl`` writes it ({"context", "feature_lists"})."""
    return len(obj) == 2 and isinstance(obj.get("context"), dict) and isinstance(obj.get("feature_lists"), dict)


def _infer_kind(path: str, name: str, ks: set) -> str:
    ks = ks - {None}
    if ks <= {"int64"}:
        return "int64" if ks else "float"
    if ks <= {"int64", "float"}:
        return "float"
    if ks == {"bytes"}:
        return "bytes"
    raise ValueError(f"{path!r}: key {name!r} mixes kinds {sorted(ks)}; pass spec={{{name!r}: ...}}")


def _encode_sequence_rows(rows: list, kinds: dict, list_kinds: dict):
    """Serialized SequenceExamples of ``(context, feature_lists)`` rows (values already converted to their kinds)."""
    from tfrx.codec import encode_sequence_examples, make_sequence_example
    from tfrx import train

    context_names = sorted({k for c, _ in rows for k in c})
    list_names = sorted({k for _, fl in rows for k in fl})
    if not (context_names or list_names) or any(
        step is None for _, fl in rows for steps in fl.values() for step in steps
    ):
        # A step whose Feature has no kind (or no column to count the rows by): the columnar encoder has no
        # form for it; protobuf does, and tfrx's encoder writes the same bytes.
        out = []
        for c, fl in rows:
            lists = {k: [train.Feature() if step is None else step for step in steps] for k, steps in fl.items()}
            both = {**{k: list_kinds[k] for k in fl}, **{k: kinds[k] for k in c}}
            out.append(make_sequence_example(c, lists, kinds=both).SerializeToString(deterministic=True))
        return out
    return encode_sequence_examples(
        {k: [c.get(k) for c, _ in rows] for k in context_names},
        {k: [fl.get(k) for _, fl in rows] for k in list_names},
        kinds={**{k: list_kinds[k] for k in list_names}, **{k: kinds[k] for k in context_names}},
        as_batch=True,
    )


def _write_mixed_rows(writer, rows: list, kinds: dict, list_kinds: dict) -> None:
    """Writes rows in order: Example rows (dicts) and SequenceExample rows (``(context, feature_lists)`` pairs)."""
    start = 0
    while start < len(rows):
        sequence = isinstance(rows[start], tuple)
        end = start
        while end < len(rows) and isinstance(rows[end], tuple) == sequence:
            end += 1
        run = rows[start:end]
        if sequence:
            writer.write_many(_encode_sequence_rows(run, kinds, list_kinds))
        else:
            names = sorted({k for r in run for k in r})
            if names:
                _write_rows(writer, run, {k: kinds[k] for k in names})
            else:
                writer.write_many([b""] * len(run))  # empty Examples
        start = end
