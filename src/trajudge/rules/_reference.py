"""Reference match: the actual calls against the expected ones, in six modes.

A call matches an expected call when it succeeded (``ok`` true), the tool is the same and, if
the expected call gives arguments, the canonical JSON of the arguments is equal (numbers by
value, so 250 == 250.0). A failed call satisfies no expected call, as it satisfies no
``required_tools`` entry: the action it asked for did not happen. It is still a call the
agent made, so it counts in ``len(act)`` (an ``exact`` or ``any_order`` reference with a
failed retry in the run does not pass).

========== ===================================================== ==========================
mode       passes when                                           score
========== ===================================================== ==========================
exact      actual == reference, position by position             LCS / max(len(ref), len(act))
in_order   reference is a subsequence of actual (extras allowed)  LCS / len(ref)
any_order  same multiset of calls                                 matched / max(len(ref), len(act))
subset     every actual call is in the reference (multiset)       matched / len(act) (1 if none)
superset   every reference call was made, any order               matched / len(ref)
prefix     actual begins with the reference                       matching prefix / len(ref)
========== ===================================================== ==========================

``matched`` is the size of a maximum one-to-one matching between actual and expected calls.
Expected calls with arguments accept exactly one key, wildcards (``args=None``) accept every
call of their tool, so matching exact keys first and wildcards second is optimal (a wildcard
can take any call an exact expectation could); tests cross-check it against
``scipy.optimize.linear_sum_assignment``.
"""

from __future__ import annotations

from typing import Any

from trajudge.rules._compile import CompiledSpec, Prepared
from trajudge.rules._models import CheckResult, result
from trajudge.rules._values import describe_diffs, diff_values, show


def _compatible(c: CompiledSpec, p: Prepared, i: int, j: int) -> bool:
    if c.ref_tools[i] != p.tools[j] or not p.steps[j].ok:
        return False
    key = c.ref_keys[i]
    return key is None or key == p.key(j)


def multiset_pairs(c: CompiledSpec, p: Prepared) -> list[tuple[int, int]]:
    """A maximum matching (reference index, actual index), earliest calls first."""
    memo = p.memo.get("multiset")
    if memo is not None:
        return memo  # type: ignore[no-any-return]
    wanted = c.ref_tool_set
    # candidate calls per (tool, key), reversed so that pop() yields the earliest
    by_key: dict[tuple[str, str], list[int]] = {}
    steps = p.steps
    for j in range(len(p.tools) - 1, -1, -1):
        tool = p.tools[j]
        if tool in wanted and steps[j].ok:
            by_key.setdefault((tool, p.key(j)), []).append(j)
    pairs: list[tuple[int, int]] = []
    used: set[int] = set()
    wild: list[int] = []
    for i, key in enumerate(c.ref_keys):
        if key is None:
            wild.append(i)
            continue
        q = by_key.get((c.ref_tools[i], key))
        if q:
            j = q.pop()
            pairs.append((i, j))
            used.add(j)
    if wild:
        by_tool: dict[str, list[int]] = {}
        for j in range(len(p.tools) - 1, -1, -1):
            tool = p.tools[j]
            if j not in used and tool in wanted and steps[j].ok:
                by_tool.setdefault(tool, []).append(j)
        for i in wild:
            q = by_tool.get(c.ref_tools[i])
            if q:
                pairs.append((i, q.pop()))
    pairs.sort()
    p.memo["multiset"] = pairs
    return pairs


