"""Connecting to a Ray cluster (the Ray engines of judging and of rule checks)."""

from __future__ import annotations

import logging
import os
from typing import Any

from trajudge.core import InputError

RAY_EXTRA_HINT = "pip install 'trajudge[ray]'"


def import_ray() -> Any:
    """The ``ray`` module, or an :class:`InputError` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise InputError(
            "--engine ray", reason=f"the Ray engine needs ray: {RAY_EXTRA_HINT}"
        ) from None
    return ray


def connect(address: str | None) -> Any:
    """Connect to the cluster at ``address`` (``auto``, ``ray://host:10001``; None: the one
    in RAY_ADDRESS, else a new local cluster), unless this process is connected already;
    returns the ``ray`` module."""
    ray = import_ray()
    if not ray.is_initialized():
        options: dict[str, Any] = {"logging_level": logging.WARNING}
        if address is None and not os.environ.get("RAY_ADDRESS"):
            options["include_dashboard"] = False
        ray.init(address=address, **options)
    return ray
