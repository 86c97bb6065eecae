"""Input checks shared by every public statistic (scikit-learn's ``column_or_1d`` habit).

Every public function of the calibration package passes its array inputs through one of
these helpers before computing anything, so that a bad input fails loudly and the same way
everywhere instead of being silently misread (``np.asarray(["pass", "fail"]).astype(bool)``
is ``[True, True]``):

* :func:`as_1d` and :func:`check_same_length` for shapes;
* :func:`as_binary` for pass/fail inputs: booleans, 0/1 and the words of
  :func:`parse_verdict` (pass/fail, true/false, yes/no) become 0.0 / 1.0; anything else
  (``2``, ``0.5``, ``"maybe"``) raises ValueError naming the argument and the value;
* :func:`as_float` for numeric inputs (scores, lengths), with the same kind of error;
* :func:`binary_labels` for labels that must already be 0/1 and complete (the fits and the
  probability scores, which have no use for an unlabelled item).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

FloatArray = npt.NDArray[np.float64]

_TRUE = {"pass", "true", "yes", "1", "1.0", "y", "t"}
_FALSE = {"fail", "false", "no", "0", "0.0", "n", "f"}


def as_1d(values: object, name: str) -> npt.NDArray[Any]:
    """A 1-D array from a sequence, Series or array; raises ValueError otherwise."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    return arr


def check_same_length(**arrays: npt.NDArray[Any]) -> int:
    """The common length of the arrays; ValueError when they differ."""
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"arrays differ in length: {lengths}")
    return next(iter(lengths.values()))


def binary_labels(labels: object, name: str = "labels") -> FloatArray:
    """0/1 labels as floats; ValueError for missing or other values."""
    y = as_1d(labels, name).astype(np.float64)
    if np.isnan(y).any() or not np.isin(y, (0.0, 1.0)).all():
        raise ValueError(f"{name} must be 0/1 without missing values (drop unlabelled items)")
    return y


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float | np.floating) and math.isnan(value)


def parse_verdict(value: Any) -> float:
    """0.0 / 1.0 for a verdict-like value (bool, 0/1, pass/fail, yes/no), NaN for missing.

    Raises ValueError for anything else.

    >>> parse_verdict("PASS"), parse_verdict(False), parse_verdict(None)
    (1.0, 0.0, nan)
    """
    if _missing(value):
        return math.nan
    if isinstance(value, bool | np.bool_):
        return float(value)
    text = str(value).strip().lower()
    if text == "" or text == "nan":
        return math.nan
    if text in _TRUE:
        return 1.0
    if text in _FALSE:
        return 0.0
    raise ValueError(f"cannot read {value!r} as a verdict (pass/fail, true/false, 1/0)")


def as_binary(values: object, name: str, *, allow_missing: bool = False) -> FloatArray:
    """Pass/fail values as a float array of 0.0 / 1.0 (NaN where missing, if allowed).

    Parameters
    ----------
    values : array-like of shape (n,)
        Booleans, the numbers 0 and 1, or the words pass/fail, true/false, yes/no (any case).
    name : str
        The argument's name, for the error message.
    allow_missing : bool
        Whether None / NaN / empty text may appear (they become NaN).

    Raises
    ------
    ValueError
        For any other value (``2``, ``0.5``, ``"maybe"``) or a missing one when not allowed.

    Examples
    --------
    >>> as_binary(["pass", "fail", True, 0], "y").tolist()
    [1.0, 0.0, 1.0, 0.0]
    """
    arr = as_1d(values, name)
    if arr.dtype.kind in "biuf":  # numbers and booleans: check, no parsing needed
        out = arr.astype(np.float64)
        bad = ~np.isin(out, (0.0, 1.0)) & ~np.isnan(out)
        if bad.any():
            value = arr[bad].tolist()[0]
            raise ValueError(f"{name}: cannot read {value!r} as a verdict (pass/fail, 1/0)")
    else:
        try:
            out = np.array([parse_verdict(v) for v in arr.tolist()], dtype=np.float64)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
    if not allow_missing and np.isnan(out).any():
        raise ValueError(f"{name} contains missing values; drop those rows first")
    return out


def as_float(values: object, name: str, *, allow_missing: bool = True) -> FloatArray:
    """Numbers as a float array (NaN where missing, if allowed); ValueError for text.

    >>> as_float([1, "2.5", None], "score").tolist()
    [1.0, 2.5, nan]
    """
    arr = as_1d(values, name)
    if arr.dtype.kind in "biuf":
        out = arr.astype(np.float64)
    else:
        cells = arr.tolist()
        bad = [v for v in cells if not _is_number(v)]
        if bad:
            raise ValueError(f"{name} must be numeric, got {bad[0]!r}")
        out = np.array([math.nan if _missing(v) else float(v) for v in cells], dtype=np.float64)
    if np.isinf(out).any():
        raise ValueError(f"{name} contains an infinite value")
    if not allow_missing and np.isnan(out).any():
        raise ValueError(f"{name} contains missing values; drop those rows first")
    return out


def _is_number(value: Any) -> bool:
    if _missing(value):
        return True
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True
