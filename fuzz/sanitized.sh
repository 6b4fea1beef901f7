#!/usr/bin/env bash
# The native extension under AddressSanitizer and UndefinedBehaviorSanitizer.
#
#   fuzz/sanitized.sh build                      # build into build/asan-pkg (src/tfrx is left alone)
#   fuzz/sanitized.sh run python -m pytest -q tests/test_framing.py
#   fuzz/sanitized.sh run python fuzz/run.py --target all --seconds 20
#
# `build` compiles the package with TFRX_SANITIZE=address,undefined through pip
# into a package directory of its own, so the ordinary build in src/tfrx or
# site-packages is untouched. `run` puts that package first on PYTHONPATH,
# preloads the compiler's ASan runtime (with libstdc++, whose __cxa_throw ASan's
# interceptor needs) and runs the command; the first sanitizer report ends it
# with a non-zero status.
#
# CXX picks the compiler (default g++). With clang (CXX=clang++) the extension
# is also built with -fsanitize=fuzzer-no-link, and clang's libFuzzer is linked
# into a library that `run` preloads ahead of the ASan runtime, so atheris gets
# coverage feedback from the C++ code and from tfrx's Python code. (With GCC the
# ASan runtime's empty coverage hooks shadow atheris's: those runs mutate from
# the seeds without feedback.)
#
# PYTHON names the interpreter for `build` (default: python), TFRX_ASAN_PKG the
# package directory.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PKG="${TFRX_ASAN_PKG:-$ROOT/build/asan-pkg}"
export CXX="${CXX:-g++}"
if "$CXX" --version 2>/dev/null | grep -q clang; then CLANG=1; else CLANG=0; fi

case "${1:-}" in
build)
    sanitize=address,undefined
    [ "$CLANG" = 1 ] && sanitize=address,undefined,fuzzer-no-link
    TFRX_SANITIZE=$sanitize "${PYTHON:-python}" -m pip install --quiet --no-deps --upgrade \
        --target "$PKG" -C build-dir="$ROOT/build/asan-$(basename "$CXX")" "$ROOT"
    rm -f "$PKG/libfuzzer.so"
    if [ "$CLANG" = 1 ]; then
        "$CXX" -shared -o "$PKG/libfuzzer.so" -Wl,--whole-archive \
            "$("$CXX" -print-file-name=libclang_rt.fuzzer_no_main-x86_64.a)" -Wl,--no-whole-archive -lpthread
    fi
    ;;
run)
    shift
    [ -d "$PKG/tfrx" ] || { echo "no sanitizer build in $PKG: run '$0 build' first" >&2; exit 2; }
    if [ "$CLANG" = 1 ]; then
        asan="$("$CXX" -print-file-name=libclang_rt.asan-x86_64.so)"
    else
        asan="$("$CXX" -print-file-name=libasan.so)"
    fi
    stdcxx="$(g++ -print-file-name=libstdc++.so 2>/dev/null || echo libstdc++.so.6)"
    [ -e "$asan" ] || { echo "$CXX has no ASan runtime" >&2; exit 2; }
    preload="$asan $stdcxx"
    options=""
    if [ -e "$PKG/libfuzzer.so" ]; then
        # libFuzzer first, so its coverage hooks win over the ASan runtime's empty ones.
        preload="$PKG/libfuzzer.so $preload"
        options=":verify_asan_link_order=0"
    fi
    export LD_PRELOAD="$preload${LD_PRELOAD:+ $LD_PRELOAD}"
    # detect_leaks=0: CPython leaves its own allocations to the end of the process by design.
    export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1$options${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
    export PYTHONPATH="$PKG${PYTHONPATH:+:$PYTHONPATH}"
    exec "$@"
    ;;
*)
    sed -n '2,23p' "$0" >&2
    exit 2
    ;;
esac
