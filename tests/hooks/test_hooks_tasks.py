"""``hooks/tasks.py``: every ``TaskManager`` indexes the plugin's task folder, first and once, its arguments bound by
name however the caller passes them."""

from __future__ import annotations

from lm_eval_stereo import tasks_path
from lm_eval_stereo.hooks.tasks import ONLY_PLUGIN_TASKS_ENV, task_manager_init


class TaskManager:
    """lm_eval 0.4.13's ``TaskManager.__init__`` parameters, recording what it was given."""

    def __init__(self, verbosity=None, include_path=None, include_defaults=True, metadata=None):
        self.given = {"verbosity": verbosity, "include_path": include_path, "include_defaults": include_defaults}


TaskManager.__init__ = task_manager_init(TaskManager.__init__)
OURS = str(tasks_path().resolve())


def test_the_plugin_s_folder_comes_first_however_include_path_is_passed(monkeypatch):
    monkeypatch.delenv(ONLY_PLUGIN_TASKS_ENV, raising=False)
    assert TaskManager().given["include_path"] == [OURS]
    assert TaskManager("INFO", "/a").given == {
        "verbosity": "INFO",
        "include_path": [OURS, "/a"],
        "include_defaults": True,
    }
    assert TaskManager(include_path=["/a", "/b"]).given["include_path"] == [OURS, "/a", "/b"]
    assert TaskManager(include_path=[OURS, "/a"]).given["include_path"] == [OURS, "/a"]  # not twice


def test_only_the_plugin_s_tasks_where_asked_unless_the_caller_says(monkeypatch):
    monkeypatch.setenv(ONLY_PLUGIN_TASKS_ENV, "1")
    assert TaskManager().given["include_defaults"] is False
    assert TaskManager(include_defaults=True).given["include_defaults"] is True
    monkeypatch.setenv(ONLY_PLUGIN_TASKS_ENV, "0")
    assert TaskManager().given["include_defaults"] is True
