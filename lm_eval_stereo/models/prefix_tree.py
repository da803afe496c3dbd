"""Pack token-level log-likelihood requests into prefix trees, one tree per model input row (used by ``hf-prefix``).

A causal LM scores continuation token ``t_j`` from the logits at position ``j - 1`` of ``t_0 .. t_{j-1}``. Requests
whose input tokens start alike (the same context; for StereoSet's intrasentence items even the same first words of the
continuation) need those shared tokens computed once: the requests' input sequences are inserted into a trie, one
node per distinct prefix, and the trie's nodes become one input row. Every node attends to its ancestors and itself and
sits at position = its depth, so it sees exactly what it would see in its own unpacked sequence.

Sequences are inserted in lexicographic order, which numbers the nodes in pre-order: the descendants of node ``i``
are the contiguous nodes ``i + 1 .. end[i] - 1``, so "``k`` is an ancestor-or-self of ``q``" is ``k <= q < end[k]``.

A sequence joins the current row when the row stays within ``max_row`` nodes (the model's window) and the work it
saves exceeds the attention work it adds: ``shared > attention_cost * row_nodes * added``. A shared token saves its
linear layers (about ``12 d^2`` multiply-adds per layer for hidden size ``d``); ``added`` nodes in a row of ``W`` nodes
add about ``4 W d`` to the dense (masked) attention, so the break-even is ``W * added / (3 d)``; ``hf-prefix`` passes
``attention_cost = 1 / d``, counting attention 3x for its lower efficiency. Unrelated sequences that share only a BOS
token therefore stay in rows of their own. A sequence longer than ``max_tree_depth`` (a sliding-window model's
window) is always alone in a row, forwarded unmasked exactly like lm_eval's ``hf`` does.

Rows without padding (:func:`fill_rows`): the trees are then laid side by side into rows, longest first, best fit,
the rows as wide as the longest tree (trees under a quarter of it fill the wide rows' gaps, then narrower rows). Each tree keeps its pre-order numbering shifted by its offset in the row and its
positions (depths) restart at 0, so "``k <= q < end[k]``" still says exactly "``k`` is an ancestor-or-self of ``q``":
a node never sees another tree's nodes. The forwarded positions then equal the forwarded tokens but for the unfilled
ends of the rows (the fewer, the more trees there are).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class TokenRequest:
    """One request after lm_eval's encoding and left truncation.

    ``window`` is ``(context + continuation)[-(max_length + 1):]``; the model reads ``window[:-1]`` and the last
    ``n_scored`` tokens of ``window`` are the continuation being scored.
    """

    index: int
    window: tuple[int, ...]
    n_scored: int

    @property
    def inputs(self) -> tuple[int, ...]:
        return self.window[:-1]


@dataclass
class Row:
    """A prefix tree laid out as one model input row (nodes in pre-order).

    ``tokens``, ``depths`` (position ids) and ``ends`` (one past the last descendant) per node; ``scored`` holds, per
    request, its index, the nodes whose logits predict its continuation tokens, and those tokens.
    """

    tokens: list[int] = field(default_factory=list)
    depths: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)
    scored: list[tuple[int, list[int], list[int]]] = field(default_factory=list)
    _parents: list[int] = field(default_factory=list, repr=False)
    _path: list[int] = field(default_factory=list, repr=False)

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def is_chain(self) -> bool:
        """True when the row is one plain sequence (no branching): it needs no tree attention mask."""
        return all(parent == node - 1 for node, parent in enumerate(self._parents))

    def add(self, request: TokenRequest, shared: int) -> None:
        """Insert ``request``'s inputs, reusing the first ``shared`` nodes of the previously inserted path."""
        inputs = request.inputs
        path = self._path[:shared]
        for depth in range(shared, len(inputs)):
            parent = path[-1] if path else -1
            node = len(self.tokens)
            self.tokens.append(inputs[depth])
            self.depths.append(depth)
            self._parents.append(parent)
            path.append(node)
        self._path = path
        first = len(inputs) - request.n_scored
        self.scored.append((request.index, path[first:], list(request.window[first + 1 :])))

    def finish(self) -> Row:
        """Compute the pre-order subtree ends."""
        self.ends = [node + 1 for node in range(len(self.tokens))]
        for node in range(len(self.tokens) - 1, -1, -1):
            parent = self._parents[node]
            if parent >= 0:
                self.ends[parent] = max(self.ends[parent], self.ends[node])
        return self

    def append_tree(self, tree: Row) -> None:
        """Lay the finished ``tree`` after this row's nodes: its node numbers shift by the row's length, its depths
        (positions) and its roots (no parent) stay."""
        offset = len(self.tokens)
        self.tokens += tree.tokens
        self.depths += tree.depths
        self.ends += [end + offset for end in tree.ends]
        self._parents += [parent + offset if parent >= 0 else -1 for parent in tree._parents]
        self.scored += [(index, [node + offset for node in nodes], tokens) for index, nodes, tokens in tree.scored]


