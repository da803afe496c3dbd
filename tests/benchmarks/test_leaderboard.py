"""The versioned leaderboard groups resolve in lm_eval's task index, hold only comparable members and average none."""

from __future__ import annotations

import yaml

from lm_eval_stereo import tasks_path

GROUPS = {"stereo_leaderboard": "stereo_leaderboard.yaml", "stereo_leaderboard_chat": "stereo_leaderboard_chat.yaml"}


def _group(name: str) -> dict:
    return yaml.safe_load((tasks_path() / "leaderboard" / GROUPS[name]).read_text(encoding="utf-8"))


def test_both_groups_and_every_member_resolve_in_lm_evals_index() -> None:
    from lm_eval.tasks import TaskManager

    index = TaskManager(include_defaults=False).all_tasks
    for name in GROUPS:
        group = _group(name)
        assert group["group"] == name and name in index
        assert [member for member in group["task"] if member not in index] == []
        assert group["metadata"]["version"] == {"stereo_leaderboard": 1.2, "stereo_leaderboard_chat": 1.1}[name]
        assert "aggregate_metric_list" not in group  # different constructs: no average


def test_scoring_and_generative_members_are_apart_and_unpinned_or_masked_tasks_are_out() -> None:
    """Membership from the registry and the task YAMLs: every member belongs to a registered benchmark; the scoring
    group's members score by log-likelihood only (no masked-LM or generative task), the chat group's by generation
    only; every benchmark with a causal log-likelihood task is in the scoring group, every benchmark with a
    generative task in the chat group."""
    from readme_tables import GENERATION, LOGLIKELIHOOD, catalogue

    from lm_eval_stereo.core import registry

    scoring, chat = _group("stereo_leaderboard")["task"], _group("stereo_leaderboard_chat")["task"]
    assert not set(scoring) & set(chat)
    assert not any(name == "gest_pairs" or name.endswith("_once") for name in scoring + chat)
    owners: dict[str, set[str]] = {"scoring": set(), "chat": set()}
    for group, members, protocol in (("scoring", scoring, LOGLIKELIHOOD), ("chat", chat, GENERATION)):
        for member in members:
            (bench,) = [bench for bench in registry.benchmarks() if bench.owns(member)]
            tasks = catalogue(tasks_path() / bench.name)
            assert tasks.leaves(member), member
            assert tasks.protocols([member]) == [protocol], member
            owners[group].add(bench.name)
    for bench in registry.benchmarks():
        protocols = catalogue(tasks_path() / bench.name).protocols()
        assert (bench.name in owners["scoring"]) == (LOGLIKELIHOOD in protocols), bench.name
        assert (bench.name in owners["chat"]) == (GENERATION in protocols), bench.name
