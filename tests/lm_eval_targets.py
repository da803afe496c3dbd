"""What the plugin's hooks change in lm_eval, found by looking, not by asking the hooks: run as a script with
``LM_EVAL_STEREO_AUTOLOAD=0``, it imports every lm_eval module of the start-up hook's table that this environment can
import (``lm_eval.models.vllm_causallms`` only where vLLM is installed), records every attribute of those modules and
of the classes they define, and lm_eval's registered model names, installs the hooks (:func:`_autoload.activate`) and
prints, as JSON, the modules it imported and every attribute and model name that is new or no longer the same object
(``lm_eval.evaluator.evaluate``, ``lm_eval.api.registry.model_registry[hf-mlm]``)."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

#: the registry whose names the plugin adds to
REGISTRY = "lm_eval.api.registry.model_registry"


def expected_targets(imported: list[str]) -> set[str]:
    """The targets of the start-up hook's table (``_autoload.HOOKS``) whose lm_eval module was imported."""
    from lm_eval_stereo import _autoload

    return {hook.target for hook in _autoload.HOOKS if hook.module in imported}


def _attributes(modules: dict[str, ModuleType]) -> dict[str, object]:
    found: dict[str, object] = {}
    for name, module in modules.items():
        for attr, value in vars(module).items():
            if isinstance(value, ModuleType):  # a submodule imported later is not a change of its package
                continue
            found[f"{name}.{attr}"] = value
            if isinstance(value, type) and value.__module__ == name:
                for member, member_value in vars(value).items():
                    found[f"{name}.{attr}.{member}"] = member_value
    from lm_eval.api.registry import model_registry

    for alias in model_registry:
        found[f"{REGISTRY}[{alias}]"] = model_registry._objs[alias]
    return found


def changed_targets() -> tuple[list[str], list[str]]:
    """The lm_eval modules imported, and the targets the hooks changed in them."""
    from lm_eval_stereo import _autoload

    modules: dict[str, ModuleType] = {}
    for name in sorted(_autoload.TRIGGERS, key=len):
        try:
            modules[name] = importlib.import_module(name)
        except ImportError:
            continue
    before = _attributes(modules)
    _autoload.activate()
    after = _attributes(modules)
    return sorted(modules), sorted(key for key, value in after.items() if key not in before or before[key] is not value)


def run(python: str | Path = sys.executable, env: dict[str, str] | None = None) -> dict[str, list[str]]:
    """This script's answer from ``python`` (a fresh interpreter with the start-up hook off)."""
    environment = {**os.environ, **(env or {}), "LM_EVAL_STEREO_AUTOLOAD": "0"}
    proc = subprocess.run([str(python), __file__], capture_output=True, text=True, env=environment, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    imported, changed = changed_targets()
    print(json.dumps({"modules": imported, "targets": changed}))
