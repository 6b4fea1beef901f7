"""Shared fixtures: the real-world corpus and TensorFlow as a test oracle."""

from __future__ import annotations

import atexit
import csv
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from interpreters import (  # noqa: F401 (hooks: the suite runs TensorFlow tests in an interpreter of their own)
    install_import_guards,
    pytest_collection_finish,
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_runtest_logfinish,
    pytest_runtest_logreport,
    pytest_runtest_logstart,
    pytest_runtest_protocol,
    pytest_sessionfinish,
)

install_import_guards()


def _private_index_cache() -> None:
    """Points tfrx's index cache at a folder of this run's own, removed when the run ends.

    Tests never write into the user's ``~/.cache``. The interpreters and
    subprocesses the suite starts inherit the variable; the process that made
    the folder removes it at exit (after the TensorFlow interpreter is done).
    """
    owner = "TFRX_TEST_CACHE_OWNER"
    if os.environ.get(owner) and os.environ.get("TFRX_CACHE_DIR"):
        return  # started by a test run that made one
    folder = tempfile.mkdtemp(prefix="tfrx-test-cache-")
    os.environ["TFRX_CACHE_DIR"] = folder
    os.environ[owner] = str(os.getpid())
    atexit.register(shutil.rmtree, folder, ignore_errors=True)


_private_index_cache()

REPO_ROOT = Path(__file__).resolve().parent.parent
TESTS_DIR = Path(__file__).resolve().parent
GOLDEN_DIR = TESTS_DIR / "golden"


def _corpus_dir() -> Path:
    env = os.environ.get("TFRX_CORPUS")
    if env:
        return Path(env)
    return REPO_ROOT.parent / "shared" / "corpus" / "real"


CORPUS_DIR = _corpus_dir()


def load_corpus_sources() -> list[dict[str, str]]:
    """Rows of the corpus's SOURCES.tsv (one per file), or [] when the corpus is absent."""
    tsv = CORPUS_DIR / "SOURCES.tsv"
    if not tsv.exists():
        return []
    with tsv.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    """The directory of real TFRecord files; CI must have it, elsewhere tests skip."""
    if not (CORPUS_DIR / "SOURCES.tsv").exists():
        if os.environ.get("CI"):
            pytest.fail(f"real corpus not found at {CORPUS_DIR} (set TFRX_CORPUS)")
        pytest.skip(f"real corpus not found at {CORPUS_DIR} (set TFRX_CORPUS)")
    return CORPUS_DIR


@pytest.fixture(scope="session")
def corpus_sources(corpus_dir: Path) -> list[dict[str, str]]:
    return load_corpus_sources()


@pytest.fixture(scope="session")
def tf():
    """TensorFlow, imported once per session; tests needing it skip when it is missing.

    A test that requests this fixture runs in the TensorFlow test interpreter, where
    torch cannot be imported (``tests/interpreters.py``).
    """
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
    return pytest.importorskip("tensorflow")


S3_BUCKET = "tfrx-test"


@pytest.fixture(scope="session")
def s3():
    """An S3-compatible server on loopback (``tests/s3_server.py``) with bucket ``S3_BUCKET``, one per session."""
    pytest.importorskip("s3fs")
    pytest.importorskip("moto.moto_server.werkzeug_app")
    pytest.importorskip("boto3")
    from s3_server import S3Server

    server = S3Server()
    server.start()
    try:
        server.client().create_bucket(Bucket=S3_BUCKET)
        yield server
    finally:
        server.stop()
