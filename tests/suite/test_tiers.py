"""The suite's tiers and its CPU report (:mod:`tiers`, :mod:`cpu_report`), checked on a small suite of their own run
by pytest with 2 xdist workers, as ``make test`` and ``make test-quick`` run the real one."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cpu_budget import ENV as BUDGET_ENV
from lm_eval_runner import TESTS, started_engine
from model_server import ModelServer
from tiers import TIER_ENV

SUITE = {
    "conftest.py": """
        import os

        import cpu_budget

        pytest_plugins = ("cpu_report",)
        # this small suite's own budget: the quick tier's files share TOY_QUICK_BUDGET CPU-seconds
        cpu_budget.TIER_BUDGETS.update(quick=float(os.environ.get("TOY_QUICK_BUDGET", "1000")), engine=1000.0)
        cpu_budget.MINIMUM_SHARE = 0.1

        def pytest_configure(config):
            config.addinivalue_line("markers", "engine: starts an engine")
    """,
    # one CPU-second in a child process, half a second in the test process itself
    "test_busy.py": """
        import subprocess, sys, time

        def spin(seconds):
            end = time.process_time() + seconds
            while time.process_time() < end:
                pass

        def test_child():
            subprocess.run([sys.executable, "-c", f"import time\\nend = time.process_time() + 1\\n"
                            "while time.process_time() < end: pass"], check=True)

        def test_here():
            spin(0.5)
    """,
    "test_engine.py": """
        import pytest
        from tiers import starting

        @pytest.mark.engine
        def test_marked():
            starting("a marked server")

        def test_unmarked():
            starting("an unmarked server")
    """,
}


def run_suite(
    folder: Path, *args: str, tier: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    for name, text in SUITE.items():
        (folder / name).write_text(textwrap.dedent(text))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), str(TESTS.parent)]), **(env or {})}
    env.pop(TIER_ENV, None)
    if BUDGET_ENV not in (env or {}):
        env.pop(BUDGET_ENV, None)
    if tier:
        env[TIER_ENV] = tier
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadfile", *args]
    return subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=300)


def figures(output: str) -> dict[str, tuple[float, int, str]]:
    """file -> (CPU-seconds, tests, tier) from the printed table."""
    rows = re.findall(r"^\s*([\d.]+)\s+[\d.]+\s+(\d+)\s+(quick|engine)\s+(\S+)$", output, re.MULTILINE)
    return {name: (float(cpu), int(tests), tier) for cpu, tests, tier, name in rows}


@pytest.fixture(scope="module")
def fitting_run(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess:
    """The small suite as ``make test`` runs it (``LM_EVAL_TESTS_CPU_BUDGET=1``), with a quick tier's budget it fits."""
    return run_suite(tmp_path_factory.mktemp("fitting"), env={BUDGET_ENV: "1", "TOY_QUICK_BUDGET": "10"})


def test_the_report_gathers_each_files_cpu_seconds_from_the_workers(fitting_run):
    run = fitting_run
    assert run.returncode == 0, run.stdout[-3000:]
    table = figures(run.stdout)
    assert table.keys() == {"test_busy.py", "test_engine.py"}, run.stdout[-3000:]
    cpu, tests, tier = table["test_busy.py"]
    assert 1.4 <= cpu <= 3.0 and tests == 2 and tier == "quick", run.stdout[-3000:]  # 1 s in the child, 0.5 s here
    assert table["test_engine.py"][1:] == (2, "engine")
    assert len(re.findall(r"CPU-seconds outside any test \(gw[01]:", run.stdout)) == 2
    # the machine's speed during the run, from the controller only: one line, plausible times in order, at least the
    # timings at the start and the end
    (speed,) = re.findall(
        r"^\s*([\d.]+) s fastest, ([\d.]+) s median, ([\d.]+) s slowest: a fixed Python loop of 3,000,000 steps, "
        r"timed (\d+) times during the run \(the machine's speed: compare runs only at like speeds\)$",
        run.stdout,
        re.MULTILINE,
    )
    fastest, median, slowest, timings = speed
    assert 0.01 < float(fastest) <= float(median) <= float(slowest) < 10 and int(timings) >= 2, speed


def test_a_file_over_its_share_of_the_tier_budget_by_half_fails_the_run(tmp_path, fitting_run):
    """``make test`` sets ``LM_EVAL_TESTS_CPU_BUDGET=1``: every test passes, but ``test_busy.py`` (1.5 CPU-seconds)
    takes more than 1.5 × its share of a quick tier of 0.3 CPU-seconds (judged at the usual speed, it still does on a
    machine three times slower), and the run fails naming it; with a budget it fits, the same run passes (and without
    the variable, as the quick tier's test here runs it, none is checked)."""
    over = run_suite(tmp_path, env={BUDGET_ENV: "1", "TOY_QUICK_BUDGET": "0.3"})
    assert over.returncode == 1 and "4 passed in" in over.stdout, over.stdout[-3000:]
    section = over.stdout[over.stdout.index("over their share of the tier's CPU budget") :]
    (line,) = [line for line in section.splitlines() if line.startswith("test_busy.py: ")]
    cpu = figures(over.stdout)["test_busy.py"][0]
    at_usual_speed = r"( \([\d.]+ at the usual speed: the loop took [\d.]+ × its usual time\))?"  # a slower run's
    expected = rf"test_busy\.py: {cpu:.1f} CPU-seconds{at_usual_speed}, over 1\.5 × its share of 0\.3 \(the quick "
    assert re.fullmatch(expected + r"tier's budget: 0\.3\)", line), line
    assert fitting_run.returncode == 0 and "over their share" not in fitting_run.stdout


