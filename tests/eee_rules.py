"""The Every Eval Ever datastore's rules that need no network, checked on a folder holding ``data/``.

Written from the rules of the validator (every_eval_ever @ 9bce413), not copied from it:

- ``every_eval_ever/validator/validation_core.py``: ``check_path_structure`` (five parts
  ``data/<collection>/<developer>/<model>/<file>``, portable names, none ``data``, a UUID4 file name),
  ``check_companion_exists`` and ``check_instance_companion`` (the sidecar is the record's sibling, named by its
  ``file_path``, ``format`` jsonl, at least one row, ``total_rows``, every line's ``evaluation_id`` and ``model_id``
  those of the record; a sidecar needs its record), ``check_score_metadata`` (finite scores inside
  ``[min_score, max_score]``, bounds for continuous metrics, finite uncertainty), ``check_model_deployment``
  (``deployment_type`` and ``model_availability`` in their vocabularies);
- ``every_eval_ever/validator/validate.py``: the command runs the schema and those checks on each file at its
  datastore path (relative to the folder above ``data/``); exit 0 clean, 1 errors, 2 warnings only;
- ``every_eval_ever/helpers/io.py`` (``datastore_path_components``, ``require_identity``): the identity path, the
  developer and model folders built from ``model_info.id`` (``/`` and ``:`` as ``_``), never ``unknown``;
- ``every_eval_ever/check_duplicate_entries.py``: no two records equal once ``retrieved_timestamp`` and
  ``evaluation_id`` are set aside;
- ``every-eval-ever/docs/datastore-submission.md`` / the datastore gate: the sidecar's sha256 is the record's
  ``checksum``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

import jsonschema
from lm_eval_runner import shared_data_dir

UUID4 = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
RECORD_NAME = re.compile(rf"{UUID4}\.json")
SIDECAR_NAME = re.compile(rf"{UUID4}_samples\.jsonl")
UNPORTABLE = re.compile(r'[<>:"\\|?*\x00-\x1f]')
RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)), *(f"LPT{i}" for i in range(1, 10))}
DEPLOYMENT_TYPES = {"self_deployed", "externally_managed", "unknown"}
AVAILABILITIES = {"open_weights", "closed_weights", "unknown"}


def schema(name: str) -> jsonschema.Draft7Validator:
    path = shared_data_dir() / "every-eval-ever" / "schemas" / name
    return jsonschema.Draft7Validator(json.loads(path.read_text(encoding="utf-8")))


def path_problems(repo_path: str) -> list[str]:
    parts = repo_path.split("/")
    if len(parts) != 5:
        return [f"{repo_path}: {len(parts)} path parts, not data/<collection>/<developer>/<model>/<file>"]
    if parts[0] != "data":
        return [f"{repo_path}: does not start with data/"]
    problems = []
    for part in parts[1:4]:
        if part in ("", ".", "..", "data") or UNPORTABLE.search(part) or part.endswith((".", " ")):
            problems.append(f"{repo_path}: {part!r} is no portable datastore folder name")
        elif part.split(".", 1)[0].upper() in RESERVED:
            problems.append(f"{repo_path}: {part!r} is a reserved name")
    if not (RECORD_NAME.fullmatch(parts[4]) or SIDECAR_NAME.fullmatch(parts[4])):
        problems.append(f"{repo_path}: {parts[4]!r} is not <uuid4>.json or <uuid4>_samples.jsonl")
    return problems


def identity_problems(repo_path: str, record: dict[str, Any]) -> list[str]:
    """The record's folders are those its ``model_info.id`` names, and its developer is known."""
    info = record.get("model_info") or {}
    model_id = str(info.get("id", ""))
    pieces = model_id.split("/")
    if len(pieces) < 2 or not all(pieces):
        return [f"{repo_path}: model_info.id {model_id!r} is not ORG/NAME"]
    developer, model = pieces[0].replace(":", "_"), "_".join(piece.replace(":", "_") for piece in pieces[1:])
    problems = []
    if developer.lower() == "unknown" or str(info.get("developer", "")).lower() in ("", "unknown"):
        problems.append(f"{repo_path}: developer unknown")
    if info.get("developer") != pieces[0]:
        problems.append(f"{repo_path}: model_info.developer {info.get('developer')!r} is not the id's {pieces[0]!r}")
    parts = repo_path.split("/")
    if parts[2:4] != [developer, model]:
        problems.append(f"{repo_path}: folders {parts[2:4]} are not the id's {[developer, model]}")
    return problems


def _bound(value: Any) -> float | None:
    if value in ("Infinity", "-Infinity"):
        return math.inf if value == "Infinity" else -math.inf
    if isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value):
        return float(value)
    return None


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def score_problems(repo_path: str, record: dict[str, Any]) -> list[str]:
    problems = []
    for index, result in enumerate(record.get("evaluation_results", [])):
        where = f"{repo_path}: evaluation_results[{index}] ({result.get('evaluation_result_id')})"
        config, details = result.get("metric_config", {}), result.get("score_details", {})
        low, high = _bound(config.get("min_score")), _bound(config.get("max_score"))
        for key, value in (("min_score", low), ("max_score", high)):
            if value is None and (config.get("score_type") == "continuous" or config.get(key) is not None):
                problems.append(f"{where}: missing or invalid {key}")
        score = details.get("score")
        if not _finite(score):
            problems.append(f"{where}: score {score!r} is not a finite number")
            continue
        if low is not None and high is not None and not low <= score <= high:
            problems.append(f"{where}: score {score} outside [{low}, {high}]")
        uncertainty = details.get("uncertainty") or {}
        found = [uncertainty.get("standard_deviation"), (uncertainty.get("standard_error") or {}).get("value")]
        found += [(uncertainty.get("confidence_interval") or {}).get(k) for k in ("lower", "upper", "confidence_level")]
        if any(value is not None and not _finite(value) for value in found):
            problems.append(f"{where}: an uncertainty that is not finite")
    return problems


