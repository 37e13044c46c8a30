"""raw/overrides.toml: matches a person forces or forbids; they win over the algorithm."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from pipeline.errors import ManifestError
from pipeline.ingest.manifest import key_line, read_utf8

OVERRIDES_NAME = "overrides.toml"
KEYS = ("from", "to", "old", "new", "note")


@dataclass(frozen=True, slots=True)
class Overrides:
    force: frozenset[tuple[str, str, str, str]] = frozenset()  # (from edition, to edition, old id, new id)
    forbid: frozenset[tuple[str, str, str, str]] = frozenset()

    def for_pair(self, old_edition: str, new_edition: str) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
        pick = lambda items: {(o, n) for a, b, o, n in items if (a, b) == (old_edition, new_edition)}  # noqa: E731
        return pick(self.force), pick(self.forbid)


def read_overrides(raw: Path) -> Overrides:
    path = raw / OVERRIDES_NAME
    if not path.exists():
        return Overrides()
    text = read_utf8(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ManifestError(f"not valid TOML: {e}", path=path, line=getattr(e, "lineno", None)) from None
    lines = text.splitlines()
    found: dict[str, set] = {"force": set(), "forbid": set()}
    for section in data:
        if section not in found:
            raise ManifestError(f"unknown table {section!r} (expected [[force]] or [[forbid]])", path=path,
                                line=key_line(text, section, 0))
        headers = [i + 1 for i, line in enumerate(lines) if line.strip() == f"[[{section}]]"]
        for n, item in enumerate(data[section]):
            line = headers[n] if n < len(headers) else 0
            for key in item:
                if key not in KEYS:
                    raise ManifestError(f"unknown key {key!r}; allowed: {', '.join(KEYS)}", path=path,
                                        line=key_line(text, key, line))
            missing = [k for k in KEYS[:4] if not isinstance(item.get(k), str) or not item.get(k)]
            if missing:
                raise ManifestError(f"[[{section}]] needs {', '.join(missing)}", path=path, line=line)
            found[section].add((item["from"], item["to"], item["old"], item["new"]))
    return Overrides(frozenset(found["force"]), frozenset(found["forbid"]))
