"""Progress: tqdm bars when tqdm is installed and the output is a terminal, a caller's
callable, or silence (what each ``progress=`` value means: :mod:`tfrx.options`)."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from typing import Any

from tfrx.options import Progress, check_progress


class _Silent:
    active = False

    def __init__(self, *args, **kwargs) -> None:
        self.n = 0

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_postfix_str(self, s: str, refresh: bool = True) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Callback(_Silent):
    """Tells a ``progress`` callable each step as a :class:`tfrx.Progress`."""

    active = True

    def __init__(self, func: Callable[[Progress], Any], total: int | None, desc: str, unit: str) -> None:
        super().__init__()
        self._func, self.total, self._desc, self._unit = func, total, desc, unit

    def update(self, n: int = 1) -> None:
        self.n += n
        self._func(Progress(self.n, self.total, self._unit, self._desc))


def progress_bar(total: int | None = None, *, desc: str = "", unit: str = "rec", enabled: Any = None):
    """What ``progress=enabled`` asks for: a tqdm bar on stderr, a callable's reporter, or a silent stand-in.

    ``enabled=None`` shows a bar only when stderr is a terminal and tqdm is
    installed (the ``progress`` extra); ``True`` asks for one (without tqdm:
    a warning, once, and no bar), ``False`` never shows one; a callable is
    called with a :class:`tfrx.Progress` at each update. Each has ``update(n)``,
    ``n`` (done so far), ``close()`` and ``active`` (False when nothing is told).
    """
    check_progress(enabled, where=desc or "tfrx")
    if callable(enabled) and not isinstance(enabled, bool):
        return _Callback(enabled, total, desc, unit)
    asked = enabled is True
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        return _Silent()
    try:
        from tqdm.auto import tqdm
    except ImportError:
        if asked:
            warnings.warn(
                "progress=True needs tqdm, which is not installed: pip install 'tfrx[progress]' "
                "(continuing without a progress bar)",
                stacklevel=2,
            )
        return _Silent()
    bar = tqdm(total=total, desc=desc, unit=unit, unit_scale=True, file=sys.stderr, leave=False, dynamic_ncols=True)
    bar.active = True
    return bar
