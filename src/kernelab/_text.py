"""Small text helpers shared by the source and SASS readers (no dependencies: analysis and gpu both import it)."""

from __future__ import annotations


def split_top_level(s: str, opens: str, closes: str) -> list[str]:
    """s split at the commas outside the brackets in `opens` / `closes`, each part stripped; an empty
    last part (a trailing comma, or s blank) is dropped."""
    parts, depth, cur = [], 0, []
    for ch in s:
        if ch in opens:
            depth += 1
        elif ch in closes:
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts
