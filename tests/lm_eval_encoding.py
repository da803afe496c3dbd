"""How lm_eval's ``hf`` backend encodes one log-likelihood request, written out in the tests, independently of lm_eval
and of the plugin, for the tests that count what a tokenizer does to a request's split."""

from __future__ import annotations


def lm_eval_encoding(tokenizer, context: str, continuation: str) -> tuple[list[int], list[int]]:
    """(context ids, continuation ids) of one request as lm_eval's ``HFLM._encode_pair`` makes them: the context's
    trailing whitespace moves to the continuation, the whole is encoded once and cut after the context's own token
    count."""
    spaces = len(context) - len(context.rstrip())
    if spaces:
        context, continuation = context[:-spaces], context[-spaces:] + continuation
    whole = tokenizer.encode(context + continuation, add_special_tokens=False)
    cut = len(tokenizer.encode(context, add_special_tokens=False))
    return whole[:cut], whole[cut:]


def split_survives(tokenizer, context: str, continuation: str) -> bool:
    """Whether that encoding cuts the request where its strings meet: the context ids decode to the context (trailing
    whitespace moved) and at least one continuation id is left."""
    context_ids, continuation_ids = lm_eval_encoding(tokenizer, context, continuation)
    text = tokenizer.decode(context_ids, clean_up_tokenization_spaces=False)
    return bool(continuation_ids) and text == context.rstrip()
