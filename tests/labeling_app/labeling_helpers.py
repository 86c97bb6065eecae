"""Test data for the labeling app: trajectories, one of them carrying HTML / script /
javascript-link payloads that must stay inert text."""

from __future__ import annotations

from trajudge.trajectories import Step, Trajectory, Usage

DATASET = "demo"
SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
LINK = "[click](javascript:alert(1))"


def xss_trajectory() -> Trajectory:
    return Trajectory(
        id="xss",
        task_id="t-xss",
        input=f"Please book {SCRIPT} a flight",
        steps=[
            Step(tool="search_flights", args={"q": LINK, "html": SCRIPT}, output=IMG),
            Step(tool="book", args={"id": 1}, ok=False, error=f"failed {SCRIPT}"),
        ],
        final_answer=f"Done {LINK} {IMG}",
        intent="book",
        usage=Usage(prompt_tokens=10, completion_tokens=5, cost_usd=0.01, turns=2),
    )


def make_trajectories(n: int) -> list[Trajectory]:
    intents = ["book", "cancel", "change"]
    out = [xss_trajectory()]
    for i in range(1, n):
        out.append(
            Trajectory(
                id=f"t{i:03d}",
                task_id=f"task{i % 5}",
                trial=i // 5,
                input=f"User request number {i}",
                steps=[
                    Step(tool="get_user", args={"user_id": f"u{i}"}, output="x" * (50 * i)),
                    Step(tool="update", args={"n": i}, ok=i % 4 != 0, output="done"),
                ],
                final_answer=f"answer {i}",
                intent=intents[i % 3],
            )
        )
    return out
