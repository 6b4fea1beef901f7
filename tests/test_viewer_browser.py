"""tfrx view in a real browser: headless Chromium (Debian's chromium and chromium-driver) through Selenium.

Skipped, with the reason, where Chromium, its driver or Selenium is missing
(.ci/run installs them). Corpus files are copied into a temporary folder
first (the viewer may write index files). With TFRX_VIEWER_SCREENSHOTS=DIR
the pages are also saved as PNGs there (docs/viewer.md's pictures are made so,
reduced to 256 colours to stay small).
"""

from __future__ import annotations

import io
import os
import shutil
import threading
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from test_viewer import _detection_records

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

import tfrx  # noqa: E402
from tfrx.tools._verify import verify_files  # noqa: E402
from tfrx.viewer._server import ViewerServer  # noqa: E402
from tfrx.viewer._source import ViewSource  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
DRIVER = shutil.which("chromedriver") or (
    os.path.exists("/usr/lib/chromium/chromedriver") and "/usr/lib/chromium/chromedriver"
)
pytestmark = pytest.mark.skipif(
    not (CHROMIUM and DRIVER),
    reason="headless Chromium and chromedriver are not installed (Debian: apt-get install chromium chromium-driver)",
)
SHOTS = os.environ.get("TFRX_VIEWER_SCREENSHOTS")
WAIT = 60


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        # a profile folder of the test's (else Chromium makes its own in the system's temporary folder and leaves it)
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1400,1000",
    ):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(WAIT)
    yield driver
    driver.quit()


