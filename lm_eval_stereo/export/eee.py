"""One Every Eval Ever aggregate record (schema 0.3.0) per model run.

The record's identity is stable: ``evaluation_id`` is a version-4-shaped UUID derived from the model, the results file
and its timestamp, so exporting the same run again gives the same file names (the datastore names records and their
per-item sidecars by such a UUID). Field meanings follow the upstream notes (``every-eval-ever/docs/fields.md``).
"""

from __future__ import annotations

import hashlib
import math
import time
import uuid
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from lm_eval_stereo import __version__
from lm_eval_stereo.core.bootstrap import DEFAULT_LEVEL
from lm_eval_stereo.export.headlines import Headline
from lm_eval_stereo.export.identity import ModelIdentity
from lm_eval_stereo.results.run import Run

SCHEMA_VERSION = "0.3.0"
PLUGIN_NAMESPACE = "lm_eval_stereo"
LM_EVAL_NAMESPACE = "lm_eval"


def evaluation_id(run: Run) -> str:
    """A UUID (version 4 layout) derived from the model, the results file's name and the run's timestamp."""
    digest = hashlib.sha256(f"{run.identity}\n{run.path.name}\n{run.date!r}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def _lm_eval_version(run: Run) -> str:
    recorded = run.lm_eval_version
    if recorded:
        return recorded
    try:
        return version("lm_eval")
    except PackageNotFoundError:
        return "unknown"


def _bound(value: float) -> float | str:
    return value if math.isfinite(value) else ("Infinity" if value > 0 else "-Infinity")


def _source_data(headline: Headline, run: Run) -> dict[str, Any]:
    """The pinned upstream data of a plugin benchmark, or the dataset lm_eval's config names for its own tasks."""
    if headline.benchmark is not None and headline.benchmark.sources:
        sources = headline.benchmark.sources
        return {
            "dataset_name": headline.benchmark.name,
            "source_type": "url",
            "url": [f"https://github.com/{source.repo}/tree/{source.commit}" for source in sources],
            "additional_details": {f"{source.name}_commit": source.commit for source in sources},
        }
    config = run.task_config(headline.task)
    details = {key: str(config[key]) for key in ("dataset_path", "dataset_name") if config.get(key)}
    return {"dataset_name": headline.task, "source_type": "other", "additional_details": details}


def _metric_config(headline: Headline) -> dict[str, Any]:
    namespace = PLUGIN_NAMESPACE if headline.benchmark is not None else LM_EVAL_NAMESPACE
    config: dict[str, Any] = {
        "evaluation_description": headline.description,
        "metric_id": f"{namespace}.{headline.task}.{headline.metric}",
        "metric_name": headline.metric,
        "lower_is_better": headline.lower_is_better,
    }
    parameters: dict[str, Any] = {}
    if headline.ideal is not None:
        # neither higher nor lower is better (lower_is_better is false and means nothing): rank by the distance
        parameters = {
            "ideal": headline.ideal,
            "direction": "ideal",
            "polarity": "not_applicable",
            "ranked_by": f"{headline.metric}_distance",
        }
    if headline.distance_of is not None:
        parameters = {"distance_of": headline.distance_of, "ideal": headline.distance_ideal}
    if parameters:
        config["metric_parameters"] = parameters
    if headline.bounds is not None:
        config |= {
            "score_type": "continuous",
            "min_score": _bound(headline.bounds[0]),
            "max_score": _bound(headline.bounds[1]),
        }
    return config


def _score_details(headline: Headline) -> dict[str, Any]:
    uncertainty: dict[str, Any] = {}
    if headline.stderr is not None and math.isfinite(headline.stderr):
        uncertainty["standard_error"] = {"value": headline.stderr, "method": headline.stderr_method}
    if headline.interval is not None:
        uncertainty["confidence_interval"] = {
            "lower": headline.interval.low,
            "upper": headline.interval.high,
            "confidence_level": DEFAULT_LEVEL,
            "method": "percentile bootstrap",
        }
    if headline.n is not None:
        uncertainty["num_samples"] = headline.n
    if headline.bootstrap_iterations is not None:
        uncertainty["num_bootstrap_samples"] = headline.bootstrap_iterations
    details: dict[str, Any] = {"score": headline.value}
    if uncertainty:
        details["uncertainty"] = uncertainty
    notes: dict[str, str] = {}  # the schema's details hold strings
    if headline.undefined is not None:  # the bootstrap resamples the interval leaves out (the metric undefined there)
        notes["bootstrap_undefined_resamples"] = str(headline.undefined)
    if headline.provenance is not None:  # who computed the value and who its interval
        found = headline.provenance
        notes |= {"value_computed_by": found.value_by, "interval_computed_by": found.interval_by}
        notes |= {"computed_by": found.describe(), **({"metric_set": found.metric_set} if found.metric_set else {})}
        notes |= {"scored_by": found.backend} if found.backend else {}
    if notes:
        details["details"] = notes
    return details


def evaluation_name(headline: Headline) -> str:
    namespace = PLUGIN_NAMESPACE if headline.benchmark is not None else LM_EVAL_NAMESPACE
    return f"{namespace}.{headline.task}"


def _timestamp(run: Run) -> str:
    return datetime.fromtimestamp(run.date, tz=timezone.utc).isoformat()


def record(
    run: Run,
    headlines: list[Headline],
    *,
    identity: ModelIdentity,
    relationship: str,
    organization: str,
    detailed: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The aggregate record of one run of the model ``identity`` (``detailed``: the reference to its per-item
    sidecar, when there is one)."""
    source_details = {"results_file": run.path.name}
    if run.limit is not None:
        source_details["limit"] = f"--limit {run.limit}: not full data"
    entry: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id(run),
        "evaluation_timestamp": _timestamp(run),
        "retrieved_timestamp": f"{time.time():.0f}",
        "source_metadata": {
            "source_name": "lm-eval-stereo",
            "source_type": "evaluation_run",
            "source_organization_name": organization,
            "evaluator_relationship": relationship,
            "additional_details": source_details,
        },
        "model_info": {
            "name": identity.id,
            "id": identity.id,
            "developer": identity.developer,
            "inference_platform": "local",
            "additional_details": dict(identity.details),
        },
        "eval_library": {
            "name": "lm-eval-stereo",
            "version": __version__,
            "additional_details": {"lm_eval_version": _lm_eval_version(run)},
        },
        "evaluation_results": [
            {
                "evaluation_result_id": headline.result_id,
                "evaluation_name": evaluation_name(headline),
                "source_data": _source_data(headline, run),
                "evaluation_timestamp": _timestamp(run),
                "metric_config": _metric_config(headline),
                "score_details": _score_details(headline),
            }
            for headline in headlines
        ],
    }
    if detailed is not None:
        entry["detailed_evaluation_results"] = detailed
    return entry