def deployment_problems(repo_path: str, record: dict[str, Any]) -> list[str]:
    details = (record.get("model_info") or {}).get("additional_details") or {}
    problems = []
    if details.get("deployment_type") not in DEPLOYMENT_TYPES:
        problems.append(f"{repo_path}: deployment_type {details.get('deployment_type')!r}")
    if details.get("model_availability") not in AVAILABILITIES:
        problems.append(f"{repo_path}: model_availability {details.get('model_availability')!r}")
    return problems


def companion_problems(root: Path, repo_path: str, record: dict[str, Any]) -> list[str]:
    sibling = repo_path[: -len(".json")] + "_samples.jsonl"
    detail = record.get("detailed_evaluation_results")
    if detail is None:
        return (
            [f"{repo_path}: no detailed_evaluation_results, yet {sibling} exists"] if (root / sibling).is_file() else []
        )
    problems = []
    if detail.get("file_path") != sibling:
        problems.append(f"{repo_path}: file_path {detail.get('file_path')!r}, expected {sibling!r}")
    if detail.get("format") != "jsonl" or detail.get("hash_algorithm") != "sha256":
        problems.append(f"{repo_path}: format {detail.get('format')!r}, hash {detail.get('hash_algorithm')!r}")
    if not (root / sibling).is_file():
        return [*problems, f"{repo_path}: its sidecar {sibling} is missing"]
    payload = (root / sibling).read_bytes()
    if hashlib.sha256(payload).hexdigest() != detail.get("checksum"):
        problems.append(f"{repo_path}: the checksum is not the sidecar's sha256")
    lines = [json.loads(line) for line in payload.decode("utf-8").splitlines() if line.strip()]
    if not lines or detail.get("total_rows") != len(lines):
        problems.append(f"{repo_path}: total_rows {detail.get('total_rows')}, the sidecar has {len(lines)} lines")
    if {line.get("evaluation_id") for line in lines} - {record.get("evaluation_id")}:
        problems.append(f"{sibling}: evaluation_id not the record's")
    if {line.get("model_id") for line in lines} - {(record.get("model_info") or {}).get("id")}:
        problems.append(f"{sibling}: model_id not the record's model_info.id")
    instance = schema("instance_level_eval.schema.json")
    problems += [f"{sibling}: {error.message}" for line in lines for error in instance.iter_errors(line)][:5]
    return problems


def _normalised(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _normalised(v) for k, v in value.items() if k not in ("retrieved_timestamp", "evaluation_id")}
    if isinstance(value, list):
        return sorted((_normalised(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    return value


def datastore_problems(root: Path) -> list[str]:
    """Every broken rule of the files below ``root/data`` (empty: the datastore would take them)."""
    aggregate = schema("eval.schema.json")
    problems: list[str] = []
    seen: dict[str, str] = {}
    files = sorted(path for path in (root / "data").rglob("*") if path.is_file())
    if not files:
        return [f"no files below {root / 'data'}"]
    for path in files:
        repo_path = path.relative_to(root).as_posix()
        problems += path_problems(repo_path)
        if path.name.endswith("_samples.jsonl"):
            record_path = path.with_name(path.name[: -len("_samples.jsonl")] + ".json")
            if not record_path.is_file():
                problems.append(f"{repo_path}: no sibling record")
            continue
        if path.suffix != ".json":
            problems.append(f"{repo_path}: neither a record nor a sidecar")
            continue
        record = json.loads(path.read_text(encoding="utf-8"))
        problems += [f"{repo_path}: {error.message}" for error in aggregate.iter_errors(record)]
        problems += identity_problems(repo_path, record)
        problems += score_problems(repo_path, record)
        problems += deployment_problems(repo_path, record)
        problems += companion_problems(root, repo_path, record)
        if path.stem != record.get("evaluation_id"):
            problems.append(f"{repo_path}: named otherwise than its evaluation_id")
        key = json.dumps(_normalised(record), sort_keys=True)
        if key in seen:
            problems.append(f"{repo_path}: a duplicate of {seen[key]}")
        seen.setdefault(key, repo_path)
    return problems


def upstream_validator() -> list[str] | None:
    """The validator's command: this interpreter's ``every_eval_ever`` package, else its ``every_eval_ever`` console
    script where ``scripts/suite_tools.py`` finds it (on PATH, as ``make test`` puts it, else in the Python >= 3.12
    environment ``make eee-validator`` makes); None without either."""
    import importlib.util
    import sys

    from suite_tools import eee_validator

    if importlib.util.find_spec("every_eval_ever") is not None:
        return [sys.executable, "-m", "every_eval_ever"]
    found = eee_validator()
    return [found] if found else None


def upstream_validate(root: Path) -> tuple[int, str]:
    """``every_eval_ever validate`` on the files below ``root/data`` (the caller skips without the validator)."""
    import subprocess

    command = upstream_validator()
    assert command is not None, "no every_eval_ever validator: skip before calling"
    files = [str(path) for path in sorted((root / "data").rglob("*")) if path.is_file()]
    proc = subprocess.run([*command, "validate", "--format", "json", *files], capture_output=True, text=True, cwd=root)
    return proc.returncode, proc.stdout + proc.stderr
