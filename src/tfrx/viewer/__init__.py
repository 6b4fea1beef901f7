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
"""

from __future__ import annotations

import base64
import html

from tfrx.viewer.cells import record_view
from tfrx.viewer.source import ViewSource

__all__ = ["View", "view", "serve", "THUMBNAIL", "MAX_INLINE_BYTES"]

THUMBNAIL = 128  # pixels, the longest side of a notebook thumbnail
MAX_INLINE_BYTES = 1 << 20  # thumbnails inlined in one notebook page; later images show as their size


def serve(paths, **kwargs) -> None:
    """Runs the viewer's server for ``paths`` until interrupted (see :func:`tfrx.viewer.server.serve`)."""
    from tfrx.viewer.server import serve as _serve

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
    """A page of records for notebooks: ``_repr_html_`` renders it; ``serve()`` opens the full viewer."""

    def __init__(self, source, *, start: int = 0, count: int = 20, storage_options: dict | None = None) -> None:
        self.paths = _paths_of(source)
        self.source = ViewSource(self.paths, storage_options=storage_options)
        self.start, self.count = int(start), int(count)
        self.storage_options = storage_options

    def records(self) -> list[dict]:
        from tfrx.codec.events import is_event_file

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
        serve(self.paths, storage_options=self.storage_options, **kwargs)

    def __repr__(self) -> str:
        return f"View({len(self.source.shards)} files, records {self.start}..{self.start + self.count - 1})"


def _cell_html(row: dict, name: str, budget: list | None = None, colormap: dict | None = None) -> str:
    from tfrx.codec import decode_example, decode_sequence_example
    from tfrx.viewer.cells import colormap_png, thumbnail

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


def view(source, *, start: int = 0, count: int = 20, storage_options: dict | None = None) -> View:
    """A :class:`View` of ``source`` (a path, glob, list, URL, or a tfrx dataset over files) for notebooks."""
    return View(source, start=start, count=count, storage_options=storage_options)
