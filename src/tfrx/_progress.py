"""Progress bars: tqdm when it is installed and the output is a terminal, silence otherwise."""

from __future__ import annotations

import sys
import warnings


class _Silent:
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


def progress_bar(total: int | None = None, *, desc: str = "", unit: str = "rec", enabled: bool | None = None):
    """A tqdm bar on stderr, or a silent stand-in.

    ``enabled=None`` shows a bar only when stderr is a terminal and tqdm is
    installed (the ``progress`` extra); ``True`` asks for one (without tqdm:
    a warning, once, and no bar), ``False`` never shows one.
    """
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
    return tqdm(total=total, desc=desc, unit=unit, unit_scale=True, file=sys.stderr, leave=False, dynamic_ncols=True)
