"""One judge call as a record: what the ``judgments`` table stores."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal

Order = Literal["ab", "ba"]


@dataclass
class Judgment:
    """One judge call, as stored in the ``judgments`` table (plus ``other_score``).

    ``score`` is on the rubric's scale from ``trajectory_id``'s side; ``verdict`` is
    ``pass``/``fail`` on a binary or ordinal scale, the category on a nominal one, and
    ``A``/``B``/``tie`` in pairwise mode, in the original numbering (A = ``trajectory_id``,
    B = ``other_id``; order ``ba`` mapped back). Categorical verdicts have no score. Both are
    None when ``error`` is set. (Pairwise rows stored before verdict kinds say ``win`` /
    ``loss`` for A / B: :func:`trajudge.calibration.pairwise_verdict` reads both.)
    ``other_score`` is the reference's score (reference mode).
    ``score_probs`` (``{value: probability}`` over the allowed scores, or categories) and
    ``expected_score`` (Σ p·score, numeric scales only) come from token log-probabilities
    when the judge asks for them (``logprobs``) and the provider returns them.
    ``config_sha256`` and ``judge_config`` are the judge configuration that made the call
    (see :attr:`trajudge.judges.Judge.config`): part of the key, so a resumed run never reuses
    a judgment made with another model, endpoint or parameters.
    """

    trajectory_id: str
    other_id: str | None
    judge: str
    rubric_id: str
    rubric_version: str
    model: str
    mode: str
    order: Order
    sample: int
    score: float | None = None
    verdict: str | None = None
    reasoning: str | None = None
    criteria: dict[str, float | str] | None = None
    raw: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    latency_s: float | None = None
    cache_hit: bool = False
    error: str | None = None
    request_sha256: str | None = None
    config_sha256: str | None = None
    judge_config: str | None = None
    other_score: float | None = None
    expected_score: float | None = None
    score_probs: dict[str, float] | None = None

    @property
    def key(self) -> tuple[Any, ...]:
        """The store's judgment key (see ``Store.judgment_keys``)."""
        return (
            self.trajectory_id,
            self.other_id,
            self.judge,
            self.config_sha256,
            self.rubric_version,
            self.order,
            self.sample,
        )

    def to_row(self) -> dict[str, Any]:
        """The row for the ``judgments`` table (every field but ``other_score``).

        A shallow copy (``dataclasses.asdict`` deep-copies, at ten times the cost); the one
        mutable field, ``criteria``, is copied.
        """
        row = {f.name: getattr(self, f.name) for f in _ROW_FIELDS}
        if self.criteria is not None:
            row["criteria"] = dict(self.criteria)
        if self.score_probs is not None:
            row["score_probs"] = dict(self.score_probs)
        return row


_ROW_FIELDS = [f for f in fields(Judgment) if f.name != "other_score"]
