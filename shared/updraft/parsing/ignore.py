"""``.airflowignore`` rules, in both of Airflow's syntaxes.

Airflow reads ``.airflowignore`` files while walking the DAGs folder: a file's
patterns apply to its own directory and everything below it. The default
syntax (Airflow >= 3) is ``glob`` (gitignore-style wildmatch, with ``!``
negation and last-match-wins); ``regexp`` treats each line as an unanchored
regular expression searched in the path relative to the DAGs folder. Airflow
uses the ``pathspec`` package for glob; this is a small translation of the
same rules so the parser needs no extra dependency.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

IGNORE_FILE = ".airflowignore"
_COMMENT = re.compile(r"\s*#.*")


@dataclass(frozen=True)
class GlobRule:
    regex: re.Pattern[str]
    include: bool  # True: ignore the match; False ("!pattern"): un-ignore it
    relative_to: Path | None  # anchored patterns match from the ignore file's directory


@dataclass(frozen=True)
class RegexpRule:
    regex: re.Pattern[str]
    base_dir: Path


Rule = GlobRule | RegexpRule


def _translate_glob(body: str) -> str:
    """Translate one gitignore wildmatch body (no leading ``/``/``!``) into a regex."""
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if body.startswith("**/", i) and (i == 0 or body[i - 1] == "/"):
            out.append("(?:.*/)?")
            i += 3
        elif body.startswith("**", i) and i + 2 == n and (i == 0 or body[i - 1] == "/"):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = body.find("]", i + 2 if body[i + 1 : i + 2] in ("!", "]") else i + 1)
            if end == -1:
                out.append(re.escape(c))
                i += 1
                continue
            inner = body[i + 1 : end]
            if inner.startswith("!"):
                inner = "^" + inner[1:]
            out.append("[" + inner.replace("\\", "\\\\") + "]")
            i = end + 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(body[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def compile_glob(pattern: str, definition_file: Path) -> GlobRule | None:
    pattern = pattern.rstrip()
    if not pattern or pattern.strip() == "/":
        return None
    include = True
    if pattern.startswith("!"):
        include = False
        pattern = pattern[1:]
    elif pattern.startswith("\\!") or pattern.startswith("\\#"):
        pattern = pattern[1:]
    dir_only = pattern.endswith("/")
    body = pattern.rstrip("/")
    anchored = body.startswith("/") or "/" in body
    body = body.lstrip("/")
    if not body:
        return None
    regex = _translate_glob(body)
    prefix = "" if anchored else "(?:.+/)?"
    suffix = "/.*" if dir_only else "(?:/.*)?"
    return GlobRule(
        regex=re.compile(f"^{prefix}{regex}{suffix}$", re.DOTALL),
        include=include,
        relative_to=definition_file.parent if anchored else None,
    )


def compile_regexp(pattern: str, base_dir: Path) -> RegexpRule | None:
    try:
        return RegexpRule(re.compile(pattern), base_dir)
    except re.error:
        return None


def read_rules(ignore_file: Path, base_dir: Path, syntax: str) -> list[Rule]:
    """Parse one ``.airflowignore``; invalid patterns are dropped, as in Airflow."""
    try:
        text = ignore_file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    rules: list[Rule] = []
    for raw in text.split("\n"):
        line = _COMMENT.sub("", raw)
        if not line:
            continue
        rule = compile_regexp(line, base_dir) if syntax == "regexp" else compile_glob(line, ignore_file)
        if rule is not None:
            rules.append(rule)
    return rules


def is_ignored(path: Path, rules: list[Rule], *, is_dir: bool) -> bool:
    """Whether ``path`` (absolute) is ignored; for glob the last matching rule wins."""
    ignored = False
    for rule in rules:
        if isinstance(rule, RegexpRule):
            if rule.regex.search(str(path.relative_to(rule.base_dir))) is not None:
                return True
            continue
        rel = path.relative_to(rule.relative_to).as_posix() if rule.relative_to else path.name
        if is_dir:
            rel += "/"
        if rule.regex.match(rel):
            ignored = rule.include
    return ignored
