"""A restricted unpickler for the upstream pandas pickles of multilingual StereoSet.

Only the pandas/numpy classes a plain ``DataFrame`` of strings needs may be loaded; anything else (``os.system``,
``builtins.eval``, ...) raises :class:`~lm_eval_stereo.core.errors.MalformedDataError`. It is only ever called on files
whose sha256 matched the pinned one.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from pandas.compat import pickle_compat

from lm_eval_stereo.core.errors import MalformedDataError

ALLOWED_GLOBALS: frozenset[tuple[str, str]] = frozenset(
    {
        ("builtins", "slice"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy.core.numeric", "_frombuffer"),
        ("numpy._core.numeric", "_frombuffer"),
        ("pandas._libs.internals", "_unpickle_block"),
        ("pandas.core.frame", "DataFrame"),
        ("pandas.core.indexes.base", "_new_Index"),
        ("pandas.core.indexes.base", "Index"),
        ("pandas.core.indexes.numeric", "Int64Index"),
        ("pandas.core.indexes.range", "RangeIndex"),
        ("pandas.core.internals.managers", "BlockManager"),
    }
)


class RestrictedUnpickler(pickle_compat.Unpickler):
    """pandas' compatibility unpickler that refuses every global outside :data:`ALLOWED_GLOBALS`."""

    def __init__(self, data: bytes, origin: str) -> None:
        super().__init__(io.BytesIO(data))
        self.origin = origin

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in ALLOWED_GLOBALS:
            raise MalformedDataError(self.origin, f"pickle refers to {module}.{name}, which is not allowed")
        if module.startswith("numpy.core."):
            module = "numpy._core." + module[len("numpy.core.") :]
        return super().find_class(module, name)


def load_dataframe(path: Path) -> Any:
    """Unpickle a pandas DataFrame from ``path`` with :class:`RestrictedUnpickler`."""
    frame = RestrictedUnpickler(path.read_bytes(), str(path)).load()
    if type(frame).__name__ != "DataFrame":
        raise MalformedDataError(str(path), f"expected a pandas DataFrame, got {type(frame).__name__}")
    return frame
