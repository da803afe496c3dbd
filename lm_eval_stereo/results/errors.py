"""The one error of the results layer: a results file or path that the report or the export cannot use."""


class ReportError(Exception):
    """A results file or path the report cannot use; the message names it."""