@contextmanager
def _served(paths, tmp_path):
    server = ViewerServer(ViewSource(paths, index_cache_dir=str(tmp_path / "index-cache")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        server.source.close()


def _copy(corpus_dir, name, tmp_path):
    """A corpus file copied into tmp_path: nothing is ever written beside the corpus."""
    target = tmp_path / name
    shutil.copyfile(corpus_dir / name, target)
    return target


def _numbers(driver):
    return driver.execute_script(
        "return [...document.querySelectorAll('#table tbody td.n')].map(td => +td.textContent)"
    )


def _wait(driver, condition, timeout=WAIT):
    WebDriverWait(driver, timeout, poll_frequency=0.05).until(lambda d: condition(d))


def _wait_rows(driver, first):
    _wait(driver, lambda d: _numbers(d)[:1] == [first])


def _thumbnails_decoded(driver, count):
    return driver.execute_script(
        "const i = [...document.querySelectorAll('#table img.media')].slice(0, arguments[0]);"
        "return i.length === arguments[0] && i.every(x => x.complete && x.naturalWidth > 0)",
        count,
    )


def _tab(driver, name):
    driver.find_element(By.CSS_SELECTOR, f'nav button[data-tab="{name}"]').click()


def _shot(driver, name):
    if SHOTS:
        from PIL import Image

        os.makedirs(SHOTS, exist_ok=True)
        path = os.path.join(SHOTS, name)
        driver.save_screenshot(path)
        with Image.open(path) as shot:
            small = shot.convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
        small.save(path, optimize=True)


def _get(url):
    with urllib.request.urlopen(url, timeout=WAIT) as r:
        return r.read()


def _export(driver, fmt):
    """Clicks an export button, waits for its result message and fetches the file its link names."""
    driver.execute_script("const a = document.getElementById('export-file'); if (a) a.remove();")
    driver.find_element(By.ID, f"export-{fmt}").click()
    _wait(driver, lambda d: d.find_elements(By.ID, "export-file"))
    link = driver.find_element(By.ID, "export-file").get_attribute("href")
    assert "token=" in link
    return _get(link)


def test_a_corpus_file_pages_jumps_samples_filters_and_exports(browser, corpus_dir, tmp_path):
    path = _copy(corpus_dir, "tfrecord_lite__test.tfrecord", tmp_path)
    records = list(tfrx.read_records(str(path)))
    features = [tfrx.decode_example(r) for r in records]
    with _served(str(path), tmp_path) as server:
        browser.get(server.url)
        _wait_rows(browser, 0)
        assert _numbers(browser) == list(range(25))
        assert f"{len(records)} records" in browser.find_element(By.ID, "summary").text
        browser.find_element(By.ID, "next").click()
        _wait_rows(browser, 25)
        assert _numbers(browser) == list(range(25, len(records)))
        browser.find_element(By.ID, "prev").click()
        _wait_rows(browser, 0)

        jump = browser.find_element(By.ID, "jump")
        jump.clear()
        jump.send_keys("37")
        browser.find_element(By.ID, "go").click()
        _wait_rows(browser, 37)
        assert _numbers(browser) == list(range(37, len(records)))
        cell = browser.execute_script(
            "return document.querySelector('#table tbody tr[data-n=\"37\"] td:nth-child(2)').textContent"
        )
        assert cell == str(int(features[37]["feature0"][0]))

        browser.find_element(By.ID, "random").click()
        _wait(browser, lambda d: "random records" in d.find_element(By.ID, "status").text)
        picked = _numbers(browser)
        assert len(picked) == 25 and len(set(picked)) == 25 and picked == sorted(picked)
        assert all(0 <= n < len(records) for n in picked) and picked != list(range(25))

        threshold = float(np.median([f["feature1"][0] for f in features]))
        expected = [
            i for i, f in enumerate(features) if f["feature1"][0] > threshold and int(f["feature0"][0]) % 2 == 0
        ]
        box = browser.find_element(By.ID, "filter")
        box.send_keys(f"feature1 > {threshold} and feature0 % 2 == 0")
        browser.find_element(By.ID, "apply").click()
        _wait(browser, lambda d: "matches" in d.find_element(By.ID, "status").text)
        assert _numbers(browser) == expected and expected

        exported = _export(browser, "tfrecord")
        assert list(tfrx.read_records(io.BytesIO(exported))) == [records[i] for i in expected]
        assert f"{len(expected)} records exported as tfrecord" in browser.find_element(By.ID, "export-status").text
        _shot(browser, "viewer-filter-export.png")
        lines = _export(browser, "jsonl").decode().splitlines()
        assert len(lines) == len(expected)

        box.clear()
        box.send_keys("feature9 > 1")
        browser.find_element(By.ID, "apply").click()
        _wait(browser, lambda d: "feature9" in d.find_element(By.ID, "status").text)
        assert "error" in browser.find_element(By.ID, "status").get_attribute("class")


def test_object_detection_boxes_over_a_real_image_and_the_damage_of_its_file(browser, corpus_dir, tmp_path):
    path = _copy(corpus_dir, "tfmodels_vendored__pets_examples.CORRUPTED.record", tmp_path)
    (check,) = verify_files(str(path))
    with _served(str(path), tmp_path) as server:
        first = server.source.record(0)
        boxes = len(tfrx.decode_example(first)["image/object/bbox/xmin"])
        browser.get(server.url)
        _wait_rows(browser, 0)
        assert "damaged" in browser.find_element(By.ID, "summary").text
        _wait(browser, lambda d: _thumbnails_decoded(d, 1))
        rects = browser.execute_script(
            "return document.querySelector('#table tbody tr[data-n=\"0\"]').querySelectorAll('svg rect').length"
        )
        assert rects == boxes > 0
        browser.find_element(By.CSS_SELECTOR, '#table tbody tr[data-n="0"]').click()
        WebDriverWait(browser, WAIT).until(EC.visibility_of_element_located((By.CSS_SELECTOR, "#detail .big img")))
        _wait(
            browser,
            lambda d: d.execute_script(
                "const i = document.querySelector('#detail .big img'); return i.complete && i.naturalWidth > 0"
            ),
        )
        detail = browser.find_element(By.ID, "detail")
        label = tfrx.decode_example(first)["image/object/class/text"][0].decode()
        assert f"{boxes} boxes: {label}" in detail.text
        assert len(detail.find_elements(By.CSS_SELECTOR, ".big svg rect")) == boxes
        assert [e.text for e in detail.find_elements(By.CSS_SELECTOR, ".big .box-label")][:1] == [label]
        browser.execute_script("document.getElementById('detail').scrollIntoView()")
        _shot(browser, "viewer-detail.png")

        _tab(browser, "health")
        _wait(browser, lambda d: "damaged file" in d.find_element(By.ID, "health-body").text)
        rows = browser.find_elements(By.CSS_SELECTOR, "#health-table tr.damage")
        assert len(rows) == len(check.errors) == len(check.regions) > 0
        for row, region in zip(rows, check.regions):
            assert row.find_elements(By.TAG_NAME, "td")[3].text.startswith(f"{region.start}–{region.end} ")
        _shot(browser, "viewer-health.png")
        # The Records tab shows the same damage between the records it lies between.
        _tab(browser, "records")
        gaps = browser.find_elements(By.CSS_SELECTOR, "#table tr.damage-gap")
        assert len(gaps) == len(check.regions)
        assert f"bytes {check.regions[1].start:,}–{check.regions[1].end:,}" in gaps[1].text
        assert gaps[0].text.startswith("⚠ damage before record 0") and "between records 2 and 3" in gaps[1].text
        browser.execute_script(
            "document.getElementById('detail').hidden = true; document.getElementById('table-wrap').scrollLeft = 0;"
            "window.scrollTo(0, 0)"
        )
        _shot(browser, "viewer-damage-records.png")


def test_a_sequence_example_shows_its_steps_as_a_timeline(browser, corpus_dir, tmp_path):
    path = _copy(corpus_dir, "torchdata__sequence_example.tfrecord", tmp_path)
    context, lists = tfrx.decode_sequence_example(next(iter(tfrx.read_records(str(path)))))
    with _served(str(path), tmp_path) as server:
        browser.get(server.url)
        _wait_rows(browser, 0)
        browser.find_element(By.CSS_SELECTOR, '#table tbody tr[data-n="0"]').click()
        _wait(browser, lambda d: "step by step" in d.find_element(By.ID, "detail").text)
        for name, steps in lists.items():
            row = browser.find_element(By.XPATH, f"//table[@class='timeline']//th[starts-with(., '{name} (')]/..")
            assert row.find_element(By.TAG_NAME, "th").text == f"{name} ({len(steps)})"
            assert len(row.find_elements(By.TAG_NAME, "td")) == len(steps)
        _shot(browser, "viewer-sequence.png")


def _photos(corpus_dir):
    """(class name, JPEG/PNG bytes) of the real photographs in the corpus."""
    out = []
    for name, cls in [
        ("tfmodels_vendored__pets_examples.CORRUPTED.record", "image/object/class/text"),
        ("tfmodels_vendored__fsns-00000-of-00001", "street sign"),
    ]:
        with tfrx.RecordReader(str(corpus_dir / name), on_error="skip") as reader:
            for rec in reader:
                f = tfrx.decode_example(rec)
                label = f[cls][0].decode() if cls in f else cls
                out.append((label, bytes(f["image/encoded"][0])))
    return out


def test_a_tfds_image_set_with_its_statistics(browser, corpus_dir, tmp_path):
    from tfrx import tfds

    photos = _photos(corpus_dir)
    classes = sorted({c for c, _ in photos})
    root = tmp_path / "pets_voc_fsns" / "1.0.0"
    tfds.write(
        root,
        features={"image": tfds.Image(), "label": tfds.ClassLabel(names=classes)},
        splits={"train": [{"image": _decoded(b), "label": c} for c, b in photos * 4]},
        shard_size=16,
    )
    with _served(str(tmp_path / "pets_voc_fsns"), tmp_path) as server:
        browser.get(server.url)
        _wait_rows(browser, 0)
        assert f"{len(photos) * 4} records" in browser.find_element(By.ID, "summary").text
        _wait(browser, lambda d: _thumbnails_decoded(d, 8))
        label = browser.execute_script(
            "return document.querySelector('#table tbody tr[data-n=\"0\"] td:nth-child(3)').textContent"
        )
        assert label == f"{classes.index(photos[0][0])} {photos[0][0]}"  # the ClassLabel's name beside its number
        _shot(browser, "viewer-records.png")
        _tab(browser, "stats")
        _wait(browser, lambda d: "records read" in d.find_element(By.ID, "stats-body").text)
        row = browser.find_element(By.CSS_SELECTOR, '#stats-table tr[data-feature="label"]')
        assert len(row.find_elements(By.CSS_SELECTOR, "td:nth-child(9) svg.hist rect")) == len(
            classes
        )  # one bar a class
        browser.find_element(By.ID, "stats-mode").send_keys("every record")
        browser.find_element(By.ID, "stats-run").click()
        _wait(browser, lambda d: "(every record)" in d.find_element(By.ID, "stats-body").text)
        _tab(browser, "shards")
        assert len(browser.find_elements(By.CSS_SELECTOR, "#shard-table tr")) == 1 + len(server.source.shards) > 2


def _decoded(data: bytes) -> np.ndarray:
    from tfrx.image import decode_image

    return decode_image(data, channels=3)


def test_events_files_show_steps_tags_and_values(browser, corpus_dir, tmp_path):
    events = _copy(corpus_dir, "lingvo__events.out.tfevents.test", tmp_path)
    expected = tfrx.events.read(str(events))
    with _served(str(events), tmp_path) as server:
        browser.get(server.url)
        _wait_rows(browser, 0)
        headers = [th.text for th in browser.find_elements(By.CSS_SELECTOR, "#table thead th")]
        assert headers[:3] == ["#", "step", "wall_time"]
        for event in (1, 2):  # the first Event is the file's version; then scalars, one step each
            row = browser.find_element(By.CSS_SELECTOR, f'#table tbody tr[data-n="{event}"]')
            step = int(row.find_element(By.CSS_SELECTOR, "td:nth-child(2)").text)
            scalars = [s for s in expected.scalars if s.step == step]
            assert scalars
            for s in scalars:
                cell = row.find_element(By.CSS_SELECTOR, f"td:nth-child({headers.index(s.tag) + 1})")
                assert cell.text == f"{s.value:.6g}", (s.tag, cell.text)
        _shot(browser, "viewer-events.png")


def test_a_page_opened_without_the_token_says_what_to_do(browser, corpus_dir, tmp_path):
    path = _copy(corpus_dir, "tfrecord_lite__test.tfrecord", tmp_path)
    with _served(str(path), tmp_path) as server:
        browser.get(server.base_url)
        browser.execute_script("sessionStorage.clear()")
        browser.get(server.base_url)
        _wait(browser, lambda d: "token" in d.find_element(By.ID, "summary").text)
        assert _numbers(browser) == []


def test_wide_tables_scroll_in_their_pane_with_the_header_in_view(browser, tmp_path):
    path = tmp_path / "wide.tfrecord"
    with tfrx.TFRecordWriter(str(path)) as w:
        w.write_many(
            tfrx.make_example({f"feature_with_a_long_name_{k:02d}": i * k for k in range(40)}).SerializeToString()
            for i in range(60)
        )
    with _served(str(path), tmp_path) as server:
        browser.get(server.url)
        _wait_rows(browser, 0)
        sizes = browser.execute_script(
            "const p = document.getElementById('table-wrap');"
            "return [document.documentElement.scrollWidth, window.innerWidth, p.scrollWidth, p.clientWidth,"
            " p.scrollHeight, p.clientHeight]"
        )
        page_width, window_width, pane_width, pane_client, pane_height, pane_client_height = sizes
        assert page_width <= window_width and pane_width > pane_client  # the pane scrolls, not the page
        assert pane_height > pane_client_height
        offset = browser.execute_script(
            "const p = document.getElementById('table-wrap'); p.scrollTop = 300; p.scrollLeft = 500;"
            "const th = p.querySelector('thead th'); return th.getBoundingClientRect().top - p.getBoundingClientRect().top"
        )
        assert abs(offset) <= 2  # the header row stays at the top of the pane


def test_tfds_boxes_and_depth_maps(browser, corpus_dir, tmp_path):
    from tfrx import tfds

    photos = _photos(corpus_dir)[:6]
    rng = np.random.default_rng(0)
    rows = []
    for i, (label, data) in enumerate(photos):
        image = _decoded(data)
        h, w = image.shape[:2]
        yy, xx = np.mgrid[0:h, 0:w]
        depth = (np.hypot(yy - h / 2, xx - w / 3) / max(h, w)).astype(np.float32)[..., None]
        k = 1 + i % 3
        ymin, xmin = rng.uniform(0.05, 0.45, (2, k))
        rows.append(
            {
                "image": image,
                "depth": depth,
                "objects": {
                    "bbox": np.stack([ymin, xmin, ymin + 0.4, xmin + 0.4], axis=1).astype(np.float32),
                    "label": np.arange(k) % 2,
                },
            }
        )
    tfds.write(
        tmp_path / "boxes_depth" / "1.0.0",
        features={
            "image": tfds.Image(),
            "depth": tfds.Image(shape=(None, None, 1), dtype=np.float32),
            "objects": tfds.Sequence({"bbox": tfds.BBoxFeature(), "label": tfds.ClassLabel(names=["near", "far"])}),
        },
        splits={"train": rows},
    )
    with _served(str(tmp_path / "boxes_depth"), tmp_path) as server:
        browser.get(server.url)
        _wait_rows(browser, 0)
        _wait(browser, lambda d: _thumbnails_decoded(d, 8))
        for n, row in enumerate(rows):
            rects = browser.execute_script(
                f"return document.querySelector('#table tbody tr[data-n=\"{n}\"]').querySelectorAll('svg rect').length"
            )
            assert rects == len(row["objects"]["label"])
        labels = [e.text for e in browser.find_elements(By.CSS_SELECTOR, '#table tbody tr[data-n="2"] .box-label')]
        assert labels == ["near", "far", "near"]
        assert len(browser.find_elements(By.CSS_SELECTOR, "#table img.colormap")) == len(rows)
        _shot(browser, "viewer-tfds-boxes-depth.png")


def test_synthetic_detection_records_filter_to_the_boxes_asked_for(browser, tmp_path):
    records = _detection_records(60, masks=True)
    with tfrx.TFRecordWriter(str(tmp_path / "det-00000-of-00001.tfrecord")) as w:
        w.write_many(records)
    with _served(str(tmp_path / "det-00000-of-00001.tfrecord"), tmp_path) as server:
        browser.get(server.url)
        _wait_rows(browser, 0)
        box = browser.find_element(By.ID, "filter")
        box.send_keys("label == 2 and len(image/object/bbox/xmin) >= 2")
        browser.find_element(By.ID, "apply").click()
        expected = [i for i in range(60) if i % 5 == 2 and i % 4 >= 2]
        _wait(browser, lambda d: _numbers(d) == expected)
        _wait(browser, lambda d: _thumbnails_decoded(d, len(expected)))
        for n in expected:
            rects = browser.execute_script(
                f"return document.querySelector('#table tbody tr[data-n=\"{n}\"]').querySelectorAll('svg rect').length"
            )
            assert rects == n % 4
        browser.find_element(By.CSS_SELECTOR, f'#table tbody tr[data-n="{expected[0]}"]').click()
        _wait(
            browser,
            lambda d: d.execute_script(
                "const m = [...document.querySelectorAll('#detail .big img.mask')];"
                "return m.length === arguments[0] && m.every(x => x.complete && x.naturalWidth > 0)",
                expected[0] % 4,
            ),
        )
        parquet = _export(browser, "parquet")
        pq = pytest.importorskip("pyarrow.parquet")
        assert pq.read_table(io.BytesIO(parquet)).column("label").to_pylist() == [[2]] * len(expected)
        _tab(browser, "stats")
        _wait(browser, lambda d: "records read" in d.find_element(By.ID, "stats-body").text)
        row = browser.find_element(By.CSS_SELECTOR, '#stats-table tr[data-feature="image/object/bbox/xmin"]')
        assert row.find_elements(By.TAG_NAME, "td")[1].text.strip() == str(sum(1 for i in range(60) if i % 4))
        _shot(browser, "viewer-stats.png")


def test_every_corpus_file_shows_its_records_schema_statistics_and_damage(browser, corpus_dir, tmp_path):
    names = sorted(p.name for p in corpus_dir.iterdir() if p.name != "SOURCES.tsv")
    for name in names:
        folder = tmp_path / name
        folder.mkdir()
        path = _copy(corpus_dir, name, folder)
        (check,) = verify_files(str(path))
        with _served(str(path), folder) as server:
            browser.get(server.url)
            _wait(
                browser,
                lambda d: (
                    "records" in d.find_element(By.ID, "status").text
                    or "error" in d.find_element(By.ID, "status").get_attribute("class")
                ),
            )
            summary = browser.find_element(By.ID, "summary").text
            assert f"{check.records:,} records" in summary, (name, summary)
            if check.records:
                assert _numbers(browser) == list(range(min(25, check.records))), name
            payload = server.schema(sampled=False)["payload"]
            _tab(browser, "schema")
            schema = browser.find_element(By.ID, "schema-code").text
            assert ("tfrx." in schema) if payload in (["Example"], ["SequenceExample"]) else schema.startswith("#"), (
                name
            )
            _tab(browser, "stats")
            _wait(
                browser,
                lambda d: (
                    "records read" in d.find_element(By.ID, "stats-body").text
                    or d.find_elements(By.CSS_SELECTOR, "#stats-body .error")
                ),
            )
            if payload in (["Example"], ["SequenceExample"]):
                assert (
                    f"{min(check.records, 10_000):,} records read" in browser.find_element(By.ID, "stats-body").text
                ), name
            _tab(browser, "health")
            _wait(browser, lambda d: d.find_elements(By.ID, "health-table"))
            damage = len(browser.find_elements(By.CSS_SELECTOR, "#health-table tr.damage"))
            assert damage == len(check.errors), name
            assert ("damaged file" in browser.find_element(By.ID, "health-body").text) == (not check.ok), name
            _tab(browser, "records")


GOLDEN_VALIDATE = os.path.join(os.path.dirname(__file__), "golden", "validate")


def test_the_overview_compares_two_spans_flags_anomalies_and_a_click_filters(browser, tmp_path):
    pytest.importorskip("tensorflow_metadata", reason="the overview needs tfrx[validate]")
    from tfrx.viewer._overview import Side

    first, second = (_copy(Path(GOLDEN_VALIDATE), n, tmp_path) for n in ("generated.tfrecord", "generated_b.tfrecord"))
    compare = Side("generated_b.tfrecord", source=ViewSource(str(second), index_cache_dir=str(tmp_path / "b")))
    records = list(tfrx.read_records(str(first)))
    values = [[bytes(v).decode() for v in tfrx.decode_example(r).get("s", [])] for r in records]
    server = ViewerServer(
        ViewSource(str(first), index_cache_dir=str(tmp_path / "index-cache")),
        compare=compare,
        label="generated.tfrecord",
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        browser.get(server.url)
        # With a dataset to compare with, the page opens on the overview.
        _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#overview-table tbody tr"))
        legend = browser.find_element(By.ID, "overview-legend").text
        assert "generated.tfrecord: 3,000 records" in legend and "generated_b.tfrecord: 2,000 records" in legend
        rows = browser.find_elements(By.CSS_SELECTOR, "#overview-table tbody tr")
        flagged = {r.get_attribute("data-feature") for r in rows if "anomaly" in r.get_attribute("class").split()}
        assert flagged == {a["feature"] for a in server.overview(server.overview_records)["result"]["anomalies"]}
        assert {"s", "extra"} <= flagged
        # Both datasets' distributions are drawn: blue bars for the first, orange for the second.
        assert browser.find_elements(By.CSS_SELECTOR, '#overview-table tr[data-feature="f"] svg rect.bar-a')
        assert browser.find_elements(By.CSS_SELECTOR, '#overview-table tr[data-feature="f"] svg rect.bar-b')
        assert "Unexpected string values" in browser.find_element(By.CSS_SELECTOR, 'tr[data-feature="s"]').text
        _shot(browser, "viewer-overview.png")
        # Clicking a value of s shows the records of the first dataset that hold it.
        pick = browser.find_element(By.CSS_SELECTOR, 'tr[data-feature="s"] .tv-value.pick')
        value = pick.text
        expected = [i for i, v in enumerate(values) if value in v][:25]
        pick.click()
        _wait(browser, lambda d: "matches" in d.find_element(By.ID, "status").text)
        assert browser.find_element(By.ID, "filter").get_attribute("value") == f'"{value}" in s'
        assert _numbers(browser) == expected and expected
        # A histogram bar of a one-value numeric feature filters by its range.
        bar = browser.find_element(By.CSS_SELECTOR, '#overview-table tr[data-feature="w"] rect.bar-a.pick')
        expression = bar.get_attribute("data-filter")
        assert expression.startswith("w >= ") and " and w <= " in expression
    finally:
        server.shutdown()
        server.server_close()
        server.source.close()


def test_a_tfdv_statistics_file_opens_on_its_overview(browser, tmp_path):
    pytest.importorskip("tensorflow_metadata", reason="the overview needs tfrx[validate]")
    from tfrx.viewer._overview import Side

    import tfrx.validate as tv

    pb = tmp_path / "stats.pb"  # TFDV's statistics of the penguin training file, as binary
    pb.write_bytes(tv.load_statistics(os.path.join(GOLDEN_VALIDATE, "stats_penguin_train.pbtxt")).SerializeToString())
    server = ViewerServer(None, statistics=Side.open(str(pb), "stats.pb"))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        browser.get(server.url)
        _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#overview-table tbody tr"))
        shown = [
            b.get_attribute("data-tab")
            for b in browser.find_elements(By.CSS_SELECTOR, "nav button")
            if b.is_displayed()
        ]
        assert shown == ["overview"]
        assert "stats.pb: 234 examples (statistics file)" in browser.find_element(By.ID, "overview-legend").text
        features = [
            r.get_attribute("data-feature") for r in browser.find_elements(By.CSS_SELECTOR, "#overview-table tbody tr")
        ]
        assert features == sorted(f.path.step[0] for f in tv.load_statistics(str(pb)).datasets[0].features)
        # No records to filter: nothing is clickable.
        assert not browser.find_elements(By.CSS_SELECTOR, "#overview-table .pick")
    finally:
        server.shutdown()
        server.server_close()
