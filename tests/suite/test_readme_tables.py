"""The README is a newcomer's page whose benchmark table and citations are generated from the registry
(``scripts/readme_tables.py``): stale tables fail here, every registered benchmark and declared source is in them,
and the prose carries no dates or commit hashes (measured figures live in the generated pages it links)."""

from __future__ import annotations

import re

import readme_tables
from lm_eval_runner import REPO

from lm_eval_stereo import tasks_path
from lm_eval_stereo.core import registry

README = (REPO / "README.md").read_text(encoding="utf-8")


def test_the_generated_tables_are_current() -> None:
    assert readme_tables.main(["--check"]) == 0
    assert readme_tables.render(README) == README
    stale = README.replace("| Jin et al. 2024 |", "| Jin 2024 |")
    assert stale != README and readme_tables.render(stale) == README


def test_every_benchmark_and_every_declared_source_is_in_the_readme() -> None:
    table = readme_tables._marked("benchmarks").search(README).group(2)
    rows = [line for line in table.splitlines() if line.startswith("| [")]
    assert len(rows) == len(registry.benchmarks())
    for bench, row in zip(registry.benchmarks(), rows):
        assert row.startswith(f"| [{bench.title}](lm_eval_stereo/tasks/{bench.name}/README.md) |")
        for source in bench.sources:
            assert f"[{source.repo}](https://github.com/{source.repo}/tree/{source.commit})" in row
            assert source.licence in row
    citations = readme_tables._marked("citations").search(README).group(2)
    assert {line[2:] for line in citations.splitlines()} == {s.citation for s in registry.SOURCES.values()}
    assert "KoBBQ: Korean Bias Benchmark for Question Answering" in citations and "EuroGEST:" in citations


def test_the_report_pages_benchmark_table_reads_every_declaration() -> None:
    """docs/REPORT.md's benchmarks table: a row per registered benchmark, each metric set's headlines with the ideals
    and directions its declaration gives (generated; a stale one fails ``--check``)."""
    page = (REPO / "docs" / "REPORT.md").read_text(encoding="utf-8")
    assert readme_tables.render(page, readme_tables.REPORT_TABLES, "docs/REPORT.md") == page
    table = readme_tables._marked("benchmarks").search(page).group(2)
    rows = [line for line in table.splitlines() if line.startswith("| [")]
    assert [row.split("](", 1)[0][3:] for row in rows] == [bench.title for bench in registry.benchmarks()]
    stereoset = rows[0]
    assert "`stereoset_multi.scores`: `lms` ↑, **`ss`** (50), `icat` ↑" in stereoset
    assert "`rubia.shares`: **`biased`** (0.5)" in rows[[b.name for b in registry.benchmarks()].index("rubia")]
    leakage = rows[[b.name for b in registry.benchmarks()].index("stereotype_leakage")]
    assert "`stereotype_leakage.regression`: **`n_leaks`** (0)" in leakage  # no interval: its directed metrics


def test_protocols_and_tasks_are_read_from_the_yamls_and_classes() -> None:
    def protocols(name: str) -> list[str]:
        return readme_tables.catalogue(tasks_path() / name).protocols()

    assert protocols("stereoset_multi") == [readme_tables.LOGLIKELIHOOD, readme_tables.MASKED]
    assert protocols("eurogest") == [readme_tables.LOGLIKELIHOOD]
    assert protocols("kobbq") == [readme_tables.LOGLIKELIHOOD, readme_tables.GENERATION]
    gest = readme_tables.catalogue(tasks_path() / "gest")
    assert gest.protocols(["gest_mt"]) == [readme_tables.GENERATION]
    assert sorted(gest.leaves("gest_mt")) == sorted(f"gest_mt_{lang}" for lang in gest_mt_languages())
    leakage = readme_tables.catalogue(tasks_path() / "stereotype_leakage")
    causal = leakage.causal_loglikelihood()  # scripts/run_real_models.py's tasks: no seq2seq (mT5) task
    assert sorted(causal) == sorted(f"stereotype_leakage_{lang}" for lang in ("en", "ru", "zh", "hi"))
    assert readme_tables.short_reference("Jin, Kim, Lee (2024). KoBBQ. TACL.") == "Jin et al. 2024"
    assert readme_tables.short_reference("Nangia, Vania (2020). X. Y.") == "Nangia and Vania 2020"


def gest_mt_languages() -> tuple[str, ...]:
    from lm_eval_stereo.tasks.gest.data import LANGUAGES

    return tuple(LANGUAGES)


def test_the_readme_is_short_and_states_no_dates_or_commits_in_prose() -> None:
    assert len(README.splitlines()) <= 200
    prose = README
    for name in readme_tables.TABLES:
        prose = readme_tables._marked(name).sub("", prose)
    assert re.findall(r"\b20\d\d-\d\d-\d\d\b", prose) == []
    assert re.findall(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b", prose) == []


#: pages the branches of the served-model and lm_eval-bias-tasks issues write; the README links them already
WRITTEN_ELSEWHERE: set[str] = set()


def test_the_readmes_local_links_resolve() -> None:
    links = {link.split("#")[0] for link in re.findall(r"\]\(([^)#:]+(?:#[^)]*)?)\)", README)}
    missing = sorted(link for link in links if not (REPO / link).exists())
    assert set(missing) <= WRITTEN_ELSEWHERE, missing
