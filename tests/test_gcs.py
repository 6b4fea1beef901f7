"""gs:// over real HTTP: a Cloud Storage emulator on loopback (gcp-storage-emulator), read and written through gcsfs."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

import tfrx

gcsfs_core = pytest.importorskip("gcsfs.core")
emulator = pytest.importorskip("gcp_storage_emulator.server")

BUCKET = "tfrx-test"


@pytest.fixture(scope="module")
def gcs():
    import fsspec

    # gcsfs's default class first asks a gRPC control API what kind of bucket it
    # is (an emulator has none; it waits a minute per bucket, then falls back):
    # use the plain JSON-API filesystem, as GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT=false does.
    previous = fsspec.registry.get("gs")
    fsspec.register_implementation("gs", gcsfs_core.GCSFileSystem, clobber=True)
    # The emulator lacks the objects.moveTo call gcsfs tries first when renaming; answered
    # 501, gcsfs retries it with backoff for half a minute. A 400 makes it copy and delete
    # at once, as it does for any store without moveTo.
    handler = emulator.RequestHandler
    do_post = handler.do_POST

    def do_post_without_move(self):
        if "/moveTo/" in self.path:
            body = b'{"error": {"code": 400, "message": "invalid: moveTo is not supported by the emulator"}}'
            self.send_response(400)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        do_post(self)

    handler.do_POST = do_post_without_move
    server = emulator.create_server("127.0.0.1", 0, in_memory=True, default_bucket=BUCKET)
    server.start()
    server._api._httpd.handle_error = lambda *args: None  # a client closing a connection early is no error here
    host, port = server._api._httpd.server_address[:2]
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()
        handler.do_POST = do_post
        if previous is not None:
            fsspec.register_implementation("gs", previous, clobber=True)
        else:
            sys.modules["fsspec.registry"]._registry.pop("gs", None)


@pytest.fixture
def opts(gcs):
    return {"endpoint_url": gcs, "token": "anon"}


@pytest.fixture
def prefix(request):
    return f"gs://{BUCKET}/{request.node.name.replace('[', '-').replace(']', '')}"


def _records(shard: int, n: int, size: int = 1) -> list[bytes]:
    return [(b"%d-%d;" % (shard, i)) * size for i in range(n)]


def test_read_write_glob_and_readahead(opts, prefix):
    expected = []
    for k, n in enumerate((300, 0, 40, 500)):
        recs = _records(k, n, size=12)
        tfrx.write_records(f"{prefix}/part-{k}.tfrecord", recs, storage_options=opts)
        expected += recs
    glob = f"{prefix}/part-*.tfrecord"
    assert list(tfrx.read_records(glob, storage_options=opts)) == expected
    reader = tfrx.RecordReader(glob, storage_options=opts)
    assert [str(p) for p in reader.paths] == [f"{prefix}/part-{k}.tfrecord" for k in range(4)]
    assert reader.paths[0].storage_options == opts
    reader.close()
    # Concurrent block reads running across objects give the same records and positions.
    positions = {}
    for readahead in (0, 6 * 4096):
        with tfrx.RecordReader(glob, chunk_size=4096, readahead=readahead, storage_options=opts) as r:
            positions[readahead] = [(r.position, b.to_list()) for b in iter(lambda: r.read_batch(max_records=50), None)]
    assert positions[0] == positions[6 * 4096]
    with pytest.raises(FileNotFoundError):
        list(tfrx.read_records(f"{prefix}/missing-*.tfrecord", storage_options=opts))


def test_emulator_host_from_the_environment(gcs, prefix, monkeypatch):
    # gcsfs reads STORAGE_EMULATOR_HOST itself: no endpoint in storage_options.
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", gcs)
    url = f"{prefix}/env.tfrecord.gz"
    recs = _records(0, 25, size=30)
    tfrx.write_records(url, recs, compression="gzip", storage_options={"token": "anon"})
    assert list(tfrx.read_records(url, storage_options={"token": "anon"})) == recs


def test_sharded_writer_and_random_access(opts, prefix, tmp_path, monkeypatch):
    monkeypatch.setenv("TFRX_CACHE_DIR", str(tmp_path / "cache"))
    recs = _records(1, 60, size=7)
    paths = tfrx.write_examples(f"{prefix}/train", recs, num_shards=3, index=True, storage_options=opts)
    fs = gcsfs_core.GCSFileSystem(**opts)
    folder = f"{BUCKET}/{prefix.rsplit('/', 1)[1]}"
    names = sorted(p.rsplit("/", 1)[1] for p in fs.ls(folder, detail=False))
    shards = [f"train.tfrecord-{i:05d}-of-00003" for i in range(3)]
    assert names == sorted([".tfrx", *shards])
    names = sorted(p.rsplit("/", 1)[1] for p in fs.ls(f"{folder}/.tfrx", detail=False))
    assert names == sorted(["train.manifest.json", *(s + ".tfrxidx" for s in shards)])
    ds = tfrx.RandomAccessDataset(paths, storage_options=opts)
    assert not (tmp_path / "cache").exists()  # the indexes beside the shards were used
    assert sorted(bytes(r) for r in ds.read_batch(np.arange(len(ds)))) == sorted(recs)
    assert sum(1 for _ in tfrx.read_records(paths, storage_options=opts)) == 60


def test_cli_with_storage_options(gcs, prefix, capsys):
    from tfrx.cli import main

    opts = {"endpoint_url": gcs, "token": "anon"}
    tfrx.write_examples(f"{prefix}/d", {"id": np.arange(10, dtype=np.int64)}, num_shards=2, storage_options=opts)
    argv = [
        "count",
        f"{prefix}/d.tfrecord-*",
        "--storage-option",
        f"endpoint_url={gcs}",
        "--storage-options",
        json.dumps({"token": "anon"}),
    ]
    assert main(argv) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "10\ttotal"
