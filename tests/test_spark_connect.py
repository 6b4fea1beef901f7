"""tfrx.spark through Spark Connect: the data source class travels to a local Connect server and runs there.

A session of its own (``SparkSession.builder.remote("local[2]")``, which starts a local server); it needs
Spark Connect's client packages (``pyspark[connect]``) and a Java 17+ runtime, and skips without them.
"""

from __future__ import annotations

import os
import shutil
import sys

import pytest

import tfrx


pytest.importorskip("pyspark")
pytest.importorskip("zstandard")  # one of Spark Connect's client requirements (pyspark[connect])
pytest.importorskip("grpc")

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def connect():
    home = os.environ.get("JAVA_HOME")
    if not (shutil.which("java") or (home and os.path.exists(os.path.join(home, "bin", "java")))):
        pytest.skip("Spark needs a Java 17+ runtime (apt-get install openjdk-17-jre-headless); none found")
    from pyspark.sql import SparkSession

    # The workers import tfrx from where this process did: the installed package (CI), or src/ with the
    # extension built in place (make dev); never a checkout's src/ that has no extension.
    src = os.path.dirname(os.path.dirname(os.path.abspath(tfrx.__file__)))
    saved = {k: os.environ.get(k) for k in ("PYSPARK_PYTHON", "PYTHONPATH")}
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)
    session = SparkSession.builder.remote("local[2]").appName("tfrx-connect-tests").getOrCreate()
    yield session
    session.stop()
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def test_write_and_read_through_spark_connect(connect, tmp_path):
    import tfrx.spark

    assert type(connect).__module__.startswith("pyspark.sql.connect")
    tfrx.spark.register(connect)
    out = tmp_path / "out"
    df = connect.range(0, 50, numPartitions=2).selectExpr("id", "cast(id * 2 as float) as x")
    df.write.format("tfrecord").mode("overwrite").option("compression", "gzip").save(str(out))
    assert sorted(n for n in os.listdir(out) if not n.startswith(".")) == [
        "part.tfrecord-00000-of-00002",
        "part.tfrecord-00001-of-00002",
    ]
    back = connect.read.format("tfrecord").load(str(out)).orderBy("id").collect()
    assert [(r.id, r.x) for r in back] == [(i, float(i * 2)) for i in range(50)]
    assert len(list(tfrx.read_records(sorted(str(p) for p in out.glob("part.*"))))) == 50