def test_shares_are_a_files_own_or_an_equal_part_of_what_is_left(monkeypatch):
    import cpu_budget

    monkeypatch.setattr(cpu_budget, "TIER_BUDGETS", {"quick": 100.0, "engine": 50.0})
    monkeypatch.setattr(cpu_budget, "SHARES", {"quick": {"tests/big.py": 40.0}, "engine": {"tests/engine.py": 60.0}})
    files = {"tests/big.py": "quick", "tests/a.py": "quick", "tests/b.py": "quick", "tests/engine.py": "engine"}
    assert cpu_budget.shares(files) == {
        "tests/big.py": 40.0,
        "tests/a.py": 30.0,
        "tests/b.py": 30.0,
        "tests/engine.py": 60.0,
    }
    # listed for the engine tier, run in the quick tier (make test-quick: its quick tests only): it shares what is left
    assert cpu_budget.shares({"tests/engine.py": "quick", "tests/a.py": "quick"}) == {
        "tests/engine.py": 50.0,
        "tests/a.py": 50.0,
    }
    many = {f"tests/small_{n}.py": "engine" for n in range(40)}  # nothing left of the engine's budget: the minimum
    assert set(cpu_budget.shares({**many, "tests/engine.py": "engine"}).values()) == {60.0, cpu_budget.MINIMUM_SHARE}
    figures_ = {"tests/big.py": (60.0, "quick"), "tests/a.py": (45.1, "quick"), "tests/b.py": (45.0, "quick"),
                "tests/engine.py": (89.0, "engine")}  # fmt: skip
    assert cpu_budget.over_budget(figures_) == [
        "tests/a.py: 45.1 CPU-seconds, over 1.5 × its share of 30.0 (the quick tier's budget: 100)"
    ]
    # a faster run is judged as it is; a slower one (the speed loop's median 1.2 × its usual time) at the usual speed
    usual = cpu_budget.USUAL_LOOP_SECONDS
    assert cpu_budget.over_budget(figures_, loop_median=usual / 2) == cpu_budget.over_budget(figures_)
    slower = {**figures_, "tests/a.py": (54.1, "quick")}  # 45.1 at the usual speed; tests/b.py 37.5, engine.py 74.2
    assert cpu_budget.over_budget(slower, loop_median=1.2 * usual) == [
        "tests/a.py: 54.1 CPU-seconds (45.1 at the usual speed: the loop took 1.20 × its usual time), over 1.5 × its "
        "share of 30.0 (the quick tier's budget: 100)"
    ]


def test_the_quick_tier_fails_a_test_that_starts_an_engine_unmarked(tmp_path):
    run = run_suite(tmp_path, "-m", "not engine", tier="quick")
    assert run.returncode == 1, run.stdout[-3000:]
    assert "1 failed, 2 passed in" in run.stdout, run.stdout[-3000:]
    assert "an unmarked server started in the quick tier: mark the test `@pytest.mark.engine`" in run.stdout


def test_engine_starts_are_recognised(tiny_causal, smollm2, monkeypatch):
    assert started_engine(["--model", "vllm", "--model_args", f"pretrained={tiny_causal}"]) == (
        "a vLLM engine (--model vllm)"
    )
    assert started_engine(["--model", "hf", "--model_args", f"pretrained={smollm2},dtype=float32"]) == (
        f"lm_eval on a real pretrained model ({smollm2})"
    )
    assert started_engine(["--model", "hf", "--model_args", f"pretrained={tiny_causal}"]) is None
    # an API model's model= folder: its name and tokenizer only, no engine in this process
    assert started_engine(["--model", "local-completions", "--model_args", f"model={smollm2}"]) is None
    monkeypatch.setenv(TIER_ENV, "quick")
    with pytest.raises(pytest.fail.Exception, match="^a server started in the quick tier"):
        server = ModelServer(smollm2, Path(os.devnull), env={}, marker="", health_timeout=1)
        server.name = "a server"
        server.start()


def test_the_units_of_work_go_longest_first_by_their_measured_cpu_seconds(monkeypatch):
    """The engine tier's two longest units first, then the files by the CPU-seconds they took (the largest first),
    files without a measured figure last; in ``make test-quick`` by their quick tests' figures."""
    from conftest import expected_cpu, scheduling_key

    names = ["core/test_window.py", "report/test_report.py", "backends/test_vllm.py", "hooks/test_stock_tasks.py",
             "real_models/test_real_models_tier.py", "backends/test_vllm_stock_tasks.py", "backends/test_served.py",
             "reliability/test_files_written_whole.py"]  # fmt: skip
    paths = [TESTS / name for name in names]
    for tier in ("engine", "quick"):
        if tier == "quick":
            monkeypatch.setenv(TIER_ENV, "quick")
        else:
            monkeypatch.delenv(TIER_ENV, raising=False)
        ordered = sorted(paths, key=scheduling_key)
        assert [path.name for path in ordered[:3]] == [
            "test_real_models_tier.py", "test_vllm_stock_tasks.py", "test_vllm.py"
        ]  # fmt: skip
        rest = ordered[3:]
        figures = [expected_cpu(path) for path in rest]
        assert figures == sorted(figures, reverse=True) and figures[-1] == 0.0 and figures[0] > 50, (tier, figures)
        assert rest[-1].name == "test_window.py"
    # the tiers' own figures: test_served's quick tests took less than its engine tests
    monkeypatch.delenv(TIER_ENV, raising=False)
    engine_figure = expected_cpu(TESTS / "backends/test_served.py")
    monkeypatch.setenv(TIER_ENV, "quick")
    assert expected_cpu(TESTS / "backends/test_served.py") <= engine_figure