def lcs_pairs(c: CompiledSpec, p: Prepared) -> list[tuple[int, int]]:
    """A longest common subsequence of reference and actual calls, as aligned index pairs.

    Only successful calls of a tool named in the reference can take part, so the others are
    dropped first; and when the reference is a subsequence (the common case for a passing run) the
    greedy leftmost scan already finds it, which is optimal for a subsequence test.
    """
    ref_tools, ref_keys = c.ref_tools, c.ref_keys
    tools, key = p.tools, p.key
    steps = p.steps
    idx = [j for j, t in enumerate(tools) if t in c.ref_tool_set and steps[j].ok]
    n = len(ref_tools)
    pairs: list[tuple[int, int]] = []
    i = 0
    for j in idx:
        if i < n and ref_tools[i] == tools[j] and (ref_keys[i] is None or ref_keys[i] == key(j)):
            pairs.append((i, j))
            i += 1
    if i == n:
        return pairs
    m = len(idx)
    compat = [
        [ref_tools[i] == tools[j] and (ref_keys[i] is None or ref_keys[i] == key(j)) for j in idx]
        for i in range(n)
    ]
    table = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below, ok = table[i], table[i + 1], compat[i]
        for k in range(m - 1, -1, -1):
            row[k] = below[k + 1] + 1 if ok[k] else max(below[k], row[k + 1])
    pairs = []
    i = k = 0
    while i < n and k < m:
        if compat[i][k] and table[i][k] == table[i + 1][k + 1] + 1:
            pairs.append((i, idx[k]))
            i += 1
            k += 1
        elif table[i + 1][k] >= table[i][k + 1]:
            i += 1
        else:
            k += 1
    return pairs


def _prefix_len(c: CompiledSpec, p: Prepared) -> int:
    k = 0
    while k < len(c.ref_tools) and k < len(p.tools) and _compatible(c, p, k, k):
        k += 1
    return k


def _missing_info(c: CompiledSpec, p: Prepared, i: int) -> dict[str, Any]:
    """What is known about an expected call that was not matched: the closest actual call."""
    tool = c.ref_tools[i]
    info: dict[str, Any] = {"index": i, "tool": tool}
    candidates = [j for j, t in enumerate(p.tools) if t == tool]
    expected = c.ref_args[i]
    if not candidates or expected is None:
        info["closest_step"] = candidates[0] if candidates else None
        info["diffs"] = []
        info["failed"] = bool(candidates) and not p.steps[candidates[0]].ok
        return info
    best: tuple[int, int, list[tuple[str, Any, Any]]] | None = None
    for j in candidates:
        diffs = diff_values(expected, p.steps[j].args)
        if best is None or len(diffs) < best[0]:
            best = (len(diffs), j, diffs)
    assert best is not None
    info["closest_step"] = best[1]
    info["failed"] = not p.steps[best[1]].ok  # the closest call may be one that failed
    info["diffs"] = [{"field": f, "expected": show(e), "actual": show(a)} for f, e, a in best[2]]
    info["text"] = describe_diffs(best[2])
    return info


def _describe_missing(info: dict[str, Any]) -> str:
    if info["closest_step"] is None:
        return f"{info['tool']} (never called)"
    if info.get("failed"):
        what = f": {info['text']}" if info.get("text") else ""
        return f"{info['tool']} (closest: step {info['closest_step']}, which failed{what})"
    if info.get("text"):
        return f"{info['tool']} (closest: step {info['closest_step']}: {info['text']})"
    return f"{info['tool']} (not at this position)"


