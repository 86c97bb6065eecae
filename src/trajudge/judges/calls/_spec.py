"""JudgeSpec: how to build a judge (the ``judges:`` entries of ``trajudge.yaml``).

Also the embedded model's measured defaults (:data:`LOCAL_DEFAULTS`), the reasoning cap a
spec implies (:func:`reasoning_cap`) and the ``--judge NAME=MODEL:RUBRIC`` parser.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from trajudge.core import InputError, pydantic_field
from trajudge.judges.calls._local import LOCAL_PREFIX
from trajudge.rubrics._rubric import Rubric

_ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"

#: Defaults of the embedded ``local/`` model (gemma-3-270m through xllamacpp): generating a
#: token costs far more than reading one, so ``max_tokens`` (which caps the reasoning) is what
#: makes a call slow, and a timeout of 3x the slowest call measured; the figures are in README,
#: Benchmarks (``benchmarks/local_judge_latency.py``).
LOCAL_DEFAULTS: dict[str, Any] = {"timeout": 1800.0, "max_tokens": 160}


class VertexSpec(BaseModel):
    """Where a ``vertex_ai/`` judge runs: its Google Cloud ``project`` and ``location`` (litellm
    otherwise reads ``VERTEXAI_PROJECT`` / ``VERTEXAI_LOCATION``, or the credentials' project),
    and the Cloud Storage ``bucket`` (``name`` or ``name/prefix``) that ``--engine batch``
    stages batch input and output in (otherwise ``GCS_BUCKET_NAME``). Credentials are Google's
    Application Default Credentials (``GOOGLE_APPLICATION_CREDENTIALS``), never written here."""

    model_config = ConfigDict(extra="forbid")

    project: str | None = Field(default=None, min_length=1)
    location: str | None = Field(default=None, min_length=1)
    bucket: str | None = Field(default=None, min_length=1)


class JudgeSpec(BaseModel):
    """How to build a judge: the ``judges:`` entries of ``trajudge.yaml`` use these fields.

    ``api_key_env`` names an environment variable holding the key; keys are never stored.
    ``prompt_budget`` is the prompt size (tokens, estimated) that trajectory outputs are
    elided to fit; by default 12,000, and for a local model what its server's slot holds
    besides ``max_tokens`` (never more, see :func:`trajudge.judges.calls._local.slot_budget`).
    ``reference`` (reference mode) says where the reference comes from: ``passing`` (a
    passing trial of the same task, else the spec's expected calls) or ``spec`` (always the
    task spec's expected calls: choosing a reference by outcome tells the judge something
    about the label, which matters when the judge is calibrated against that outcome).
    ``max_pairs`` (pairwise mode) judges at most that many pairs of trials per task, a
    sample drawn from the task's id and ``seed`` (the same on every run, so that a batch
    resumes the same pairs); default: every pair.
    ``max_reasoning_chars`` caps the verdict's reasoning, lowered when needed so that the whole
    verdict fits in ``max_tokens`` (see :func:`reasoning_cap`). ``extra_headers`` maps HTTP
    header names to environment variables holding their values (e.g. ``api-key:
    AZURE_API_KEY`` for a gateway that wants its key in a header): like ``api_key_env``, a
    value is read when a call is made, never written anywhere, and redacted from every error
    and log line. A ``local/`` model runs embedded (no ``api_base``); its ``timeout`` and
    ``max_tokens`` default to :data:`LOCAL_DEFAULTS`, measured on a loaded 2-core machine.
    ``logprobs`` asks the provider for token log-probabilities, from which each judgment
    records the probability of every allowed score (or category) and the expected score
    (G-Eval style; see :mod:`trajudge.judges.calls._logprobs`); where the provider returns none,
    the judge says so once and leaves them empty. ``vertex`` says where a ``vertex_ai/``
    model runs (:class:`VertexSpec`).
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_.:@/-]+$")
    model: str = Field(default="local/gemma-3-270m", min_length=1)
    rubric: str = "trajectory_reasonableness"
    temperature: float = Field(default=0.0, ge=0, le=2)
    samples: int = Field(default=1, ge=1, le=50)
    swap: bool = True
    max_tokens: int = Field(default=512, ge=16)
    api_base: str | None = None
    api_key_env: str | None = Field(default=None, pattern=_ENV_NAME)
    extra_headers: dict[str, str] = Field(default_factory=dict)
    timeout: float = Field(default=120.0, gt=0)
    concurrency: int = Field(default=4, ge=1)
    rpm: float | None = Field(default=None, gt=0)
    max_retries: int = Field(default=4, ge=0)
    retry_backoff_s: float = Field(default=1.0, ge=0)
    prompt_budget: int | None = Field(default=None, ge=256)
    max_reasoning_chars: int = Field(default=800, ge=20)
    seed: int | None = None
    mode: str | None = None
    reference: Literal["passing", "spec"] = "passing"
    max_pairs: int | None = Field(default=None, ge=1)
    logprobs: bool = False
    vertex: VertexSpec | None = None

    @model_validator(mode="before")
    @classmethod
    def _local_defaults(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        model = data.get("model", cls.model_fields["model"].default)
        if str(model).startswith(LOCAL_PREFIX):
            data = {**LOCAL_DEFAULTS, **data}
        return data

    @model_validator(mode="after")
    def _check(self) -> JudgeSpec:
        if self.model.startswith(LOCAL_PREFIX) and self.api_base is not None:
            raise ValueError(
                f"api_base does not apply to {self.model!r}, which runs embedded; for a server "
                "of your own use model 'openai/<name>' with api_base"
            )
        if self.vertex is not None and not self.model.startswith("vertex_ai/"):
            raise ValueError(
                f"vertex (project, location, bucket) applies to vertex_ai/ models, not "
                f"{self.model!r}"
            )
        for header, env in self.extra_headers.items():
            if not re.fullmatch(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+", header):
                raise ValueError(f"extra_headers: {header!r} is not an HTTP header name")
            if not re.fullmatch(_ENV_NAME, env):
                raise ValueError(
                    f"extra_headers: {header}: {env!r} is not an environment variable name "
                    "(header values are read from the environment, never written in a file)"
                )
        return self


def vertex_params(spec: JudgeSpec) -> dict[str, str]:
    """The litellm arguments of ``spec.vertex``'s project and location (none set: none)."""
    where = spec.vertex
    if where is None:
        return {}
    pairs = (("vertex_project", where.project), ("vertex_location", where.location))
    return {name: value for name, value in pairs if value is not None}


def reasoning_cap(spec: JudgeSpec, rubric: Rubric) -> int:
    """The reasoning length cap: ``max_reasoning_chars``, lowered so the verdict fits.

    A verdict cut off by ``max_tokens`` never parses, so the cap leaves room for the score
    fields (about 12 tokens each, JSON punctuation and whitespace included) and counts 2
    characters per reasoning token (English prose runs 3-4).
    """
    per_slot = 1 + len(rubric.criteria)
    fields = 2 * per_slot if rubric.mode == "reference" else per_slot
    room = spec.max_tokens - 24 - 12 * fields
    return max(20, min(spec.max_reasoning_chars, 2 * room))


def parse_judge_arg(text: str) -> JudgeSpec:
    """Parse ``NAME=MODEL:RUBRIC``; the rubric is split off the LAST colon.

    >>> s = parse_judge_arg("big=ollama/llama3:8b:trajectory_reasonableness")
    >>> (s.name, s.model, s.rubric)
    ('big', 'ollama/llama3:8b', 'trajectory_reasonableness')
    """
    name, sep, rest = text.partition("=")
    model, colon, rubric = rest.rpartition(":")
    if not sep or not colon or not name.strip() or not model.strip() or not rubric.strip():
        raise InputError("--judge", field=text, reason="expected NAME=MODEL:RUBRIC")
    try:
        return JudgeSpec(name=name.strip(), model=model.strip(), rubric=rubric.strip())
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(
            "--judge", field=pydantic_field(tuple(err["loc"])), reason=err["msg"]
        ) from None
