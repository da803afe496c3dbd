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
        assert group["metadata"]["version"] == 1.1
        assert "aggregate_metric_list" not in group  # different constructs: no average


def test_scoring_and_generative_members_are_apart_and_unpinned_or_masked_tasks_are_out() -> None:
    scoring, chat = set(_group("stereo_leaderboard")["task"]), set(_group("stereo_leaderboard_chat")["task"])
    assert scoring == {
        "stereoset_multi", "gest", "gerbbq_mc", "s_jsd", "stereotype_leakage", "mbbq", "mbbq_control", "kobbq",
        "eurogest",
    }  # fmt: skip
    assert chat == {
        "gerbbq", "sexist_statements_de", "stereo_persona_de", "neutral_persona_de", "gest_mt", "stereotype_leakage_gen",
        "mbbq_gen", "mbbq_gen_control", "kobbq_gen",
    }  # fmt: skip
    assert not scoring & chat
    assert not any("mlm" in name or name == "gest_pairs" or name.endswith("_once") for name in scoring | chat)
