"""Rule results: each trajectory's rule report, replaced as a whole, and the gates read back."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from sqlalchemy import Engine, delete, insert, select

from trajudge.core import canonical_json
from trajudge.store._schema import rule_results
from trajudge.store.labels._labels import _IN_CHUNK


class RulesMixin:
    """The rule results of a dataset (``trajudge rules`` writes them, the judges' gates and
    the report read them)."""

    sql_engine: Engine
    sql_write_engine: Engine

    def save_rule_results(self, dataset: str, rows: Iterable[Mapping[str, Any]]) -> int:
        """Replace the stored rule results for the given trajectories, in one transaction.

        Each row has ``trajectory_id``, ``spec_sha256``, ``gates_passed``, ``score`` and
        ``data`` (the report as a JSON-able dict).
        """
        values = {
            str(row["trajectory_id"]): {
                "dataset": dataset,
                "trajectory_id": str(row["trajectory_id"]),
                "spec_sha256": row["spec_sha256"],
                "gates_passed": bool(row["gates_passed"]),
                "score": row.get("score"),
                "data": canonical_json(row["data"]),
            }
            for row in rows
        }  # a trajectory given twice keeps its last row, as one update after another would
        ids = list(values)
        with self.sql_write_engine.begin() as conn:
            for start in range(0, len(ids), _IN_CHUNK):
                chunk = ids[start : start + _IN_CHUNK]
                conn.execute(
                    delete(rule_results).where(
                        rule_results.c.dataset == dataset, rule_results.c.trajectory_id.in_(chunk)
                    )
                )
                conn.execute(insert(rule_results), [values[i] for i in chunk])
        return len(ids)

    def gate_results(self, dataset: str, gates: Collection[str] = ("gate",)) -> dict[str, bool]:
        """Whether every gate passed, by trajectory id, for the trajectories with a stored rule
        result. ``gates``: the severities that gate (``trajudge.yaml``'s ``gates``, what skips
        the judges); the default is the stored ``gates_passed`` (severity ``gate``), read
        without the reports; any other list is read from the stored checks' severities."""
        if set(gates) == {"gate"}:
            query = select(rule_results.c.trajectory_id, rule_results.c.gates_passed).where(
                rule_results.c.dataset == dataset
            )
            with self.sql_engine.connect() as conn:
                return {r.trajectory_id: bool(r.gates_passed) for r in conn.execute(query)}
        wanted = set(gates)
        query = select(rule_results.c.trajectory_id, rule_results.c.data).where(
            rule_results.c.dataset == dataset
        )
        out: dict[str, bool] = {}
        with self.sql_engine.connect() as conn:
            for r in conn.execute(query):
                checks = json.loads(r.data)["results"]
                out[r.trajectory_id] = not any(
                    c["severity"] in wanted and not c["passed"] for c in checks
                )
        return out

    def rule_results(self, dataset: str) -> dict[str, dict[str, Any]]:
        """Stored rule results by trajectory id (each: gates_passed, score, spec_sha256, data)."""
        with self.sql_engine.connect() as conn:
            rows = conn.execute(select(rule_results).where(rule_results.c.dataset == dataset))
            return {
                r.trajectory_id: {
                    "gates_passed": r.gates_passed,
                    "score": r.score,
                    "spec_sha256": r.spec_sha256,
                    "data": json.loads(r.data),
                }
                for r in rows
            }
