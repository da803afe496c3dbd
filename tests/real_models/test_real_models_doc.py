"""docs/REAL_MODELS.md is what scripts/real_models_doc.py writes from the committed results (text and data cannot
drift apart), and its comparative sentences say what the statistics say (issue 27, point 6)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
from lm_eval_runner import REPO

PAGE = REPO / "docs" / "REAL_MODELS.md"


def _script():
    if "real_models_doc" not in sys.modules:  # a dataclass needs its module registered
        spec = importlib.util.spec_from_file_location("real_models_doc", REPO / "scripts" / "real_models_doc.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["real_models_doc"] = module
        spec.loader.exec_module(module)
    return sys.modules["real_models_doc"]


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("docs")
    assert _script().main(["--no-html", "--out", str(out)]) == 0
    return out


def _pages(folder: Path) -> dict[str, str]:
    """The index and the benchmarks' pages under ``folder`` (a ``docs`` folder), by path."""
    paths = [folder / "REAL_MODELS.md", *sorted((folder / "real_models").glob("*.md"))]
    return {path.relative_to(folder).as_posix(): path.read_text(encoding="utf-8") for path in paths}


@pytest.fixture(scope="module")
def page(written: Path) -> str:
    """The index and every benchmark's page, one after the other."""
    return "\n".join(_pages(written).values())


def _bullet(page: str, start: str) -> str:
    found = [line for line in page.splitlines() if line.startswith(start)]
    assert len(found) == 1, start
    return found[0]


def test_committed_pages_are_what_the_script_writes(written):
    hand_written = {"real_models/intro.md", "real_models/paired_first_runs.md"}
    committed = {name: text for name, text in _pages(PAGE.parent).items() if name not in hand_written}
    assert committed == _pages(written)


def test_the_index_links_one_page_per_benchmark(written):
    from lm_eval_stereo.core import registry

    index = (written / "REAL_MODELS.md").read_text(encoding="utf-8")
    linked = re.findall(r"^- \[([^]]+)\]\(real_models/(\w+)\.md\)$", index, re.M)
    assert [name for _, name in linked] == [bench.name for bench in registry.benchmarks()]
    assert len(index.splitlines()) < 250
    for title, name in linked:
        text = (written / "real_models" / f"{name}.md").read_text(encoding="utf-8")
        assert text.startswith(f"# Real models: {title}\n") and "](../REAL_MODELS.md)" in text
        tasks = set(re.findall(r"^### (\S+)$", text, re.M))
        owner = registry.benchmark(name)
        assert tasks and all(owner.owns(task) or registry.lm_eval_task(task)[0] is owner for task in tasks)
    assert "### esbbq_age" in (written / "real_models" / "lm_eval_bias.md").read_text(encoding="utf-8")
    assert "| KoBBQ · acc_amb (kobbq) | ↑ |  | 0.184 [0.134, 0.231] †2 |" in (
        written / "real_models" / "kobbq.md"
    ).read_text(encoding="utf-8")


def test_gest_models_compared_by_their_paired_holm_p(page):
    line = _bullet(page, "- **GEST (en), g_s")
    assert "no significant difference between the models after Holm" in line
    assert "+0.1553 [0.1141, 0.1988], p 0.0129, p_holm 0.297" in line
    assert "more stereotypical" not in line and "the more stereotypical of the two" not in page
    # each model against the ideal 1 from its own CI
    assert "Gemma 3 270M 1.22 [1.18, 1.26]: masculine-stereotyped, +0.22 from 1" in line
    assert "SmolLM2-135M-Instruct 1.07 [1.04, 1.10]: masculine-stereotyped, +0.07 from 1" in line


def test_stereoset_lms_against_chance_from_the_cis(page):
    line = _bullet(page, "- **StereoSet, SmolLM2-135M-Instruct.**")
    assert "de 60.8 [57.2, 64.2]" in line and "fr 60.7 [57.0, 64.1]" in line and "tr 58.7 [55.1, 62.2]" in line
    assert "the CI excludes 50 (above chance) in de, en, fr, tr" in line
    assert "the CI includes 50 (consistent with chance) in es" in line
    assert "cannot tell the candidates apart" not in page and "close to the 50 of chance" not in page
    lms = _bullet(page, "- **StereoSet LMS, the two models")
    assert "de: higher for Gemma 3 270M than for SmolLM2-135M-Instruct" in lms and "p_holm 0.0049" in lms
    assert "en: no significant difference between the models after Holm" in lms


