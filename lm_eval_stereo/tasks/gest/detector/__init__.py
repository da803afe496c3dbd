"""Grammatical gender of the first person in a Slavic sentence (the GEST MT detector; see DETECTOR.md)."""

from lm_eval_stereo.tasks.gest.detector.slavic_gender import first_person_gender

__all__ = ["first_person_gender"]
