"""Judges: rubrics, the LLM client, caching, batch scoring and the embedded local model.

Importing this package is cheap: litellm and instructor are imported on the first LLM call.
"""

from trajudge.judges._aggregate import (
    Aggregate,
    JuryVerdict,
    aggregate_frame,
    aggregate_judgments,
    aggregate_jury,
)
from trajudge.judges._batch import (
    BatchProgress,
    BatchSummary,
    ascore_dataset,
    prepare_items,
    score_dataset,
)
from trajudge.judges._cache import DEFAULT_CACHE_PATH, CachedResponse, ResponseCache, request_key
from trajudge.judges._call import PreparedCall, finish
from trajudge.judges._client import CallResult, LLMClient, RateLimiter, choose_mode
from trajudge.judges._engine import Engine, LocalEngine
from trajudge.judges._fewshot import (
    EXAMPLE_CHARS,
    example_text,
    rubric_yaml,
    with_examples,
    write_rubric,
)
from trajudge.judges._judge import Judge, JudgeResult, build_judges, run_sync
from trajudge.judges._judgment import Judgment, Order
from trajudge.judges._local import (
    LOCAL_MODELS,
    LOCAL_PREFIX,
    LocalModelServer,
    LocalServerError,
    shared_local_server,
    stop_shared_servers,
)
from trajudge.judges._plan import BatchPlan, PlanItem, choose_reference, plan_batch, plan_items
from trajudge.judges._prompt import DEFAULT_TEMPLATES, SYSTEM_PROMPT, Prompt, Shown, build_prompt
from trajudge.judges._render import (
    DELIMITER_TAGS,
    elide,
    elision_marker,
    estimate_tokens,
    neutralise,
    render_trajectory,
    spec_reference,
)
from trajudge.judges._rubric import (
    Criterion,
    Example,
    Rubric,
    RubricMode,
    Scale,
    ScaleLevel,
    available_rubrics,
    builtin_rubric_dir,
    check_rubric,
    load_rubric,
    load_rubric_file,
    parse_rubric,
)
from trajudge.judges._spec import LOCAL_DEFAULTS, JudgeSpec, parse_judge_arg, reasoning_cap
from trajudge.judges._verdict import PREFERENCE_SCORE, response_schema, verdict_model
from trajudge.judges._writer import FLUSH_INTERVAL_S, FLUSH_MAX_ROWS, JudgmentWriter

__all__ = [
    "DEFAULT_CACHE_PATH",
    "DEFAULT_TEMPLATES",
    "DELIMITER_TAGS",
    "EXAMPLE_CHARS",
    "FLUSH_INTERVAL_S",
    "FLUSH_MAX_ROWS",
    "LOCAL_DEFAULTS",
    "LOCAL_MODELS",
    "LOCAL_PREFIX",
    "PREFERENCE_SCORE",
    "SYSTEM_PROMPT",
    "Aggregate",
    "BatchPlan",
    "BatchProgress",
    "BatchSummary",
    "CachedResponse",
    "CallResult",
    "Criterion",
    "Engine",
    "Example",
    "Judge",
    "JudgeResult",
    "JudgeSpec",
    "Judgment",
    "JudgmentWriter",
    "JuryVerdict",
    "LLMClient",
    "LocalEngine",
    "LocalModelServer",
    "LocalServerError",
    "Order",
    "PlanItem",
    "PreparedCall",
    "Prompt",
    "RateLimiter",
    "ResponseCache",
    "Rubric",
    "RubricMode",
    "Scale",
    "ScaleLevel",
    "Shown",
    "aggregate_frame",
    "aggregate_judgments",
    "aggregate_jury",
    "ascore_dataset",
    "available_rubrics",
    "build_judges",
    "build_prompt",
    "builtin_rubric_dir",
    "check_rubric",
    "choose_mode",
    "choose_reference",
    "elide",
    "elision_marker",
    "estimate_tokens",
    "example_text",
    "finish",
    "load_rubric",
    "load_rubric_file",
    "neutralise",
    "parse_judge_arg",
    "parse_rubric",
    "plan_batch",
    "plan_items",
    "prepare_items",
    "reasoning_cap",
    "render_trajectory",
    "request_key",
    "response_schema",
    "rubric_yaml",
    "run_sync",
    "score_dataset",
    "shared_local_server",
    "spec_reference",
    "stop_shared_servers",
    "verdict_model",
    "with_examples",
    "write_rubric",
]