def truncate(encoded: Sequence[tuple[Sequence[int], Sequence[int]]], max_length: int) -> list[TokenRequest]:
    """lm_eval ``hf``'s checks and left truncation of (context, continuation) token pairs."""
    out = []
    for index, (context, continuation) in enumerate(encoded):
        if not context or not continuation or len(continuation) > max_length:
            raise ValueError(
                f"request {index}: context and continuation must be non-empty and the continuation at most "
                f"{max_length} tokens (got {len(context)} and {len(continuation)})"
            )
        out.append(TokenRequest(index, tuple([*context, *continuation][-(max_length + 1) :]), len(continuation)))
    return out


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of ``a`` and ``b``."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def pack_rows(
    requests: Sequence[TokenRequest],
    max_row: int,
    max_tree_depth: int | None = None,
    attention_cost: float = 0.0,
) -> list[Row]:
    """Pack ``requests`` into prefix-tree rows of at most ``max_row`` nodes (see the module docstring)."""
    rows: list[Row] = []
    current: Row | None = None
    previous: tuple[int, ...] = ()
    for request in sorted(requests, key=lambda r: (r.inputs, r.n_scored)):
        inputs = request.inputs
        alone = max_tree_depth is not None and len(inputs) > max_tree_depth
        shared = common_prefix(previous, inputs) if current is not None else 0
        added = len(inputs) - shared
        joins = current is not None and shared > attention_cost * len(current) * added
        if not joins or alone or len(current) + added > max_row:
            current = Row()
            rows.append(current)
            shared = 0
        current.add(request, shared)
        previous = inputs
        if alone:
            current = None
    return [row.finish() for row in rows]


#: a new row is as wide as the tree that opens it, unless that tree is longer than ``1 / WIDTH_SPAN`` of the rows
#: opened so far: then the row takes their width
WIDTH_SPAN = 4


def fill_rows(trees: Sequence[Row], max_tree_depth: int | None = None, width: int | None = None) -> list[Row]:
    """Lay ``trees`` side by side into rows (see the module docstring): longest first, each tree into the fullest row
    it fits (best fit), else into a new row.

    A new row is as wide as the rows opened before it while its tree is longer than a quarter of that
    (:data:`WIDTH_SPAN`), else as wide as its tree: short trees fill the gaps of wide rows (positions forwarded anyway)
    but never open one, so that a short tree does not pay for attention over a far wider row (the mask is dense).
    ``width`` makes every row that wide (at least the longest tree's). A tree deeper than ``max_tree_depth`` (a
    sliding-window model's window) stays alone in its row.
    """
    rows: list[Row] = []
    free: list[tuple[int, int]] = []  # (free nodes, row number) of the rows with room left, sorted
    row_width = 0
    for tree in sorted(trees, key=lambda tree: -len(tree)):
        if max_tree_depth is not None and max(tree.depths) >= max_tree_depth:
            rows.append(tree)
            continue
        slot = bisect.bisect_left(free, (len(tree), -1))
        if slot < len(free):
            room, number = free.pop(slot)
        else:
            if width:
                row_width = max(width, len(tree), row_width)
            elif WIDTH_SPAN * len(tree) <= row_width or not row_width:
                row_width = len(tree)
            rows.append(Row())
            number, room = len(rows) - 1, row_width
        rows[number].append_tree(tree)
        room -= len(tree)
        if room:
            bisect.insort(free, (room, number))
    return rows
