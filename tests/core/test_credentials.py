"""Unit tests of :mod:`lm_eval_stereo.core.credentials`: which texts are credentials, and how they are hidden."""

from __future__ import annotations

from lm_eval_stereo.core.credentials import REDACTED, redact_deep, secrets_of


def test_keys_of_every_form_are_credentials():
    found = secrets_of("api_key=sk-live-123,base_url=http://user:pw-9876@host/v1?api-key=q-5555,header=Bearer tok-42")
    assert {"sk-live-123", "pw-9876", "q-5555", "tok-42"} <= found


def test_a_no_key_placeholder_is_no_credential_and_stays_in_texts():
    """``EMPTY`` (vLLM's "no key") and its kin, alone or after a scheme, are not searched for: a document's own word
    stays; a real key beside them still is."""
    found = secrets_of(
        {"api_key": "EMPTY", "auth_token": "sk-no-key-required", "header": {"Authorization": "Bearer EMPTY"}}
    )
    assert found == frozenset()
    found = secrets_of({"api_key": "EMPTY", "token": "sk-real-7788"})
    assert found == {"sk-real-7788"}
    samples = {"doc": "The box is EMPTY.", "resps": ["sk-real-7788 leaked"]}
    assert redact_deep(samples, found) == {"doc": "The box is EMPTY.", "resps": [f"{REDACTED} leaked"]}
