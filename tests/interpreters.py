"""TensorFlow and torch never share an interpreter: the suite runs in two.

TensorFlow and PyTorch crash when both are loaded into one process (``import
tensorflow, torch`` then ``torch.optim.SGD(...)`` is enough), so one ``python -m
pytest`` runs the suite in two interpreters:

- the *main* interpreter runs every test that does not request the ``tf`` fixture;
  ``import tensorflow`` fails there with an ImportError that says why;
- a *TensorFlow* interpreter, started as soon as collection ends and running
  beside the main one, runs every test that requests ``tf`` (directly or through
  another fixture); ``import torch`` fails there the same way.

The main interpreter runs the TensorFlow tests last: for each one it waits for
the TensorFlow interpreter's reports and replays them, so the terminal, ``-ra``
summary, exit status and closing line count every test once, as a single run
would. A test the TensorFlow interpreter never reported (it crashed, or did not
collect the test) fails with the reason and the end of that interpreter's log.

Without TensorFlow installed, nothing is split: the ``tf`` fixture skips in the
main interpreter. ``TFRX_TEST_SPLIT=0`` also turns the split off (for a run that
selects only TensorFlow tests, say).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROLE_ENV = "TFRX_TEST_INTERPRETER"  # "tensorflow" in the TensorFlow interpreter
SELECT_ENV = "TFRX_TEST_SELECT"  # file of node ids the TensorFlow interpreter runs
REPORTS_ENV = "TFRX_TEST_REPORTS"  # JSON-lines file it writes its reports to

TF_FIXTURE = "tf"
ROLE = os.environ.get(ROLE_ENV, "main")


class _Refuse(importlib.abc.MetaPathFinder):
    """Makes ``import <package>`` raise ImportError with the reason, in this interpreter only.

    ``importlib.util.find_spec`` answers None for it, as for a package that is not
    installed: libraries probe that way (torch's dynamo probes for TensorFlow).
    """

    def __init__(self, package: str, reason: str) -> None:
        self.package = package
        self.reason = reason

    def refuses(self, fullname: str) -> bool:
        return fullname == self.package or fullname.startswith(self.package + ".")

    def find_spec(self, fullname, path=None, target=None):
        if self.refuses(fullname):
            raise ModuleNotFoundError(self.reason, name=fullname)
        return None

    def install(self) -> None:
        sys.meta_path.insert(0, self)
        probe = importlib.util.find_spec

        def find_spec(name, package=None):
            if self.refuses(importlib.util.resolve_name(name, package) if name.startswith(".") else name):
                return None
            return probe(name, package)

        importlib.util.find_spec = find_spec


_TENSORFLOW_INSTALLED = importlib.util.find_spec("tensorflow") is not None  # before the guard below


def _tensorflow_installed() -> bool:
    return _TENSORFLOW_INSTALLED


def _split_enabled(config: pytest.Config) -> bool:
    if ROLE != "main" or os.environ.get("TFRX_TEST_SPLIT", "1") == "0":
        return False
    if config.option.collectonly or getattr(config.option, "setupplan", False):
        return False
    return _tensorflow_installed()


def install_import_guards() -> None:
    """Called from conftest at import time, before any test module is collected."""
    if ROLE == "tensorflow":
        if "torch" in sys.modules:
            raise RuntimeError("torch was imported before the TensorFlow test interpreter started")
        _Refuse(
            "torch",
            "torch is not importable in the TensorFlow test interpreter (the two crash in one process); "
            "a test that needs torch must not request the `tf` fixture",
        ).install()
    elif ROLE == "main" and os.environ.get("TFRX_TEST_SPLIT", "1") != "0" and _tensorflow_installed():
        _Refuse(
            "tensorflow",
            "TensorFlow is imported only in the TensorFlow test interpreter (it crashes beside torch); "
            "request the `tf` fixture to use it",
        ).install()


def _uses_tensorflow(item: pytest.Item) -> bool:
    return TF_FIXTURE in getattr(item, "fixturenames", ())


# ------------------------------------------------------------------ main interpreter


class _TensorFlowInterpreter:
    """The second pytest process, its node ids and the reports it has written so far."""

    def __init__(self, config: pytest.Config, nodeids: list[str]) -> None:
        self.config = config
        self.workdir = Path(tempfile.mkdtemp(prefix="tfrx-tf-tests-"))
        self._by_nodeid: dict[str, list[dict]] = {}
        self._finished: set[str] = set()
        self._crashed: dict[str, str] = {}
        self._starts = 0
        self._start(nodeids)

    def _start(self, nodeids: list[str]) -> None:
        """Starts (or, after a crash, restarts) the interpreter on the tests still to run."""
        self._starts += 1
        tag = f"{self._starts}"
        self.nodeids = nodeids
        self.reports_path = self.workdir / f"reports-{tag}.jsonl"
        self.log_path = self.workdir / f"log-{tag}.txt"
        select = self.workdir / f"select-{tag}.txt"
        select.write_text("\n".join(nodeids), encoding="utf-8")
        self.reports_path.touch()
        self._offset = 0
        self._partial = b""
        self._running: str | None = None
        env = dict(os.environ)
        env[ROLE_ENV] = "tensorflow"
        env[SELECT_ENV] = str(select)
        env[REPORTS_ENV] = str(self.reports_path)
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        config = self.config
        paths = sorted({n.split("::", 1)[0] for n in nodeids})
        args = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--rootdir", str(config.rootpath)]
        args += _passed_through(config.invocation_params.args)
        args += paths
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            args, cwd=str(config.rootpath), env=env, stdout=self._log, stderr=subprocess.STDOUT
        )

    def _poll(self) -> None:
        with self.reports_path.open("rb") as f:
            f.seek(self._offset)
            chunk = f.read()
        self._offset += len(chunk)
        data = self._partial + chunk
        lines = data.split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            if not line:
                continue
            event = json.loads(line)
            nodeid = event["nodeid"]
            if event["event"] == "start":
                self._running = nodeid
            elif event["event"] == "report":
                self._by_nodeid.setdefault(nodeid, []).append(event["report"])
            elif event["event"] == "finish":
                self._finished.add(nodeid)
                self._running = None

    def reports_for(self, nodeid: str) -> tuple[list[dict], str | None]:
        """The serialized reports of one test, waiting for them; or why none came.

        When the interpreter dies (a crash in TensorFlow, say), the test it was running
        fails with the end of its log and a new interpreter runs the tests still to run.
        """
        while True:
            self._poll()
            if nodeid in self._finished:
                return self._by_nodeid.pop(nodeid, []), None
            if nodeid in self._crashed:
                return self._by_nodeid.pop(nodeid, []), self._crashed.pop(nodeid)
            if self.proc.poll() is None:
                time.sleep(0.02)
                continue
            self._poll()
            if nodeid in self._finished:
                continue
            crashed = self._running
            reason = self._death(crashed)
            if crashed is None or self._starts >= 20:  # it died outside any test: do not loop
                return self._by_nodeid.pop(nodeid, []), reason
            self._crashed[crashed] = reason
            rest = [n for n in self.nodeids if n not in self._finished and n != crashed]
            self._log.close()
            if rest:
                self._start(rest)

    def _death(self, running: str | None) -> str:
        code = self.proc.returncode
        how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
        if running:
            what = (
                f"the TensorFlow test interpreter {how} while running this test (the tests after it ran in a new one)"
            )
        else:
            what = f"the TensorFlow test interpreter {how} without running this test (was it collected there?)"
        self._log.flush()
        tail = self.log_path.read_bytes()[-6000:].decode("utf-8", "replace")
        return f"{what}\n--- end of its log ({self.log_path}) ---\n{tail}"

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        # Its reports were replayed and failures quoted the end of its log: nothing to keep.
        shutil.rmtree(self.workdir, ignore_errors=True)


def _passed_through(args) -> list[str]:
    """The options of the main run that change how tests behave (not which are selected)."""
    out, it = [], iter(args)
    for a in it:
        if a.startswith(("--hypothesis-", "--timeout", "-W", "--tb", "--showlocals", "-l")) or a in (
            "-s",
            "--capture=no",
        ):
            out.append(a)
            if a in ("-W", "--tb", "--timeout", "--hypothesis-seed", "--hypothesis-profile") and "=" not in a:
                out.append(next(it, ""))
    return out


_interpreter: _TensorFlowInterpreter | None = None


def pytest_collection_finish(session: pytest.Session) -> None:
    global _interpreter
    if ROLE == "tensorflow" or not _split_enabled(session.config):
        return
    tf_items = [i for i in session.items if _uses_tensorflow(i)]
    if not tf_items:
        return
    # The main interpreter runs its own tests first, while the other one runs the TensorFlow tests.
    session.items[:] = [i for i in session.items if not _uses_tensorflow(i)] + tf_items
    _interpreter = _TensorFlowInterpreter(session.config, [i.nodeid for i in tf_items])


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):
    if _interpreter is None or not _uses_tensorflow(item):
        return None
    config = item.config
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    data, failure = _interpreter.reports_for(item.nodeid)
    for d in data:
        report = config.hook.pytest_report_from_serializable(config=config, data=d)
        if isinstance(report.longrepr, list):  # a skip's (path, line, reason): JSON made the tuple a list
            report.longrepr = tuple(report.longrepr)
        item.ihook.pytest_runtest_logreport(report=report)
    if failure is not None and not any(d.get("when") == "call" or d.get("outcome") != "passed" for d in data):
        report = pytest.TestReport(
            nodeid=item.nodeid,
            location=item.location,
            keywords={},
            outcome="failed",
            longrepr=failure,
            when="call",
            duration=0.0,
        )
        item.ihook.pytest_runtest_logreport(report=report)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


def pytest_sessionfinish(session: pytest.Session) -> None:
    global _interpreter
    if _interpreter is not None:
        _interpreter.close()
        _interpreter = None


# ------------------------------------------------------------------ TensorFlow interpreter

_reports_file = None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if ROLE != "tensorflow":
        return
    wanted = Path(os.environ[SELECT_ENV]).read_text(encoding="utf-8").split("\n")
    order = {nodeid: k for k, nodeid in enumerate(wanted)}
    keep = sorted((i for i in items if i.nodeid in order), key=lambda i: order[i.nodeid])
    dropped = [i for i in items if i.nodeid not in order]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep


def _emit(event: dict) -> None:
    global _reports_file
    if _reports_file is None:
        _reports_file = open(os.environ[REPORTS_ENV], "a", encoding="utf-8")  # noqa: SIM115 (open for the session)
    _reports_file.write(json.dumps(event) + "\n")
    _reports_file.flush()


def pytest_runtest_logstart(nodeid: str, location) -> None:
    if ROLE == "tensorflow":
        _emit({"event": "start", "nodeid": nodeid})


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if ROLE == "tensorflow":
        config = _config_for_reports
        assert config is not None  # set by pytest_configure in this role
        data = config.hook.pytest_report_to_serializable(config=config, report=report)
        _emit({"event": "report", "nodeid": report.nodeid, "report": data})


def pytest_runtest_logfinish(nodeid: str, location) -> None:
    if ROLE == "tensorflow":
        _emit({"event": "finish", "nodeid": nodeid})


_config_for_reports: pytest.Config | None = None


def pytest_configure(config: pytest.Config) -> None:
    global _config_for_reports
    _config_for_reports = config