def check_reference(p: Prepared, c: CompiledSpec) -> CheckResult | None:
    """Match the actual calls against ``reference`` in ``match_mode`` (see the module doc)."""
    ref = c.spec.reference
    if not ref:
        return None
    mode = c.spec.match_mode
    nr, na = len(ref), len(p.tools)
    if mode in ("exact", "in_order"):
        pairs = lcs_pairs(c, p)
        m = len(pairs)
        if mode == "exact":
            passed = m == nr == na
            score = m / max(nr, na)
        else:
            passed = m == nr
            score = m / nr
    elif mode == "prefix":
        m = _prefix_len(c, p)
        pairs = [(k, k) for k in range(m)]
        passed = m == nr
        score = m / nr
    else:
        pairs = multiset_pairs(c, p)
        m = len(pairs)
        if mode == "any_order":
            passed = m == nr == na
            score = m / max(nr, na)
        elif mode == "subset":
            passed = m == na
            score = 1.0 if na == 0 else m / na
        else:  # superset
            passed = m == nr
            score = m / nr
    data: dict[str, Any] = {"mode": mode, "matched": m, "expected": nr, "actual": na}
    if passed:
        return result("reference_match", True, score, "", data, c.severity("reference_match"))
    parts: list[str] = []
    if mode != "subset":
        done = {i for i, _ in pairs}
        # the closest call is looked up for the first few missing calls (those in the detail)
        missing = [
            _missing_info(c, p, i) if k < 3 else {"index": i, "tool": c.ref_tools[i]}
            for k, i in enumerate(i for i in range(nr) if i not in done)
        ]
        if missing:
            data["missing"] = missing
            parts.append("missing " + "; ".join(_describe_missing(x) for x in missing[:3]))
            if len(missing) > 3:
                parts.append(f"(+{len(missing) - 3} more missing)")
    if mode in ("exact", "any_order", "subset"):
        used = {j for _, j in pairs}
        extra = [j for j in range(na) if j not in used]
        if extra:
            data["extra"] = extra
            shown = ", ".join(f"{p.tools[j]}@{j}" for j in extra[:5])
            parts.append(f"unexpected {shown}" + (" …" if len(extra) > 5 else ""))
    if mode == "prefix" and na < nr and not parts:
        parts.append(f"only {na} calls for a {nr}-call prefix")
    detail = f"{mode}: matched {m}/{nr}; " + "; ".join(parts)
    return result("reference_match", False, score, detail, data, c.severity("reference_match"))


def check_tool_f1(p: Prepared, c: CompiledSpec) -> CheckResult | None:
    """Precision, recall and F1 of the actual calls against the reference (as multisets)."""
    if not c.spec.reference:
        return None
    nr, na = len(c.ref_tools), len(p.tools)
    m = len(multiset_pairs(c, p))
    precision = m / na if na else None
    recall = m / nr
    f1 = 0.0 if m == 0 or precision is None else 2 * precision * recall / (precision + recall)
    prec_text = "n/a" if precision is None else f"{precision:.3f}"
    return result(
        "tool_f1",
        m == nr == na,
        f1,
        f"precision {prec_text}, recall {recall:.3f}, F1 {f1:.3f}",
        {"matched": m, "precision": precision, "recall": recall, "f1": f1},
        c.severity("tool_f1"),
    )


def check_step_accuracy(p: Prepared, c: CompiledSpec) -> CheckResult | None:
    """Position-aligned accuracy: share of i < len(ref) whose actual call i has the expected
    tool (``tool_accuracy``) and the expected tool and arguments (``param_accuracy``, the score).
    """
    if not c.spec.reference:
        return None
    nr, na = len(c.ref_tools), len(p.tools)
    n = min(nr, na)
    tool_hits = sum(1 for i in range(n) if c.ref_tools[i] == p.tools[i])
    param_hits = sum(1 for i in range(n) if _compatible(c, p, i, i))
    tool_acc, param_acc = tool_hits / nr, param_hits / nr
    return result(
        "step_accuracy",
        param_hits == nr,
        param_acc,
        f"tool accuracy {tool_acc:.3f}, parameter accuracy {param_acc:.3f}",
        {"tool_accuracy": tool_acc, "param_accuracy": param_acc},
        c.severity("step_accuracy"),
    )


def check_step_count(p: Prepared, c: CompiledSpec) -> CheckResult | None:
    """Steps taken against the reference length: passes when the ratio is at most
    ``max_step_ratio``; score = min(steps, ref) / max(steps, ref).
    """
    if not c.spec.reference:
        return None
    nr, na = len(c.ref_tools), len(p.tools)
    ratio = na / nr
    ok = ratio <= c.spec.max_step_ratio
    return result(
        "step_count",
        ok,
        min(na, nr) / max(na, nr),
        f"{na} steps for a {nr}-call reference (ratio {ratio:.2f}, limit {c.spec.max_step_ratio})",
        {"steps": na, "reference": nr, "ratio": ratio},
        c.severity("step_count"),
    )
