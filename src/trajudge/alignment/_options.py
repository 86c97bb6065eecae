"""What ``trajudge align`` (and the ``align:`` block of ``trajudge.yaml``) may set."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from trajudge.evalset._defaults import DEV_SHARE, SALT

Method = Literal["threshold", "calibrate", "fewshot", "stack"]
METHODS: tuple[Method, ...] = ("threshold", "calibrate", "fewshot", "stack")
#: The methods an aligned judge's verdicts can come from (``stack`` is reported only).
USABLE: tuple[Method, ...] = ("calibrate", "threshold", "fewshot")


class AlignOptions(BaseModel):
    """How to align one judge (``trajudge align`` options; the ``align:`` block of the config).

    ``judge`` is the judge whose stored judgments are aligned; the aligned judge is saved as
    ``name`` (default ``<judge>-aligned``). ``methods`` run in this order, each compared with
    the judge as it stands on the holdout; the aligned judge's verdicts come from the method
    ``use`` names, by default the best of ``calibrate`` and ``threshold`` by cross-validated
    kappa on dev (``fewshot`` when it is the only one run), and nothing is saved when dev says
    that method is worse than the judge or its threshold is degenerate
    (:mod:`trajudge.alignment._choice`). ``stack`` is optional and never used for verdicts:
    the report shows its gain and weights.

    Dev and holdout: tasks are split by :func:`trajudge.evalset.split_of` with ``dev_share``
    and ``salt`` (whole tasks per side). ``labels`` is the label source (``human`` or a
    reference source such as ``env_reward``; default: the config's ``labels.source``).

    ``threshold`` (its threshold) and ``calibrate`` (``calibration``: isotonic or platt) fit on
    ``feature`` (the mean score, or the mean expected score from token probabilities; ``auto``
    takes the expected score when every judgment of the judge has one); ``stack`` adds it.
    ``fewshot``: at most ``max_examples`` dev disagreements become examples (each threshold to
    ``example_chars``), the new rubric is written to ``rubric_out``, and the holdout is scored
    again with it: at most ``max_holdout_tasks`` labelled holdout tasks (None: all), since
    every one costs new judge calls. Trust or escalate: the confidence threshold keeps agreement
    >= ``target`` with risk ``alpha``.
    """

    model_config = ConfigDict(extra="forbid")

    judge: str = Field(min_length=1)
    name: str | None = Field(
        default=None, min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_.:@/-]+$"
    )
    methods: list[Method] = Field(default_factory=lambda: list[Method](["threshold", "calibrate"]))
    use: Method | None = None
    labels: str | None = None
    dev_share: float = Field(default=DEV_SHARE, gt=0, lt=1)
    salt: str = SALT
    calibration: Literal["isotonic", "platt"] = "isotonic"
    feature: Literal["auto", "score", "expected_score"] = "auto"
    target: float = Field(default=0.9, gt=0, lt=1)
    alpha: float = Field(default=0.05, gt=0, lt=1)
    max_examples: int = Field(default=4, ge=1, le=20)
    example_chars: int = Field(default=1200, ge=200, le=2000)
    max_holdout_tasks: int | None = Field(default=None, ge=1)
    rubric_out: Path = Path("aligned-rubrics")

    @model_validator(mode="after")
    def _check(self) -> AlignOptions:
        if not self.methods:
            raise ValueError("give at least one method (threshold, calibrate, fewshot, stack)")
        self.methods = list(dict.fromkeys(self.methods))
        if self.use == "stack":
            raise ValueError(
                "use: stack is never saved: an aligned judge's verdict is a threshold on the "
                "score, and the stack's needs every item's rule checks and spread too (its figures "
                "are reported); use threshold or calibrate"
            )
        if self.use is not None and self.use not in self.methods:
            raise ValueError(f"use: {self.use!r} is not among the methods {self.methods}")
        if not any(m in USABLE for m in self.methods):
            raise ValueError("stack alone gives no aligned judge: add threshold or calibrate")
        return self

    @property
    def aligned_name(self) -> str:
        return self.name or f"{self.judge}-aligned"
