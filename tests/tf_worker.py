"""TensorFlow in a child process that is replaced when it crashes.

TensorFlow dies on some inputs (SIGFPE on a zero-size
FixedLenSequenceFeature, SIGSEGV on some malformed SequenceExamples), so
differential tests ask it through :class:`TfWorker`: a child interpreter
that imports TensorFlow once and answers pickled calls over its own pipes.
A call is ``(module file, function name, args)``; the function gets the
``tensorflow`` module first. The answer is ``("ok", value)``,
``("error", exception type name)`` or, when the child died,
``("crash", signal or exit code)``; the next call starts a fresh child.

Run as a script it is the child: it reads requests on stdin and answers on
the file descriptor that was stdout when it started (stdout itself is sent
to stderr so that library chatter cannot corrupt the answers).
"""

from __future__ import annotations

import importlib.util
import os
import pickle
import struct
import subprocess
import sys

_LEN = struct.Struct("<Q")


def _read(stream) -> bytes | None:
    head = stream.read(_LEN.size)
    if len(head) < _LEN.size:
        return None
    n = _LEN.unpack(head)[0]
    body = stream.read(n)
    return body if len(body) == n else None


def _write(stream, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LEN.pack(len(data)) + data)
    stream.flush()


class TfWorker:
    """A TensorFlow child process; ``call(path, name, *args)`` runs ``name(tf, *args)`` in it."""

    def __init__(self, *, timeout: float = 120.0) -> None:
        self.timeout = timeout
        self.proc: subprocess.Popen | None = None
        self.crashes = 0

    def _start(self) -> None:
        env = dict(os.environ)
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        env.setdefault("CUDA_VISIBLE_DEVICES", "")
        env["PYTHONFAULTHANDLER"] = ""
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )

    def call(self, path: str, name: str, *args):
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        assert self.proc is not None and self.proc.stdin is not None and self.proc.stdout is not None
        try:
            _write(self.proc.stdin, (os.path.abspath(path), name, args))
            answer = _read(self.proc.stdout)
        except (BrokenPipeError, OSError):
            answer = None
        if answer is None:
            try:
                code = self.proc.wait(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                code = self.proc.wait()
            self.proc = None
            self.crashes += 1
            return ("crash", code)
        return pickle.loads(answer)

    def close(self) -> None:
        if self.proc is not None:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None


def _serve() -> None:
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed goes to stderr
    import tensorflow as tf

    modules: dict[str, object] = {}
    requests = sys.stdin.buffer
    while True:
        raw = _read(requests)
        if raw is None:
            return
        path, name, args = pickle.loads(raw)
        if path not in modules:
            spec = importlib.util.spec_from_file_location(f"_tf_worker_{len(modules)}", path)
            assert spec is not None and spec.loader is not None
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            modules[path] = mod
        try:
            result = ("ok", getattr(modules[path], name)(tf, *args))
        except Exception as e:  # noqa: BLE001 - TensorFlow's failure is the answer
            result = ("error", type(e).__name__)
        _write(answers, result)


if __name__ == "__main__":
    _serve()
