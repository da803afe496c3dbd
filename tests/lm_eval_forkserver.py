"""A fork server for the ``lm_eval`` console script: imports what every run imports (torch, transformers, lm_eval's
command line, evaluator and ``hf`` model) once, then forks one child per run, which runs lm_eval's own command line
(``lm_eval.__main__.cli_evaluate``) with the run's arguments, working folder and output files.

Started by :mod:`lm_eval_runner` with the environment of the runs it serves (a run with another environment gets its
own server, or a plain subprocess): the child is the process a fresh ``lm_eval`` would be, less the imports, which
took 9 to 10 of the 11 CPU-seconds of a test's small run (a 2-document run of the tiny model on one core: 11.2 s as a
fresh process, 1.5 s forked), less the filling of caches that every run fills alike (:func:`warm_caches`),
and, where the plugin is off, less the parse of lm_eval's own task files (:func:`parse_lm_eval_tasks_once`).

Protocol: first one line on stdout, ``{"ready": true, "cpu": ...}`` once the imports are done (``false`` and the error
if one failed: the server then ends); then one JSON object per line on stdin (``argv``, ``cwd``, ``env``, ``stdout``,
``stderr``: file paths; ``script``: a Python script to run as ``python script argv...`` instead of
``lm_eval argv...``), answered by one line on stdout, ``{"pid": ...}`` when the child started, then
``{"status": ..., "cpu": ...}`` when it ended (``status`` as :attr:`subprocess.Popen.returncode`: the exit code, or
minus the signal that killed it; ``cpu``: the child's user + system seconds).
"""

from __future__ import annotations

import json
import os
import sys

from lm_eval_stereo import _autoload  # imported at every interpreter start-up (the plugin's .pth)

#: imported before the first fork: the third-party modules every ``lm_eval --model hf`` run of the tests imports anyway
#: (scipy.stats: by the plugin's tasks). The plugin's own modules are left to each run, so that a run imports them in
#: its own order, as a fresh process does
PRELOAD = (
    "torch",
    "transformers",
    "transformers.models.gpt2.modeling_gpt2",
    "transformers.models.llama.modeling_llama",
    "datasets",
    "lm_eval.__main__",
    "lm_eval.evaluator",
    "lm_eval.models.huggingface",
    "lm_eval.tasks",
    "scipy.stats",
    "pytablewriter",  # lm_eval's results table (``lm_eval.utils.make_table``): 0.04 CPU-s a run
)


