"""Names that look alike: a skeleton after Unicode's TR39, so `mаnagers` (a Cyrillic
а) and `managers` compare equal.

`skeleton(text)` follows TR39's definition on Unicode's confusables table, as the
confusable-homoglyphs package ships it: decompose (NFD), drop the characters that
render as nothing (format characters such as a zero-width space or a direction
mark, and variation selectors), map each character to its prototype, decompose
again. The package keeps the table as pairs in both directions, grouped here into
its classes (a prototype and the characters that map to it: in Unicode's table
every class is one prototype and its sources), each class mapped to its
prototype, or, for a pair, to the smaller character: the same skeleton either way.

`look_alike(a, b)` compares two names by two keys of each, taken from their NFKC
forms (`ｍ` is `m`, `ﬁ` is `fi`): the skeleton as it is, which keeps capitals apart
(`IT` and `lT` look alike, `it` does not), and the skeleton case-folded until it
no longer changes, which meets a name in any case (`MANAGERS`, `0ps` and `ops`: TR39
maps the digit zero to the capital O).
"""

import unicodedata
from collections import defaultdict
from functools import cache, lru_cache

from confusable_homoglyphs.confusables import confusables_data

# Direction marks that wrap right-to-left characters in the package's table.
_MARKS = str.maketrans("", "", "\u200e\u200f")
# Variation selectors change a glyph's look a little, never which letter it is.
_SELECTORS = frozenset(
    [*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0), 0x180B, 0x180C, 0x180D, 0x180F]
)


def look_alike(one: str, other: str) -> bool:
    """Whether two names are confusable: equal, or only in case, or in look."""
    pairs = zip(lookalike_keys(one), lookalike_keys(other), strict=True)
    return any(a == b for a, b in pairs)


@lru_cache(maxsize=4096)
def lookalike_keys(name: str) -> tuple[str, str]:
    """What `name` is compared by, key by key (see look_alike)."""
    normal = unicodedata.normalize("NFKC", name)
    folded = normal
    for _ in range(4):
        refolded = skeleton(folded).casefold()
        if refolded == folded:
            break
        folded = refolded
    return skeleton(normal), folded


def skeleton(text: str) -> str:
    """TR39's skeleton: equal for two texts that look alike."""
    prototypes = _prototypes()
    current = unicodedata.normalize("NFD", _visible(text))
    # A prototype of several characters (m → rn) maps its own characters again.
    for _ in range(4):
        mapped = "".join(prototypes.get(char, char) for char in current)
        mapped = unicodedata.normalize("NFD", mapped)
        if mapped == current:
            break
        current = mapped
    return current


def _visible(text: str) -> str:
    return "".join(
        char
        for char in text
        if unicodedata.category(char) != "Cf" and ord(char) not in _SELECTORS
    )


@cache
def _prototypes() -> dict[str, str]:
    """Each single character of the table to its class's prototype."""
    pairs: dict[str, set[str]] = defaultdict(set)
    for source, targets in confusables_data.items():
        for target in targets:
            one, other = source.translate(_MARKS), target["c"].translate(_MARKS)
            if one != other:
                pairs[one].add(other)
                pairs[other].add(one)
    prototypes: dict[str, str] = {}
    for members in _classes(pairs):
        prototype = _prototype_of(members, pairs)
        prototypes.update((member, prototype) for member in members if len(member) == 1)
    return prototypes


def _classes(pairs: dict[str, set[str]]) -> list[set[str]]:
    """The connected groups of the table's pairs."""
    seen: set[str] = set()
    groups = []
    for start in pairs:
        if start in seen:
            continue
        group, pending = set(), [start]
        while pending:
            member = pending.pop()
            if member not in group:
                group.add(member)
                pending.extend(pairs[member] - group)
        seen |= group
        groups.append(group)
    return groups


def _prototype_of(members: set[str], pairs: dict[str, set[str]]) -> str:
    """The one every other member maps to: a sequence (only a prototype is one),
    else the member paired with all the others, else (a pair) the smaller."""
    sequences = sorted(member for member in members if len(member) > 1)
    if sequences:
        return sequences[0]
    hubs = sorted(m for m in members if len(pairs[m]) == len(members) - 1)
    return hubs[0] if len(members) > 2 else min(members)
