"""tfrx view in a real browser: headless Chromium (Debian's chromium and chromium-driver) through Selenium.

Skipped, with the reason, where Chromium, its driver or Selenium is missing
(.ci/run installs them). With TFRX_VIEWER_SCREENSHOTS=DIR the pages are also
saved as PNGs there (docs/viewer.md's pictures are made so).
"""

from __future__ import annotations

import os
import shutil
import threading

import pytest

from test_viewer import _detection_records  # noqa: F401 (the same records as the API tests)

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

import tfrx  # noqa: E402
from tfrx.viewer.server import ViewerServer  # noqa: E402
from tfrx.viewer.source import ViewSource  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
DRIVER = shutil.which("chromedriver") or (os.path.exists("/usr/lib/chromium/chromedriver") and "/usr/lib/chromium/chromedriver")
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="headless Chromium and chromedriver are not installed "
                                "(Debian: apt-get install chromium chromium-driver)")
SHOTS = os.environ.get("TFRX_VIEWER_SCREENSHOTS")


@pytest.fixture(scope="module")
def browser():
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1400,1000"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


@pytest.fixture()
def served(tmp_path):
    records = _detection_records(60)
    with tfrx.TFRecordWriter(str(tmp_path / "det-00000-of-00001.tfrecord")) as w:
        w.write_many(records)
    server = ViewerServer(ViewSource(str(tmp_path / "det-00000-of-00001.tfrecord")))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server, records
    server.shutdown()
    server.server_close()


def _first_numbers(driver):
    return driver.execute_script("return [...document.querySelectorAll('#table tbody td.n')].map(td => +td.textContent)")


def _wait_rows(driver, first):
    WebDriverWait(driver, 30).until(lambda d: _first_numbers(d)[:1] == [first])


def _shot(driver, name):
    if SHOTS:
        os.makedirs(SHOTS, exist_ok=True)
        driver.save_screenshot(os.path.join(SHOTS, name))


def test_pages_jumps_filters_and_draws_boxes(browser, served):
    server, records = served
    browser.get(server.url)
    _wait_rows(browser, 0)
    assert _first_numbers(browser) == list(range(25))
    assert "60 records" in browser.find_element(By.ID, "summary").text
    # Thumbnails load (the browser decoded the PNG the server sent) and carry their boxes.
    WebDriverWait(browser, 30).until(lambda d: d.execute_script(
        "return [...document.querySelectorAll('#table img.media')].slice(0, 8).every(i => i.complete && i.naturalWidth > 0)"))
    rects = browser.execute_script("return document.querySelector('#table tbody tr[data-n=\"3\"]').querySelectorAll('svg rect').length")
    assert rects == 3
    _shot(browser, "viewer-records.png")

    browser.find_element(By.ID, "next").click()
    _wait_rows(browser, 25)
    browser.find_element(By.ID, "prev").click()
    _wait_rows(browser, 0)

    jump = browser.find_element(By.ID, "jump")
    jump.clear()
    jump.send_keys("42")
    browser.find_element(By.ID, "go").click()
    _wait_rows(browser, 42)
    assert _first_numbers(browser) == list(range(42, 60))

    box = browser.find_element(By.ID, "filter")
    box.send_keys("label == 2 and len(image/object/bbox/xmin) >= 2")
    browser.find_element(By.ID, "apply").click()
    expected = [i for i in range(60) if i % 5 == 2 and i % 4 >= 2]
    WebDriverWait(browser, 30).until(lambda d: _first_numbers(d) == expected)
    assert "matches" in browser.find_element(By.ID, "status").text

    browser.find_element(By.CSS_SELECTOR, f'#table tbody tr[data-n="{expected[0]}"]').click()
    WebDriverWait(browser, 30).until(EC.visibility_of_element_located((By.CSS_SELECTOR, "#detail .big img")))
    detail = browser.find_element(By.ID, "detail")
    assert f"record {expected[0]}" in detail.text and "boxes:" in detail.text
    assert len(detail.find_elements(By.CSS_SELECTOR, ".big svg rect")) == expected[0] % 4
    _shot(browser, "viewer-detail.png")


def test_schema_statistics_and_health_panels(browser, served):
    server, _ = served
    browser.get(server.url)
    _wait_rows(browser, 0)
    browser.find_element(By.CSS_SELECTOR, 'nav button[data-tab="schema"]').click()
    assert "tfrx.FixedLenFeature" in browser.find_element(By.ID, "schema-code").text
    browser.find_element(By.CSS_SELECTOR, 'nav button[data-tab="stats"]').click()
    WebDriverWait(browser, 60).until(lambda d: "records sampled" in d.find_element(By.ID, "stats-body").text)
    assert "image/object/bbox/xmin" in browser.find_element(By.ID, "stats-body").text
    _shot(browser, "viewer-stats.png")
    browser.find_element(By.CSS_SELECTOR, 'nav button[data-tab="health"]').click()
    WebDriverWait(browser, 60).until(lambda d: "CRC checks out" in d.find_element(By.ID, "health-body").text)


def test_sequence_examples_and_other_payloads(browser, tmp_path, corpus_dir):
    seq = [tfrx.make_sequence_example({"id": i}, {"tokens": [[j] for j in range(i + 2)]}).SerializeToString() for i in range(4)]
    with tfrx.TFRecordWriter(str(tmp_path / "seq.tfrecord")) as w:
        w.write_many(seq)
    events = sorted(corpus_dir.glob("*tfevents*"))[0]
    for path, check in [(str(tmp_path / "seq.tfrecord"), "tokens (4)"), (str(events), "not a tf.train.Example")]:
        server = ViewerServer(ViewSource(path, index_cache_dir=str(tmp_path / "index")))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            browser.get(server.url)
            _wait_rows(browser, 0)
            browser.find_element(By.CSS_SELECTOR, '#table tbody tr[data-n="2"]').click()
            WebDriverWait(browser, 30).until(lambda d: check in d.find_element(By.ID, "detail").text)
            if "seq" in path:
                _shot(browser, "viewer-sequence.png")
        finally:
            server.shutdown()
            server.server_close()
