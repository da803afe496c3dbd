"""The report's reading of an ideal: :class:`~lm_eval_stereo.results.ideals.Ideal`, from the results layer."""

from lm_eval_stereo.results.ideals import Direction, Ideal

__all__ = ["Direction", "Ideal"]
