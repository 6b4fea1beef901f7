"""Look inside TFRecord files: ``tfrx view`` in the browser, ``tfrx.view(...)`` in Jupyter.

``tfrx view PATH_OR_GLOB_OR_URL`` serves a page on 127.0.0.1 that pages
through the records (by index, so a file of millions of records opens at
once), jumps to record N, samples at random, filters with an expression
(``label == 3 and len(image/object/bbox/xmin) > 2``), exports the selection,
and shows the inferred spec, per-feature statistics, the files and their
damage. Cells are rendered by kind: numbers, sparklines, text, images (with
the Object Detection API's boxes drawn over them), audio players, and a
SequenceExample's steps. See docs/viewer.md.

``tfrx.view(path_or_dataset)`` returns a :class:`View` whose ``_repr_html_``
shows a page of records inline, with no server: images as thumbnails of at
most ``THUMBNAIL`` pixels a side (re-encoded, so a page of large photographs
stays small), and at most ``MAX_INLINE_BYTES`` of them in all.
``tfrx.view(train, compare=eval_)`` (or a ``schema=``, or a statistics file
``stats.pb`` as the source) shows the overview instead: every feature of both
datasets side by side, with the distances and the anomalies (``View.overview()``
gives it as a dict).
"""

from __future__ import annotations

import base64
import html

from tfrx.viewer._cells import record_view
from tfrx.viewer._source import ViewSource

__all__ = ["View", "view", "serve", "THUMBNAIL", "MAX_INLINE_BYTES"]

THUMBNAIL = 128  # pixels, the longest side of a notebook thumbnail
MAX_INLINE_BYTES = 1 << 20  # thumbnails inlined in one notebook page; later images show as their size


def serve(paths, **kwargs) -> None:
    """Runs the viewer's server for ``paths`` until interrupted (see :func:`tfrx.viewer._server.serve`)."""
    from tfrx.viewer._server import serve as _serve

    _serve(paths, **kwargs)


def _paths_of(source):
    """File paths from a path, glob, list of them, or a tfrx dataset over files."""
    files = getattr(source, "files", None)
    if files is not None and hasattr(files, "take_all"):  # TFRecordDataset
        return [f.decode() if isinstance(f, bytes) else str(f) for f in files.take_all()]
    paths = getattr(source, "paths", None)
    if paths is not None and not isinstance(source, (str, bytes)):  # RandomAccessDataset
        return list(paths)
    return source


class View:
    """A page of records for notebooks: ``_repr_html_`` renders it; ``serve()`` opens the full viewer.

    With ``compare`` (records or a statistics file), ``schema`` (a ``Schema`` or ``schema.pbtxt``), or a
    statistics file as the source, ``_repr_html_`` renders the overview (:meth:`overview`) instead.
    """

    def __init__(
        self,
        source,
        *,
        start: int = 0,
        count: int = 20,
        storage_options: dict | None = None,
        compare=None,
        schema=None,
        overview_records: int | None = None,
    ) -> None:
        from tfrx.viewer._overview import DEFAULT_RECORDS, is_statistics_path

        self.paths = _paths_of(source)
        one = self.paths[0] if isinstance(self.paths, (list, tuple)) and len(self.paths) == 1 else self.paths
        self.statistics_file = is_statistics_path(one)
        self.source = None if self.statistics_file else ViewSource(self.paths, storage_options=storage_options)
        self.start, self.count = int(start), int(count)
        self.storage_options = storage_options
        self.compare = _paths_of(compare) if compare is not None else None
        self.schema = schema
        self.overview_records = int(overview_records or DEFAULT_RECORDS)
        self._overview: dict | None = None

    def overview(self) -> dict:
        """The overview of this dataset (and ``compare``'s) as the viewer's Overview tab shows it: see
        :func:`tfrx.viewer._overview.overview`. Computed once, over at most ``overview_records`` records a side."""
        if self._overview is None:
            from tfrx.viewer._overview import Side, overview
            from tfrx.viewer._server import _label, _path_label

            if self.source is not None:
                self.source.prepare()
                first = Side(_label(self.source), source=self.source)
            else:
                first = Side.open(self.paths, _path_label(self.paths))
            sides = [first]
            if self.compare is not None:
                other = Side.open(self.compare, _path_label(self.compare), storage_options=self.storage_options)
                if other.source is not None:
                    other.source.prepare()
                sides.append(other)
            self._overview = overview(sides, schema=self.schema, records=self.overview_records)
        return self._overview

    def records(self) -> list[dict]:
        from tfrx.codec.events import is_event_file

        if self.source is None:
            return []
        return [
            {
                "n": n,
                "shard": path,
                "i": i,
                **record_view(rec, tfds=self.source.tfds, events=is_event_file(path)),
                "_bytes": rec,
            }
            for n, path, i, rec in self.source.read(self.start, self.count)
        ]

    def _repr_html_(self) -> str:
        if self.source is None or self.compare is not None or self.schema is not None:
            return _overview_html(self.overview())
        rows = self.records()
        budget = [MAX_INLINE_BYTES]
        names: list[str] = []
        for r in rows:
            names += [k for k in r.get("features", {}) if k not in names]
        total = self.source.total()
        out = [
            f"<div><b>tfrx.view</b>: {len(self.source.shards)} file(s), {total:,} records; "
            f"records {self.start}&ndash;{self.start + len(rows) - 1}</div>",
            "<table><thead><tr><th>#</th>"
            + "".join(f"<th>{html.escape(k)}</th>" for k in names)
            + "</tr></thead><tbody>",
        ]
        for r in rows:
            cells = [f"<td>{r['n']}</td>"]
            if r["kind"] == "other":
                cells.append(f"<td colspan='{max(1, len(names))}'>{html.escape(r['message'])}</td>")
            else:
                for k in names:
                    cells.append(f"<td>{_cell_html(r, k, budget, self.source.tfds.colormap)}</td>")
            out.append("<tr>" + "".join(cells) + "</tr>")
        out.append("</tbody></table>")
        return "".join(out)

    def serve(self, **kwargs) -> None:
        kwargs.setdefault("compare", self.compare)
        kwargs.setdefault("schema", self.schema)
        kwargs.setdefault("overview_records", self.overview_records)
        serve(self.paths, storage_options=self.storage_options, **kwargs)

    def __repr__(self) -> str:
        if self.source is None:
            return f"View(statistics {self.paths!r})"
        return f"View({len(self.source.shards)} files, records {self.start}..{self.start + self.count - 1})"


