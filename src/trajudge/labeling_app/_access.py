"""Who may see what: blind labeling, enforced where the pages read the store.

An annotator labels blind. The judges' scores and reasoning and the other annotators' labels
of an item reach a page only after the annotator has given that item a label of their own
under the app's rubric. A skip does not count: otherwise skipping would be a way to look
first and label afterwards. An adjudicator (an account with the role adjudicator or lead,
``trajudge annotators add NAME --role adjudicator``) sees every item and is the only one who
may save an adjudication. The Label page shows judge verdicts only when the
server was started with ``--show-judges``.

Under a pairwise rubric the same rule holds per pair: a pair's judgments and the other labels
of it (on the pair page and the Review page) only after the viewer labeled that pair, every
pair for an adjudicator, who alone adjudicates; the Export page gives pair labels the same way.

The pages read labels and judgments only through these functions. Each one takes the viewer
(or the viewer's name) and applies the rule itself, so a page cannot show what it was never
given. (The queue and the progress bars read only who labeled which item, never a value.)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from trajudge.judges.prompts._render import spec_reference
from trajudge.labeling_app._config import AppConfig
from trajudge.store import Store, labels_export_frame, pair_labels_export_frame
from trajudge.trajectories import Trajectory


@dataclass(frozen=True)
class Viewer:
    """The signed-in annotator, whether they adjudicate (role adjudicator or lead) and whether
    they lead the session (role lead: the lead's page)."""

    name: str
    adjudicator: bool = False
    lead: bool = False


class NotAllowed(PermissionError):
    """The viewer may not see or do this (yet): label the item first, or ask an adjudicator."""


def own_label(
    store: Store, dataset: str, tid: str, rubric_id: str, name: str
) -> dict[str, Any] | None:
    """The viewer's own label (or skip) of one item, None when there is none yet."""
    for row in store.item_labels(dataset, tid, rubric_id):
        if row["annotator"] == name and not row["adjudication"]:
            return row
    return None


def labeled_by(labels: pd.DataFrame, name: str) -> set[str]:
    """Items ``name`` gave a label (not a skip, not an adjudication) in a labels frame."""
    if labels.empty:
        return set()
    own = (
        (labels["annotator"] == name)
        & ~labels["adjudication"].astype(bool)
        & ~labels["skipped"].astype(bool)
    )
    return set(labels.loc[own, "trajectory_id"].astype(str))


# A reference judge shown a task spec's expected calls stores other_id "spec:<task>" (see
# trajudge.judges.spec_reference): no trajectory, so nothing another annotator labels.
SPEC_REFERENCE = "spec:"


def no_partner(other_id: Any) -> bool:
    """Whether a judgment speaks about no trajectory but its own: pointwise (no other), or a
    reference judge's score against a task spec's expected calls."""
    return other_id is None or (isinstance(other_id, str) and other_id.startswith(SPEC_REFERENCE))


def _visible_judgments(
    judgments: pd.DataFrame, rubric_id: str, ids: set[str] | None
) -> pd.DataFrame:
    """The rubric's judgments whose trajectories (and pair partner or reference trajectory)
    are all in ``ids``."""
    if judgments.empty:
        return judgments
    keep = judgments["rubric_id"] == rubric_id
    if ids is not None:
        other = judgments["other_id"]
        alone = other.isna() | other.astype(str).str.startswith(SPEC_REFERENCE)
        keep &= judgments["trajectory_id"].astype(str).isin(ids)
        keep &= alone | other.astype(str).isin(ids)
    return judgments[keep].reset_index(drop=True)


@dataclass(frozen=True)
class ReviewData:
    """What the Review page may show the viewer: human labels (adjudications included) and
    judgments of the rubric, on the items the viewer may review."""

    labels: pd.DataFrame
    judgments: pd.DataFrame


def review_data(store: Store, dataset: str, rubric_id: str, viewer: Viewer) -> ReviewData:
    """Labels and judgments for the Review tables: every item for an adjudicator, else only
    the items the viewer has labeled."""
    labels = store.labels_frame(dataset, rubric_id=rubric_id, source="human")
    ids = None if viewer.adjudicator else labeled_by(labels, viewer.name)
    if ids is not None:
        labels = labels[labels["trajectory_id"].astype(str).isin(ids)].reset_index(drop=True)
    judgments = _visible_judgments(store.judgments_frame(dataset), rubric_id, ids)
    return ReviewData(labels, judgments)


def _labeled_ids(
    store: Store, dataset: str, rubric_id: str, name: str, ids: Iterable[str]
) -> set[str]:
    rows = store.labels_on_items(dataset, rubric_id, list(dict.fromkeys(ids)))
    return {t for t, a, skipped in rows if a == name and not skipped}


def may_review(store: Store, dataset: str, rubric_id: str, viewer: Viewer, tid: str) -> bool:
    """Whether the viewer may see the judgments and others' labels of item ``tid``."""
    return viewer.adjudicator or tid in _labeled_ids(store, dataset, rubric_id, viewer.name, [tid])


@dataclass(frozen=True)
class ItemReview:
    """One item's labels (adjudications included) and judgments under the rubric."""

    labels: list[dict[str, Any]]
    judgments: list[dict[str, Any]]


def item_review(store: Store, dataset: str, rubric_id: str, viewer: Viewer, tid: str) -> ItemReview:
    """Everything the Review page shows of one item; raises :class:`NotAllowed` before the
    viewer has labeled it (adjudicators excepted)."""
    if not may_review(store, dataset, rubric_id, viewer, tid):
        raise NotAllowed("label this item first: its review stays hidden until then")
    rows = store.item_labels(dataset, tid, rubric_id)
    judgments = [j for j in store.item_judgments(dataset, tid) if j["rubric_id"] == rubric_id]
    if not viewer.adjudicator:  # a pair judgment also speaks about its other trajectory
        others = [str(j["other_id"]) for j in judgments if not no_partner(j["other_id"])]
        seen = _labeled_ids(store, dataset, rubric_id, viewer.name, others) if others else set()
        judgments = [j for j in judgments if no_partner(j["other_id"]) or j["other_id"] in seen]
    return ItemReview(rows, judgments)


def save_adjudication(
    store: Store,
    dataset: str,
    rubric_id: str,
    viewer: Viewer,
    tid: str,
    value: float | str,
    *,
    note: str | None = None,
) -> None:
    """Save the final label of an item (a number, or a nominal rubric's category); only an
    adjudicator may (:class:`NotAllowed`)."""
    if not viewer.adjudicator:
        raise NotAllowed(
            "only an adjudicator saves adjudications (an account with role adjudicator)"
        )
    number, category = (None, value) if isinstance(value, str) else (float(value), None)
    store.save_label(
        dataset,
        tid,
        rubric_id,
        viewer.name,
        number,
        category=category,
        note=note,
        adjudication=True,
    )


def item_reference(
    store: Store, dataset: str, rubric_id: str, trajectory: Trajectory
) -> Trajectory | None:
    """What a reference-mode rubric compares ``trajectory`` against, for the annotator to see
    beside it, as the judges saw it: the reference its judgments of the rubric name (the
    task spec's expected calls, ``spec:<task>``, or another trajectory), the most named one
    if they differ; without a judgment, the task spec's expected calls. None: there is no
    reference. Only the ids of the judgments are read, never their verdicts (labeling stays
    blind)."""
    named = Counter(
        str(j["other_id"])
        for j in store.item_judgments(dataset, trajectory.id)
        if j.get("rubric_id") == rubric_id and j.get("other_id") is not None
    )
    other = named.most_common(1)[0][0] if named else f"{SPEC_REFERENCE}{trajectory.task_id}"
    if other.startswith(SPEC_REFERENCE):
        spec = store.task_specs(dataset).get(trajectory.task_id)
        if spec is None or not spec.reference:
            return None
        return spec_reference(trajectory.task_id, list(spec.reference), trajectory.input)
    return store.trajectory(dataset, other)


def label_page_judgments(
    store: Store, config: AppConfig, dataset: str, tid: str, *, shown: bool
) -> list[dict[str, Any]]:
    """The judgments the Label page may show: none unless the server runs with
    ``--show-judges`` and the annotator has the verdicts switched on."""
    if not (config.show_judges and shown):
        return []
    return store.item_judgments(dataset, tid)


def export_frame(store: Store, dataset: str, viewer: Viewer) -> pd.DataFrame:
    """The labels the viewer may download: everyone's for an adjudicator, else their own."""
    frame = labels_export_frame(store, dataset)
    if viewer.adjudicator:
        return frame
    return frame[frame["annotator"] == viewer.name].reset_index(drop=True)


# Pairs (pairwise rubrics): the same rule, per pair. A pair's judgments and the other
# annotators' labels of it reach a page only after the viewer labeled that pair (a skip does
# not count), an adjudicator excepted.


def own_pair_label(
    store: Store, dataset: str, pair: tuple[str, str], rubric_id: str, name: str
) -> dict[str, Any] | None:
    """The viewer's own label (or skip) of one pair, None when there is none yet."""
    for row in store.pair_item_labels(dataset, pair[0], pair[1], rubric_id):
        if row["annotator"] == name and not row["adjudication"]:
            return row
    return None


def _pair_judgments(
    store: Store, dataset: str, pair: tuple[str, str], rubric_id: str
) -> list[dict[str, Any]]:
    a, b = pair
    return [
        j
        for j in store.item_judgments(dataset, a)
        if j["rubric_id"] == rubric_id and j["other_id"] is not None and str(j["other_id"]) == b
    ]


def pair_review(
    store: Store, dataset: str, rubric_id: str, viewer: Viewer, pair: tuple[str, str]
) -> ItemReview:
    """The other annotators' labels and the judgments of one pair under the rubric (verdicts
    in the original numbering); raises :class:`NotAllowed` before the viewer labeled the pair
    (adjudicators excepted)."""
    if not viewer.adjudicator:
        mine = own_pair_label(store, dataset, pair, rubric_id, viewer.name)
        if mine is None or mine["skipped"]:
            raise NotAllowed("label this pair first: its review stays hidden until then")
    rows = store.pair_item_labels(dataset, pair[0], pair[1], rubric_id)
    others = [r for r in rows if r["annotator"] != viewer.name or r["adjudication"]]
    return ItemReview(others, _pair_judgments(store, dataset, pair, rubric_id))


def pair_page_judgments(
    store: Store,
    config: AppConfig,
    dataset: str,
    pair: tuple[str, str],
    rubric_id: str,
    *,
    shown: bool,
) -> list[dict[str, Any]]:
    """The judgments of a pair the pair page may show before the viewer's label: none unless
    the server runs with ``--show-judges`` and the annotator has the verdicts switched on."""
    if not (config.show_judges and shown):
        return []
    return _pair_judgments(store, dataset, pair, rubric_id)


def pairs_labeled_by(labels: pd.DataFrame, name: str) -> set[tuple[str, str]]:
    """Pairs ``name`` gave a label (not a skip, not an adjudication) in a pair-labels frame."""
    if labels.empty:
        return set()
    own = labels[
        (labels["annotator"] == name)
        & ~labels["adjudication"].astype(bool)
        & ~labels["skipped"].astype(bool)
    ]
    return set(zip(own["trajectory_id"].astype(str), own["other_id"].astype(str), strict=True))


def _on_pairs(frame: pd.DataFrame, pairs: set[tuple[str, str]]) -> pd.DataFrame:
    if frame.empty:
        return frame
    keys = zip(frame["trajectory_id"].astype(str), frame["other_id"].astype(str), strict=True)
    return frame[[k in pairs for k in keys]].reset_index(drop=True)


def pair_review_data(store: Store, dataset: str, rubric_id: str, viewer: Viewer) -> ReviewData:
    """Pair labels and pairwise judgments of the rubric for the Review tables: every pair for
    an adjudicator, else only the pairs the viewer has labeled (as :func:`review_data`)."""
    labels = store.pair_labels_frame(dataset, rubric_id=rubric_id, source="human")
    judgments = store.judgments_frame(dataset)
    if not judgments.empty:
        keep = (judgments["rubric_id"] == rubric_id) & judgments["other_id"].notna()
        judgments = judgments[keep].reset_index(drop=True)
    if viewer.adjudicator:
        return ReviewData(labels, judgments)
    mine = pairs_labeled_by(labels, viewer.name)
    return ReviewData(_on_pairs(labels, mine), _on_pairs(judgments, mine))


def save_pair_adjudication(
    store: Store,
    dataset: str,
    rubric_id: str,
    viewer: Viewer,
    pair: tuple[str, str],
    category: str,
    *,
    note: str | None = None,
) -> None:
    """Save the final label of a pair (``A``, ``B`` or ``tie`` in its original numbering);
    only an adjudicator may (:class:`NotAllowed`)."""
    if not viewer.adjudicator:
        raise NotAllowed(
            "only an adjudicator saves adjudications (an account with role adjudicator)"
        )
    store.save_pair_label(
        dataset, pair[0], pair[1], rubric_id, viewer.name, category, note=note, adjudication=True
    )


def pair_export_frame(store: Store, dataset: str, viewer: Viewer) -> pd.DataFrame:
    """The pair labels the viewer may download: everyone's for an adjudicator, else their
    own."""
    frame = pair_labels_export_frame(store, dataset)
    if viewer.adjudicator:
        return frame
    return frame[frame["annotator"] == viewer.name].reset_index(drop=True)
