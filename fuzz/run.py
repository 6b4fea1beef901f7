"""Runs one fuzz target for a fixed time and prints its figures.

    python fuzz/run.py --target decode --seconds 60 [--corpus DIR] [--keep DIR]

Seeds are generated into a temporary directory (small records and file heads
taken from ``--corpus``, default ``$TFRX_CORPUS``, plus generated files); the
libFuzzer corpus grows there and is removed afterwards unless ``--keep`` names
a directory to keep it in. A crashing input is written to ``--artifacts``
(default: the current directory) as ``crash-*``. The exit status is the
fuzzer's: 0 when no finding. Under an ASan build of the extension, run with
``LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0``.
"""

from __future__ import annotations

import argparse
import glob
import importlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = {
    "reader": "fuzz_reader",
    "decode": "fuzz_decode",
    "parse": "fuzz_parse",
    "parse_sequence": "fuzz_parse_sequence",
    "parse_file": "fuzz_parse_file",
    "index": "fuzz_index",
}
_STATS = re.compile(r"#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+)")
_DONE = re.compile(r"Done (\d+) runs in (\d+) second")


def make_seeds(target: str, corpus: str | None, out_dir: str) -> int:
    sys.path.insert(0, HERE)
    module = importlib.import_module(TARGETS[target])
    return module.seeds(corpus, out_dir)


def run(
    target: str,
    seconds: int,
    corpus: str | None,
    keep: str | None,
    artifacts: str,
    max_len: int = 1 << 16,
    quiet: bool = False,
) -> dict:
    work = keep or tempfile.mkdtemp(prefix=f"tfrx-fuzz-{target}-")
    os.makedirs(work, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix=f"tfrx-fuzz-{target}-scratch-")  # for files a target writes (not the corpus)
    try:
        # Seeds in a child so that atheris instruments tfrx in the fuzzing process only.
        subprocess.run(
            [sys.executable, __file__, "--seeds-only", "--target", target, "--into", work]
            + (["--corpus", corpus] if corpus else []),
            check=True,
        )
        seeds = len(os.listdir(work))
        cmd = [
            sys.executable,
            os.path.join(HERE, TARGETS[target] + ".py"),
            work,
            f"-max_total_time={seconds}",
            f"-max_len={max_len}",
            "-timeout=20",
            "-rss_limit_mb=4096",
            f"-artifact_prefix={os.path.join(os.path.abspath(artifacts), '')}",
            "-print_final_stats=1",
        ]
        env = dict(os.environ, TFRX_FUZZ_SCRATCH=scratch)
        # A PYTHONPATH given by the caller (e.g. a sanitizer build of tfrx) wins over src/, and src/
        # only counts where the extension is built in place (`make dev`); otherwise the installed
        # package is fuzzed (src/ ahead of site-packages would shadow it with an unbuilt copy).
        src = os.path.join(os.path.dirname(HERE), "src")
        built = glob.glob(os.path.join(src, "tfrx", "_native*"))
        parts = [HERE, env.get("PYTHONPATH", ""), src if built else ""]
        env["PYTHONPATH"] = os.pathsep.join(p for p in parts if p)
        started = time.monotonic()
        proc = subprocess.run(
            cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
        )
        elapsed = time.monotonic() - started
        out = proc.stdout
        stats = _STATS.findall(out)
        done = _DONE.search(out)
        execs = int(done.group(1)) if done else (int(stats[-1][0]) if stats else 0)
        result = {
            "target": target,
            "seconds": round(elapsed, 1),
            "seeds": seeds,
            "executions": execs,
            "coverage": int(stats[-1][1]) if stats else 0,
            "features": int(stats[-1][2]) if stats else 0,
            "corpus": len(os.listdir(work)),
            "returncode": proc.returncode,
        }
        if proc.returncode != 0 and not quiet:
            sys.stderr.write(out[-8000:])
        return result
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--target", required=True, choices=sorted(TARGETS) + ["all"])
    p.add_argument("--seconds", type=int, default=60)
    p.add_argument("--corpus", default=os.environ.get("TFRX_CORPUS"))
    p.add_argument("--keep", default=None, help="keep the grown corpus in this directory")
    p.add_argument("--artifacts", default=".", help="directory for crash-* inputs")
    p.add_argument("--max-len", type=int, default=1 << 16)
    p.add_argument("--seeds-only", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--into", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.seeds_only:
        sys.path.append(os.path.join(os.path.dirname(HERE), "src"))
        import tfrx  # noqa: F401  (imported here, the target's import does not instrument it: seeding needs no coverage)

        make_seeds(args.target, args.corpus, args.into)
        return 0
    targets = sorted(TARGETS) if args.target == "all" else [args.target]
    status = 0
    for t in targets:
        r = run(
            t,
            args.seconds,
            args.corpus,
            None if args.keep is None else os.path.join(args.keep, t),
            args.artifacts,
            args.max_len,
        )
        print(
            f"{r['target']}: {r['executions']} executions in {r['seconds']} s, coverage {r['coverage']} "
            f"edges / {r['features']} features, corpus {r['seeds']} seeds -> {r['corpus']} inputs, "
            f"{'no finding' if r['returncode'] == 0 else 'FINDING (exit %d)' % r['returncode']}",
            flush=True,
        )
        status = status or r["returncode"]
    return status


if __name__ == "__main__":
    sys.exit(main())