def _facts(side: dict | None) -> str:
    if side is None:
        return "<i>absent</i>"
    parts = [f"{side.get('num_non_missing', 0):,} present", f"{side.get('num_missing', 0):,} missing"]
    if "mean" in side:
        parts += [f"mean {side['mean']:.4g}" if isinstance(side["mean"], float) else f"mean {side['mean']}"]
        parts += [f"min {side['min']}", f"max {side['max']}"]
    elif "top_values" in side:
        top = ", ".join(f"{v} ({n:g})" for v, n in side["top_values"][:5])
        parts += [f"{side['unique']:,} unique", f"top: {top}"]
    return html.escape("; ".join(parts))


def _overview_html(o: dict) -> str:
    """The overview as a plain HTML table for notebooks: features with anomalies first, marked red."""
    labels = [d["label"] for d in o["datasets"]]
    out = [
        "<div><b>tfrx.view</b> overview: "
        + " vs ".join(f"{html.escape(d['label'])} ({d['num_examples']:,} examples)" for d in o["datasets"])
        + (f"; anomalies of {html.escape(o['anomalies_of'])}: {len(o['anomalies'])}" if o["anomalies_of"] else "")
        + "</div><table><thead><tr><th>feature</th><th>type</th>"
        + "".join(f"<th>{html.escape(x)}</th>" for x in labels)
        + "<th>distance</th><th>anomaly</th></tr></thead><tbody>"
    ]
    rows = sorted(o["features"], key=lambda r: (r["anomaly"] is None, r["feature"]))
    for r in rows:
        a = r["anomaly"]
        dist = " ".join(f"{k} {r[key]:.3g}" for k, key in (("L-inf", "linf"), ("JS", "js")) if r[key] is not None)
        style = " style='background:#fff1ef'" if a else ""
        out.append(
            f"<tr{style}><td>{html.escape(r['feature'])}</td><td>{r['type']}</td>"
            + "".join(f"<td>{_facts(s)}</td>" for s in r["sides"])
            + f"<td>{dist}</td><td style='color:#b3261e'>"
            + (html.escape(f"{a['short_description']}: {a['description']}") if a else "")
            + "</td></tr>"
        )
    out.append("</tbody></table>")
    return "".join(out)


def _cell_html(row: dict, name: str, budget: list | None = None, colormap: dict | None = None) -> str:
    from tfrx.codec import decode_example, decode_sequence_example
    from tfrx.viewer._cells import colormap_png, thumbnail

    c = row.get("features", {}).get(name)
    if c is None:
        return "<span style='color:#999'>-</span>"
    t = c["t"]
    if t == "empty":
        return "<i>(no kind)</i>"
    if t == "num":
        return html.escape(", ".join(str(v) for v in c["v"]))
    if t == "numlist":
        return html.escape(f"{c['n']} x {c['kind']} [{c.get('min')}, {c.get('max')}]")
    budget = budget if budget is not None else [MAX_INLINE_BYTES]
    parts = []
    for it in c["items"]:
        if it["t"] == "image" and row["kind"] in ("Example", "SequenceExample"):
            rec = row["_bytes"]
            feats = decode_sequence_example(rec)[0] if row["kind"] == "SequenceExample" else decode_example(rec)
            value = bytes(feats[name][it["j"]])
            small = None
            if budget[0] > 0:
                try:
                    if it.get("colormap"):
                        value = colormap_png(value, (colormap or {}).get(name))
                    small = thumbnail(value, THUMBNAIL)
                except Exception:  # a damaged image shows as its size
                    small = None
            if small is not None and len(small[0]) <= budget[0]:
                budget[0] -= len(small[0])
                data = base64.b64encode(small[0]).decode()
                parts.append(f"<img style='max-height:{THUMBNAIL}px' src='data:{small[1]};base64,{data}'>")
                continue
        if it["t"] == "text":
            parts.append(html.escape(it["v"]))
        else:
            parts.append(html.escape(f"<{it['t']}, {it.get('bytes', '?')} bytes>"))
    if c["n"] > len(c["items"]):
        parts.append(f"(+{c['n'] - len(c['items'])} more)")
    return " ".join(parts)


def view(
    source,
    *,
    start: int = 0,
    count: int = 20,
    storage_options: dict | None = None,
    compare=None,
    schema=None,
    overview_records: int | None = None,
) -> View:
    """A :class:`View` of ``source`` (a path, glob, list, URL, a tfrx dataset over files, or a statistics file
    ``stats.pb``) for notebooks; ``compare``: another dataset (or statistics file) shown beside it in the
    overview; ``schema``: a ``Schema`` or ``schema.pbtxt`` to check against (default: inferred)."""
    return View(
        source,
        start=start,
        count=count,
        storage_options=storage_options,
        compare=compare,
        schema=schema,
        overview_records=overview_records,
    )
