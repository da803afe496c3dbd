"""Every relative link of every markdown page of the repository resolves: the file (or folder) it names exists, and
its ``#anchor`` is a heading of that page (as GitHub makes a heading's anchor) or an explicit ``id``/``name``. Links
to the web (``https:``, ``mailto:``) are not followed; links inside code are not links."""

from __future__ import annotations

import re
import subprocess
import sys
import unicodedata
from pathlib import Path
from urllib.parse import unquote

import pytest
from lm_eval_runner import REPO

#: ``[text](target)`` or ``![alt](target)``, the target up to a space (a title may follow) or the closing parenthesis
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
EXPLICIT_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")
#: hand-written parts of a generated page, and the page they are written into, from whose folder their links resolve
INCLUDED = {"docs/real_models/intro.md": "docs/REAL_MODELS.md"}


def pages() -> list[Path]:
    """The repository's markdown pages under version control (a page not yet added counts too)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.md"],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    return sorted(REPO / name for name in listed if (REPO / name).is_file())


def prose_lines(text: str) -> list[str]:
    """The page's lines outside fenced code blocks, inline code removed."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(INLINE_CODE.sub("", line))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: its text (links by their text, no markup), lower case, punctuation dropped but
    ``-`` and ``_``, spaces as ``-``."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text).lower()
    kept = "".join(char for char in text if char in " -_" or unicodedata.category(char)[0] in "LN" or char.isdigit())
    return kept.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a page: each heading's slug (``-1``, ``-2`` for repeats, as GitHub numbers them) and every
    explicit ``<a id=...>``."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    text = page.read_text(encoding="utf-8")
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        found.update(EXPLICIT_ANCHOR.findall(line))
        if heading := HEADING.match(line):
            base = slug(heading[1])
            count = seen.get(base, 0)
            found.add(base if count == 0 else f"{base}-{count}")
            seen[base] = count + 1
    return found


def broken_links(page: Path) -> list[str]:
    """The page's relative links that do not resolve, each as ``page: target (why)``."""
    broken = []
    folder = (REPO / INCLUDED[name]).parent if (name := page.relative_to(REPO).as_posix()) in INCLUDED else page.parent
    for line in prose_lines(page.read_text(encoding="utf-8")):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, ...
                continue
            path, _, anchor = unquote(target).partition("#")
            destination = (folder / path).resolve() if path else page
            where = f"{page.relative_to(REPO)}: {target}"
            if not destination.exists():
                broken.append(f"{where} (no such file)")
            elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
                broken.append(f"{where} (no heading #{anchor} in {destination.relative_to(REPO)})")
    return broken


def test_every_relative_link_of_every_page_resolves() -> None:
    found = pages()
    assert REPO / "README.md" in found and REPO / "docs" / "RUNNING.md" in found and len(found) > 30
    broken = [problem for page in found for problem in broken_links(page)]
    assert broken == []


def test_the_readme_links_the_pages_it_names() -> None:
    """The README's links reach the pages and sections a newcomer reads next."""
    targets = {target for line in prose_lines((REPO / "README.md").read_text()) for target in LINK.findall(line)}
    for wanted in (
        "docs/RUNNING.md#set-up",
        "docs/TESTED.md",
        "docs/ARCHITECTURE.md",
        "docs/RUNNING.md#evaluating-a-served-model",
    ):
        assert wanted in targets


@pytest.mark.parametrize(
    ("link", "why"),
    [
        ("[a](missing.md)", "no such file"),
        ("[a](other.md#no-such-heading)", "no heading #no-such-heading"),
        ("[a](#not-here)", "no heading #not-here"),
    ],
)
def test_a_missing_file_or_heading_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, link: str, why: str):
    monkeypatch.setattr(sys.modules[__name__], "REPO", tmp_path)
    (tmp_path / "other.md").write_text("# Other page\n\n## A `code` heading: with (punctuation)\n", encoding="utf-8")
    page = tmp_path / "page.md"
    fine = "[b](other.md#a-code-heading-with-punctuation) [c](other.md) `[d](in-code.md)` [e](https://example.org)"
    page.write_text(f"# Page\n\n{fine}\n\n```\n[f](in-a-fence.md)\n```\n\n{link}\n", encoding="utf-8")
    (problem,) = broken_links(page)
    assert problem.startswith(f"page.md: {link[4:-1]} (") and why in problem
