"""The packages Updraft itself runs with, pinned: what an environment's requirements must agree with.

DAG code runs in processes where Updraft's packages come first on ``sys.path`` (``dag_packages``): a user's
``botocore`` of another version would be installed and never imported, so the DAG would silently run against a
version it did not ask for. Instead every distribution Updraft needs at run time (its ``dependencies``, followed
through theirs) is a constraint at the version installed here; pip then either resolves the user's requirements
within them or fails, and the installer names the conflicting packages (``install``).
"""

from __future__ import annotations

from importlib import metadata

from packaging.requirements import InvalidRequirement, Requirement

from updraft.requirements.lines import canonical


def runtime_versions(root: str = "updraft") -> dict[str, str]:
    """``{canonical name: version}`` of ``root``'s run-time dependencies, transitively, as installed here (extras
    a dependency names are followed; the ``dev``/``infra`` extras of ``root`` are not)."""
    found: dict[str, str] = {}
    pending: list[tuple[str, frozenset[str]]] = [(root, frozenset())]
    while pending:
        name, extras = pending.pop()
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # an optional dependency this platform does not install
        key = canonical(dist.metadata["Name"])
        if key != canonical(root):
            found[key] = dist.version
        for text in dist.requires or []:
            try:
                requirement = Requirement(text)
            except InvalidRequirement:
                continue
            if not _applies(requirement, extras):
                continue
            child = canonical(requirement.name)
            if child not in found or requirement.extras:
                pending.append((child, frozenset(requirement.extras)))
                found.setdefault(child, "")
    return {name: version for name, version in sorted(found.items()) if version}


def _applies(requirement: Requirement, extras: frozenset[str]) -> bool:
    if requirement.marker is None:
        return True
    return any(requirement.marker.evaluate({"extra": extra}) for extra in (*extras, ""))


def constraint_lines(versions: dict[str, str]) -> list[str]:
    return [f"{name}=={version}" for name, version in versions.items()]