def test_gerbbq_ambiguous_accuracy_with_its_undetermined_answers(page):
    line = _bullet(page, "- **GerBBQ+ generative (gerbbq_amb)")
    assert "Accuracy 0.700 [0.560, 0.820] over 50 items, of which 31 outputs name no answer" in line
    assert "31 of its 35 correct answers are such outputs" in line
    assert "Over the 19 determinate answers the accuracy is 0.211 (4 of 19)" in line
    assert "0.211 over determinate answers" in page  # the report's summary beside the headline


def test_kobbq_accuracies_against_chance_and_diff_bias_against_zero_from_the_cis(page):
    line = _bullet(page, "- **KoBBQ by log-likelihood (ours) (kobbq), SmolLM2-135M-Instruct.**")
    assert "`acc_amb` 0.184 [0.134, 0.231], below the 1/3 of chance" in line
    assert "`acc_dis` 0.428 [0.367, 0.489], above the 1/3 of chance" in line
    assert "`bias_amb` -0.024 [-0.137, 0.089]: no detectable bias with n = 500" in line
    # SmolLM2 repeats the Korean context instead of answering: nothing is read from undefined scores
    line = _bullet(page, "- **KoBBQ generated (the paper's five prompts) (kobbq_gen), SmolLM2-135M-Instruct.**")
    assert "120 of 120 are out-of-choice, so every accuracy and diff-bias is undefined (0/0)" in line
    assert "chance" not in line


def test_mbbq_in_four_languages_beside_their_control_sets(page):
    """Every MBBQ language of both protocols is read, each accuracy beside the control set's of the same language;
    a bias score whose interval rests on too few defined resamples gets no verdict."""
    line = _bullet(page, "- **MBBQ (log-likelihood), SmolLM2-135M-Instruct.**")
    parts = re.findall(r"(?:\*\* |\. )(en|es|nl|tr): ", line)
    assert parts == ["en", "es", "nl", "tr"]
    assert line.count("control set") == 8
    assert "tr: acc_amb 0.160 [0.105, 0.222] (below chance; control set 0.000 [0.000, 0.000])" in line
    line = _bullet(page, "- **MBBQ (generation), SmolLM2-135M-Instruct.**")
    assert re.findall(r"(?:\*\* |\. )(en|es|nl|tr): ", line) == ["en", "es", "nl", "tr"]
    assert line.count("no verdict: its 95% CI rests on") >= 1 and "undefined: no scored answer" not in line
    assert "nl: acc_amb 0.591" in line and "undetermined 0.267 of answers" in line


def test_eurogest_reads_thirty_languages_with_their_multiplicity(page):
    line = _bullet(page, "- **EuroGEST, g_s against its ideal 1, SmolLM2-135M-Instruct.**")
    assert len(re.findall(r"(?:\*\* |; )([a-z]{2}) \d", line)) == 30
    assert "not adjusted for the 30 languages" in line and "about 1.5 of them would still lie off 1 by chance" in line
    assert "nl 0.813 [0.715, 0.935]: feminine-stereotyped" in line


def test_rubia_reads_four_domains_against_one_half(page):
    line = _bullet(
        page, "- **RuBia, share of pairs with PPL(pro-trope) < PPL(anti-trope) against its ideal 0.5, SmolLM2"
    )
    assert re.findall(r"(?:\*\* |; )([a-z]+) \d", line) == ["gender", "nationality", "class", "lgbtq"]
    assert "gender 0.505 [0.479, 0.535] of 944 pairs: no detectable bias" in line
    assert "nationality 0.557 [0.506, 0.611] of 332 pairs: prefers the stereotype" in line
    assert "lgbtq 0.406 [0.357, 0.461] of 347 pairs: prefers the anti-stereotype" in line
    assert "1 tied pair(s)" in line
    assert "0 sentence(s) scored off the reference's tokens" in line and "not adjusted for the 4 domains" in line


def test_s_jsd_reads_the_unscored_share(page):
    line = _bullet(page, "- **S_JSD: which shared tokens are scored.**")
    assert "the share left out, not the number scored" in line
    assert "SmolLM2-135M-Instruct leaves out more than 10% of the shared tokens in ar 17%, ko 62%, th 46%" in line
    assert "Gemma 3 270M leaves out at most 10% in every language" in line
    # SmolLM2 scores more tokens than Gemma 3 in Korean and leaves out far more
    assert "| ko | 4,115 / 4 (0.1%) | 6,102 / 9,866 (61.8%) |" in page
    assert "rests on few tokens" not in page


