"""How fast ``tfrx view`` opens a large file: ``python -m benchmarks.viewer_open FOLDER [--gb 10] [--keep]``.

Writes an image-like dataset of about ``--gb`` GB into FOLDER (one file of
Object Detection records, a JPEG of about 100 KB each, unless it is there),
builds its record index (timed, with the progress the page shows), then
starts ``tfrx view`` in a fresh process and times: process start to the
first page of records as JSON, a jump to a record near the end, the
statistics of a random sample, and (with Selenium and Chromium) a browser
loading the page until the first thumbnails show. The file is deleted
afterwards unless ``--keep``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np


def _jpegs(n: int, size: int = 320) -> list[bytes]:
    """``n`` noisy photographs-to-be (noise compresses badly, like photos do)."""
    from PIL import Image

    rng = np.random.default_rng(0)
    out = []
    for i in range(n):
        y, x = np.mgrid[0:size, 0:size]
        base = np.stack([(x * (i + 1)) % 256, (y * 3) % 256, ((x + y) * 2) % 256], -1)
        image = np.clip(base + rng.normal(0, 40, base.shape), 0, 255).astype(np.uint8)
        buf = io.BytesIO()
        Image.fromarray(image).save(buf, format="JPEG", quality=90)
        out.append(buf.getvalue())
    return out


def generate(path: str, gb: float) -> int:
    import tfrx

    images = _jpegs(32)
    rng = np.random.default_rng(1)
    target = int(gb * 1e9)
    n = written = 0
    with tfrx.TFRecordWriter(path) as w:
        while written < target:
            rows = []
            for _ in range(1000):
                k = int(rng.integers(0, 5))
                xmin = rng.uniform(0, 0.6, k).astype(np.float32)
                ymin = rng.uniform(0, 0.6, k).astype(np.float32)
                rows.append(
                    tfrx.make_example(
                        {
                            "image/encoded": images[n % len(images)],
                            "image/format": b"jpeg",
                            "image/height": 320,
                            "image/width": 320,
                            "image/class/label": n % 1000,
                            "image/object/bbox/xmin": xmin,
                            "image/object/bbox/ymin": ymin,
                            "image/object/bbox/xmax": xmin + 0.3,
                            "image/object/bbox/ymax": ymin + 0.3,
                            "image/object/class/text": [b"cat" if j % 2 else b"dog" for j in range(k)],
                        },
                        kinds={"image/object/class/text": "bytes"},
                    ).SerializeToString()
                )
                n += 1
            w.write_many(rows)
            written += sum(len(r) + 16 for r in rows)
    return n


def _evict(path: str) -> None:
    """Drops this file's pages from the page cache, so reads come from the disk (the cold case)."""
    with open(path, "rb") as f:
        os.fsync(f.fileno())
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)


_TOKEN = {"X-Tfrx-Token": ""}  # the launch's token, from the address tfrx view prints


