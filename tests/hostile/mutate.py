"""Seeded random edits of a text model file, for the mutation fuzz test.

Each mutant applies one to three edits: replace a number with a hostile
value, misspell a word, delete / duplicate / swap / re-indent a line, cut the
file short, or insert a hostile character.  The same seed gives the same
mutants on every machine.
"""

from __future__ import annotations

import random
import re

HOSTILE_NUMBERS = ["nan", "inf", "-inf", "-1", "0", "1e308", "-1e308", "1e-308", "abc", "", "1.0e7",
                   "99999999999999999999999", "1e400", "0x10", "true", "[1, 2]", "{}", "null", "-0.0",
                   "1 2 3", "5 1 1", ".nan", "1e12", "2.5"]
HOSTILE_CHARS = ["\x00", "\t", "'", '"', "[", "]", "{", "}", ":", "&a", "*a", "<", ">", "&", "\u00e9", "\ufeff",
                 "\n", "- ", "#", "%", "!!python/object:os.system", "<!--", "]]>"]
NUMBER = re.compile(r"-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")
WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9]{2,}")


def _replace_number(text: str, rng: random.Random) -> str:
    found = list(NUMBER.finditer(text))
    if not found:
        return text
    m = rng.choice(found)
    return text[:m.start()] + rng.choice(HOSTILE_NUMBERS) + text[m.end():]


def _misspell(text: str, rng: random.Random) -> str:
    found = list(WORD.finditer(text))
    if not found:
        return text
    m = rng.choice(found)
    w = list(m.group())
    i = rng.randrange(len(w))
    op = rng.randrange(3)
    if op == 0:
        del w[i]
    elif op == 1 and i + 1 < len(w):
        w[i], w[i + 1] = w[i + 1], w[i]
    else:
        w.insert(i, rng.choice("aeiosxz"))
    return text[:m.start()] + "".join(w) + text[m.end():]


def _line_edit(text: str, rng: random.Random) -> str:
    lines = text.split("\n")
    i = rng.randrange(len(lines))
    op = rng.randrange(4)
    if op == 0:
        del lines[i]
    elif op == 1:
        lines.insert(i, lines[i])
    elif op == 2:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    else:
        lines[i] = " " * rng.choice([1, 2, 3, 4, 8]) + lines[i]
    return "\n".join(lines)


def _truncate(text: str, rng: random.Random) -> str:
    return text[:rng.randrange(len(text) + 1)]


def _insert_char(text: str, rng: random.Random) -> str:
    i = rng.randrange(len(text) + 1)
    return text[:i] + rng.choice(HOSTILE_CHARS) + text[i:]


EDITS = [_replace_number, _replace_number, _replace_number, _misspell, _misspell, _line_edit, _truncate,
         _insert_char]


def mutant(text: str, rng: random.Random) -> str:
    """One mutant of ``text``: one to three random edits."""
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        text = rng.choice(EDITS)(text, rng)
    return text