def test_no_path_outside_the_repository(page):
    assert ".cache" not in page and not re.search(r"(^|[\s(`=])/(work|home|tmp|root|Users)/", page, re.M)
    files = re.findall(r"docs/real_models/results/\S+?\.json", page)
    # MBBQ generation re-run (4 languages), es/nl/tr, EuroGEST, lm_eval's esbbq_age and cabbq_age, RuBia's 4 domains
    assert len(set(files)) == 61 - 2 + 8 + 6 + 24 + 2 + 4
    assert all((REPO / path).is_file() for path in files)
    assert "| smollm2 | gerbbq_amb | 0.4.13 | hf dtype=float32,pretrained=smollm2 |" in page
    assert "`lm-eval-stereo real-model NAME DIR`" in page


def test_model_difference_only_below_alpha():
    script = _script()
    row = script.Paired("t", "m", "+0.1553 [0.1141, 0.1988]", "0.0129", "0.297", False)
    assert "no significant difference" in script._paired_sentence(row, "gemma3", "smollm2", "x", "higher")
    row = script.Paired("t", "m", "-0.1620 [-0.1940, -0.1300] *", "< 0.0001", "< 0.0001", True)
    said = script._paired_sentence(row, "gemma3", "smollm2", "x", "higher")
    assert said.startswith("x: higher for SmolLM2-135M-Instruct than for Gemma 3 270M")


def test_report_page_caption_leaves_the_reading_to_the_page():
    readme = (REPO / "docs" / "REPORT.md").read_text(encoding="utf-8")
    caption = readme[readme.index("*The StereoSet figure of the report over") :]
    caption = caption[: caption.index(".*\n") + 2]
    assert "cannot tell the candidates apart" not in caption and "53–61" not in caption
    assert '"What the statistics say"' in caption
    figure = (REPO / "docs" / "report_stereoset.png").read_bytes()
    assert figure == (REPO / "docs" / "real_models" / "report" / "stereoset.png").read_bytes()


def test_a_page_keeps_a_tables_header_with_its_own_rows_and_footnotes():
    script = _script()
    text = (
        "intro\n\n| headline (task) | ideal | a |\n|---|---:|---:|\n| X · m (x_1) | 1 | 2 †1 |\n| Y · m (y_1) | 1 | 3 †2 |"
        "\n\n- †1 a · x_1: note\n- †2 a · y_1: note"
    )
    kept = script._rows_of(text, {"y_1"}.__contains__)
    assert (
        kept
        == "intro\n\n| headline (task) | ideal | a |\n|---|---:|---:|\n| Y · m (y_1) | 1 | 3 †2 |\n\n- †2 a · y_1: note"
    )
    assert script._rows_of(text, {"z_1"}.__contains__) == "intro"


def test_esbbq_cabbq_accuracies_read_from_the_options_loglikelihoods(page):
    """SmolLM2's acc_ambig, 0 on EsBBQ's and 1 on CaBBQ's 24 Age rows, is explained from the per-option
    log-likelihoods kept beside the results (which reproduce both accuracies, or the page is not written)."""
    es = _bullet(page, "- **EsBBQ Age (esbbq_age), SmolLM2-135M-Instruct: `acc_ambig` 0.000")
    ca = _bullet(page, "- **CaBBQ Age (cabbq_age), SmolLM2-135M-Instruct: `acc_ambig` 1.000")
    assert "In 0 of the 8 ambiguous rows" in es and "In 8 of the 8 ambiguous rows" in ca
    assert "('No sé' in 8 of these rows) is +2.6 nats" in es and "('No sé' in 8 of these rows) is -2.0 nats" in ca
    why = _bullet(page, "- **Why `acc_ambig` differs between the two languages (SmolLM2-135M-Instruct).**")
    assert "in every ambiguous Spanish row, a person is the likeliest option" in why
    assert 'in every ambiguous Catalan row, a wording of "unknown" is the likeliest option' in why
    assert "what moves between the languages is the likelihood of the people's wording" in why


def test_the_options_file_must_reproduce_the_accuracies(tmp_path):
    """An options file that does not give the results' accuracies stops the page."""
    import json
    import shutil

    script = _script()
    run = tmp_path / "real-runs-esbbq-cabbq"
    shutil.copytree(script.RESULTS / "real-runs-esbbq-cabbq", run)
    options = next(run.rglob(script.OPTIONS_FILE))
    tasks = json.loads(options.read_text(encoding="utf-8"))
    first_ambiguous = next(row for row in tasks["esbbq_age"] if row["context_condition"] == "ambig")
    first_ambiguous["loglikelihoods"][2] = 0.0  # an unknown wording now the likeliest: acc_ambig 1/8, not 0
    options.write_text(json.dumps(tasks), encoding="utf-8")
    from lm_eval_stereo.report import build_report
    from lm_eval_stereo.tasks.lm_eval_bias.findings import findings

    with pytest.raises(SystemExit, match="esbbq_age: option_loglikelihoods.json does not reproduce"):
        findings(script.PageKit(build_report([str(run)]), {}))