def _get(url: str, post: bool = False) -> tuple[float, bytes]:
    t0 = time.perf_counter()
    request = urllib.request.Request(url, headers=_TOKEN, method="POST" if post else "GET")
    with urllib.request.urlopen(request, timeout=600) as r:
        body = r.read()
    return time.perf_counter() - t0, body


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv=None) -> int:  # noqa: PLR0915  a benchmark script: argument parsing, then one timed step after another
    p = argparse.ArgumentParser(prog="python -m benchmarks.viewer_open", description=__doc__)
    p.add_argument("folder")
    p.add_argument("--gb", type=float, default=10.0)
    p.add_argument("--keep", action="store_true")
    args = p.parse_args(argv)
    os.makedirs(args.folder, exist_ok=True)
    path = os.path.join(args.folder, "images-00000-of-00001.tfrecord")
    cache = os.path.join(args.folder, "index-cache")
    report = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cores": os.cpu_count(),
        "load_before": os.getloadavg(),
    }
    try:
        if not os.path.exists(path):
            t0 = time.perf_counter()
            report["records_written"] = generate(path, args.gb)
            report["generate_s"] = round(time.perf_counter() - t0, 1)
        report["bytes"] = os.path.getsize(path)
        shutil.rmtree(cache, ignore_errors=True)
        from tfrx.viewer._source import ViewSource

        _evict(path)
        seen = []
        t0 = time.perf_counter()
        src = ViewSource(path, index_cache_dir=cache)
        src.prepare(lambda done, size: seen.append((round(time.perf_counter() - t0, 2), round(done / size, 3))))
        report["index_build_s"] = round(time.perf_counter() - t0, 2)
        report["index_progress"] = seen[:: max(1, len(seen) // 8)] + seen[-1:]
        report["records"] = src.total()
        src.close()

        # The same open inside this process (tfrx already imported): the viewer's own share.
        from tfrx.viewer._server import ViewerServer

        _evict(path)
        t0 = time.perf_counter()
        server = ViewerServer(ViewSource(path, index_cache_dir=cache))
        while server.preparing.status == "running":
            time.sleep(0.005)
        info = server.info()
        server.records(0, 25, None)
        report["in_process_open_to_first_page_s"] = round(time.perf_counter() - t0, 3)
        t0 = time.perf_counter()
        server.records(info["total"] - 25, 25, None)
        report["in_process_jump_s"] = round(time.perf_counter() - t0, 3)
        server.server_close()
        server.source.close()
        imports = []
        for _ in range(3):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "import tfrx.viewer._server"], check=True)
            imports.append(round(time.perf_counter() - t0, 3))
        report["python_start_and_import_s"] = imports

        port = _free_port()
        base = f"http://127.0.0.1:{port}/"
        _evict(path)
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "tfrx", "view", path, "--no-browser", "--port", str(port), "--index-cache", cache],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            # "tfrx view: 1 file(s) at http://127.0.0.1:PORT/?token=TOKEN (Ctrl-C to stop)"
            line = proc.stdout.readline().decode()
            _TOKEN["X-Tfrx-Token"] = line.split("?token=")[1].split()[0]
            while True:
                try:
                    info = json.loads(_get(base + "api/info")[1])
                    if info.get("status", "ready") == "ready":
                        break
                except OSError:
                    pass
                if proc.poll() is not None:
                    raise RuntimeError(proc.stderr.read().decode())
                time.sleep(0.02)
            report["start_to_info_s"] = round(time.perf_counter() - t0, 3)
            _, body = _get(base + "api/records?start=0&count=25")
            report["start_to_first_page_s"] = round(time.perf_counter() - t0, 3)
            n = info["total"]
            report["jump_near_end_s"] = round(_get(base + f"api/records?start={n - 25}&count=25")[0], 3)
            report["one_record_s"] = round(_get(base + f"api/record?n={n - 1}")[0], 3)
            report["random_page_s"] = round(_get(base + "api/random?count=25&seed=7")[0], 3)
            report["filtered_page_s"] = round(
                _get(base + "api/records?count=25&filter=image/class/label%20%3D%3D%20999")[0], 3
            )
            t1 = time.perf_counter()
            _get(base + "api/stats?mode=sample&records=10000", post=True)  # statistics start with a POST
            while json.loads(_get(base + "api/stats?mode=sample&records=10000")[1])["status"] == "running":
                report["page_while_stats_s"] = round(_get(base + f"api/records?start={n // 2}&count=25")[0], 3)
                time.sleep(0.2)
            report["stats_sample_10000_s"] = round(time.perf_counter() - t1, 2)
            report["browser_s"] = _browser(f"{base}?token={_TOKEN['X-Tfrx-Token']}")
        finally:
            proc.terminate()
            proc.wait(30)
    finally:
        if not args.keep:
            for f in (path,):
                if os.path.exists(f):
                    os.remove(f)
            shutil.rmtree(cache, ignore_errors=True)
    report["load_after"] = os.getloadavg()
    print(json.dumps(report, indent=1))
    return 0


def _browser(base: str):
    """Seconds from asking Chromium for the page to the first 8 thumbnails decoded, or why not measured."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        from selenium.webdriver.support.ui import WebDriverWait
    except ImportError:
        return "selenium not installed"
    chromium = shutil.which("chromium")
    driver_path = shutil.which("chromedriver") or "/usr/lib/chromium/chromedriver"
    if not chromium or not os.path.exists(driver_path):
        return "chromium not installed"
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1400,1000",
    ):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        driver.get("about:blank")
        t0 = time.perf_counter()
        driver.get(base)
        WebDriverWait(driver, 120).until(
            lambda d: d.execute_script(
                "const i=[...document.querySelectorAll('#table img.media')].slice(0,8);"
                "return i.length===8 && i.every(x => x.complete && x.naturalWidth > 0)"
            )
        )
        return round(time.perf_counter() - t0, 3)
    finally:
        driver.quit()


if __name__ == "__main__":
    sys.exit(main())
