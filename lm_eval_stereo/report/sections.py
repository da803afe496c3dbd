"""The report's sections in their one order: the markdown (``--details``) and the HTML page render them from
:data:`SECTIONS`, and docs/REPORT.md's list of them is generated from it (``scripts/readme_tables.py``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Section:
    """One section: ``key`` (the renderers' name for it), ``title`` (its heading; ``titles`` when the markdown heads
    its parts apart) and ``where``: only one of the two outputs holds it (``html``), else both."""

    key: str
    title: str
    titles: tuple[str, ...] = ()
    where: str = ""

    @property
    def headings(self) -> tuple[str, ...]:
        """The markdown's headings of the section."""
        return self.titles or (self.title,)


#: the report's sections, first to last (each shown where it has something to show)
SECTIONS = (
    Section("results", "Results"),
    Section("headlines", "Every headline", ("Reading", "Summary")),
    Section("capability_summary", "Bias next to capability"),
    Section("models_paired", "Model vs model (paired)"),
    Section("languages_paired", "Language vs language (paired)"),
    Section("rankings", "Rankings against the reference language"),
    Section("figures", "Figures", where="html"),
    Section("details", "Details"),
    Section("lm_eval_tasks", "lm_eval's own tasks"),
    Section("provenance", "Provenance"),
)

#: each section's heading by key
SECTION_TITLES = {section.key: section.title for section in SECTIONS}


def in_order() -> str:
    """The sections as docs/REPORT.md lists them."""
    said = []
    for section in SECTIONS:
        name = f"**{section.title}**"
        if section.titles:
            name += f" (in the markdown: {' and '.join(f'**{title}**' for title in section.titles)})"
        said.append(name + (" (the HTML page only)" if section.where == "html" else ""))
    return "The sections, in this order in the markdown (`--details`) and the HTML page alike: " + ", ".join(said) + "."