def warm_caches() -> None:
    """Fill the module-level caches every run fills on first use, with what a fresh process would put there: the
    table of checkpoint conversions of ``transformers`` (built at the first ``from_pretrained``, about a thousand
    regular expressions: 0.1 of the 0.7 CPU-seconds of a small forked run); and torch's environment report, which
    lm_eval writes into every results file (``pretty_env_info``): it runs ``pip list`` and a dozen other commands
    (0.3 CPU-seconds a run) to describe the machine and the interpreter, which are the same for every run the server
    forks. Each run gets the report the server made, and what making it leaves in the environment."""
    import torch.utils.collect_env as collect_env
    from transformers.conversion_mapping import get_checkpoint_conversion_mapping

    get_checkpoint_conversion_mapping("gpt2")
    report = collect_env.get_pretty_env_info()

    def same_report() -> str:
        os.environ["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"  # as the report's ``pip list`` leaves it
        return report

    collect_env.get_pretty_env_info = same_report


def parse_lm_eval_tasks_once() -> None:
    """In a server whose runs have the plugin off: parse every YAML file of lm_eval's own task folder before forking,
    as lm_eval's task index reads them (``TaskIndex.build``, unresolved functions, includes merged: 6 of the 7
    CPU-seconds of a small plugin-off run, which indexes all of lm_eval's tasks). A run takes each file's parse the
    first time its index reads the file (a dict no one else holds: the server keeps no use of it, and the child's
    pages are its own) and parses again after that; a file whose parse failed is parsed, and fails, again. The index's
    other readings, of the run's ``--include_path`` and of anything with functions resolved, are lm_eval's own."""
    from pathlib import Path

    import lm_eval.tasks
    from lm_eval.tasks import _index

    read = _index.load_yaml
    parsed: dict[str, dict] = {}
    for path in _index.TaskIndex._iter_yaml_files(Path(lm_eval.tasks.__file__).parent):
        try:
            parsed[str(path)] = read(path, resolve_func=False, recursive=True)
        except Exception:  # noqa: BLE001 - the run's own parse raises it again, where lm_eval logs it
            continue

    def parsed_once(path: str | Path, *, resolve_func: bool = True, recursive: bool = True, **more):
        if not resolve_func and recursive and not more and str(path) in parsed:
            return parsed.pop(str(path))
        return read(path, resolve_func=resolve_func, recursive=recursive, **more)

    _index.load_yaml = parsed_once


def run_child(request: dict, bin_dir: str, preamble: bytes) -> None:
    """In the forked child: become ``lm_eval argv...`` in ``cwd`` writing to the given files, and exit as it would.
    ``preamble``: what the imports wrote to stderr, which a fresh process writes first."""
    if request.get("new_session"):  # as subprocess.Popen(start_new_session=True): killpg reaches it alone
        os.setsid()
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])  # differs from the server's only in what no import reads
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        if fd == 2 and path == request["stdout"]:  # one file for both, as stdout=f, stderr=f: one offset
            os.dup2(1, 2)
            continue
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(target, fd)
        os.close(target)
    os.write(2, preamble)
    nothing = os.open(os.devnull, os.O_RDONLY)  # never the server's request pipe
    os.dup2(nothing, 0)
    os.close(nothing)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115
    script = request.get("script")
    status = 0
    try:
        if script:  # ``python script args...``: the script's folder first on the import path
            import runpy

            sys.argv = [script, *request["argv"]]
            sys.path[0] = os.path.dirname(script)
            runpy.run_path(script, run_name="__main__")
        else:  # the ``lm_eval`` console script
            from lm_eval.__main__ import cli_evaluate

            sys.argv = [os.path.join(bin_dir, "lm_eval"), *request["argv"]]
            cli_evaluate()
    except SystemExit as stop:  # as the interpreter handles it
        if stop.code is None:
            status = 0
        elif isinstance(stop.code, int):
            status = stop.code
        else:
            print(stop.code, file=sys.stderr)
            status = 1
    except BaseException:  # noqa: BLE001 - an uncaught exception: the traceback and status 1, as a fresh process
        import traceback

        traceback.print_exc()
        status = 1
    try:  # the interpreter's exit: wait for the threads that are not daemons, then the atexit functions
        import atexit
        import threading

        threading._shutdown()
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001
                pass
        os._exit(status)


def preload() -> bytes:
    """Import :data:`PRELOAD` and :func:`warm_caches`; what the imports wrote to stderr (warnings), to be written again by every child. An
    import that fails ends the server (the caller then runs fresh processes, which show the error themselves)."""
    import importlib
    import tempfile

    with tempfile.TemporaryFile() as captured:
        saved = os.dup(2)
        os.dup2(captured.fileno(), 2)
        try:
            for name in PRELOAD:
                importlib.import_module(name)
            warm_caches()
            if not _autoload.enabled():
                parse_lm_eval_tasks_once()
            sys.stderr.flush()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        captured.seek(0)
        return captured.read()


def serve(bin_dir: str) -> None:
    answers = sys.stdout
    try:
        preamble = preload()
    except Exception as exc:  # noqa: BLE001
        print(json.dumps({"ready": False, "error": repr(exc)}), file=answers, flush=True)
        return
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"ready": True, "cpu": own.ru_utime + own.ru_stime}), file=answers, flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            answers = None
            run_child(request, bin_dir, preamble)
        print(json.dumps({"pid": pid}), file=answers, flush=True)
        _, wait_status, usage = os.wait4(pid, 0)
        status = os.waitstatus_to_exitcode(wait_status)
        print(json.dumps({"status": status, "cpu": usage.ru_utime + usage.ru_stime}), file=answers, flush=True)


if __name__ == "__main__":
    # the import path of the console script ``bin/lm_eval``: its own folder first, not this file's
    sys.path[0] = sys.argv[1]
    serve(sys.argv[1])
    # every child is reaped: end at once, without the interpreter's finalisation of torch and the rest (seconds)
    os._exit(0)
