"""`[tool.aoti-lsp]` in pyproject.toml, plus command-line / editor overrides.

Keys: select, ignore, extend-select, per-file-ignores, exclude, extend-exclude, and
per-rule options under [tool.aoti-lsp.options]. Loaded configs are cached by file mtime,
so an edited pyproject.toml is picked up (Fixit's LSP never noticed).
"""

from __future__ import annotations

import os
import sys
from functools import lru_cache

from aoti_lsp.analysis.records import record, replace, set_field

DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__", "node_modules",
    "build", "dist", ".mypy_cache", ".pytest_cache", ".ruff_cache", "site-packages",
)


class ConfigError(Exception):
    pass


@record("select", "ignore", "per_file_ignores", "exclude", "options", "root", "source", frozen=True,
        compare=("select", "ignore", "per_file_ignores", "exclude", "root", "source"))
class Config:
    def __init__(self, select: tuple[str, ...] = ("ALL",), ignore: tuple[str, ...] = (),
                 per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = (),
                 exclude: tuple[str, ...] = DEFAULT_EXCLUDE, options: dict | None = None, root: str = ".",
                 source: str | None = None):
        set_field(self, "select", select)
        set_field(self, "ignore", ignore)
        set_field(self, "per_file_ignores", per_file_ignores)
        set_field(self, "exclude", exclude)
        set_field(self, "options", {} if options is None else options)  # neither compared nor hashed
        set_field(self, "root", root)  # folder that relative patterns are matched from
        set_field(self, "source", source)  # the pyproject.toml it came from

    def enabled(self, code: str, path: str | None = None) -> bool:
        def hit(prefixes):
            return any(p == "ALL" or code.startswith(p) for p in prefixes)

        if not hit(self.select) or hit(self.ignore):
            return False
        if path and self.per_file_ignores:
            rel = self.relative(path)
            for pattern, codes in self.per_file_ignores:
                if _match(rel, pattern) and hit(codes):
                    return False
        return True

    def relative(self, path: str) -> str:
        try:
            return os.path.relpath(os.path.abspath(path), os.path.abspath(self.root)).replace(os.sep, "/")
        except ValueError:
            return path

    def excluded(self, path: str, base: str | None = None) -> bool:
        """Patterns with a "/" match the path from the config's folder; bare names match any
        folder or file name below `base` (the path the user gave), so checking a folder that
        itself sits in, say, site-packages still works."""
        literal, globs, anchored = _compiled(self.exclude)
        below = os.path.relpath(os.path.abspath(path), os.path.abspath(base)) if base else self.relative(path)
        parts = [p for p in below.replace(os.sep, "/").split("/") if p not in (".", "..")]
        if not literal.isdisjoint(parts) or any(g(p) for g in globs for p in parts):
            return True
        if anchored:
            rel = self.relative(path)
            return any(_match(rel, pattern) for pattern in anchored)
        return False

    def with_overrides(self, select=None, ignore=None, extend_select=None, exclude=None) -> "Config":
        cfg = self
        if select:
            cfg = replace(cfg, select=tuple(c.upper() for c in select))
        if extend_select:
            cfg = replace(cfg, select=cfg.select + tuple(c.upper() for c in extend_select))
        if ignore:
            cfg = replace(cfg, ignore=cfg.ignore + tuple(c.upper() for c in ignore))
        if exclude:
            cfg = replace(cfg, exclude=cfg.exclude + tuple(exclude))
        return cfg


@lru_cache(maxsize=32)
def _compiled(exclude: tuple[str, ...]):
    """(plain names, compiled name globs, patterns with a "/") of an exclude list."""
    bare = [p.rstrip("/") for p in exclude if "/" not in p.rstrip("/")]
    literal = frozenset(p for p in bare if not any(c in p for c in "*?["))
    globs = ()
    if len(literal) < len(bare):  # fnmatch imports re (~7 ms of a one-file run): only for a glob
        import fnmatch
        import re

        globs = tuple(re.compile(fnmatch.translate(p)).match for p in bare if p not in literal)
    return literal, globs, tuple(p for p in exclude if "/" in p.rstrip("/"))


def _match(rel: str, pattern: str) -> bool:
    import fnmatch

    pattern = pattern.rstrip("/")
    return fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(rel, f"{pattern}/*") or fnmatch.fnmatch(rel, f"*/{pattern}")


_cache: dict[str, tuple[float, Config]] = {}


def _resolved(start: str) -> str:
    """The real path (os.path: pathlib costs ~3 ms to import on every check); a symlink loop
    stays as it is, without Path.resolve's RuntimeError (3.11)."""
    return os.path.realpath(start)


def nearest(folder: str, found) -> str | None:
    """The first folder at or above `folder` (absolute) for which `found(folder)` holds."""
    while not found(folder):
        up = os.path.dirname(folder)
        if up == folder:
            return None
        folder = up
    return folder


def find_pyproject(start: str) -> str | None:
    here = _resolved(start)
    if os.path.isfile(here):
        here = os.path.dirname(here)
    folder = nearest(here, lambda f: os.path.isfile(os.path.join(f, "pyproject.toml")))
    return None if folder is None else os.path.join(folder, "pyproject.toml")


def load(start: str = ".") -> Config:
    """The config of the nearest pyproject.toml at or above `start` (defaults without one)."""
    path = find_pyproject(start)
    if path is None:
        return Config(root=_resolved(start) if os.path.isdir(start) else os.path.dirname(_resolved(start)))
    key = path
    mtime = os.stat(path).st_mtime
    cached = _cache.get(key)
    if cached and cached[0] == mtime:
        return cached[1]
    cfg = parse(path)
    _cache[key] = (mtime, cfg)
    return cfg


def _squash(name: str) -> str:
    return str(name).translate(_SQUASHED).lower()


_SQUASHED = str.maketrans("", "", "-_. ")


def parse(path) -> Config:
    """`path`: a str or os.PathLike."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc}") from None
    # a pyproject.toml that never spells "aoti" holds no table of ours (nor a near miss): not
    # parsed (importing tomllib and parsing were ~15 ms of a one-file run)
    table = _table(path, text) if "aoti" in text.lower() else {}
    validate(table, KEYS, "tool.aoti-lsp", path)
    pfi = table.get("per-file-ignores", {})
    exclude = table.get("exclude")
    cfg = Config(
        select=tuple(c.upper() for c in table.get("select", [])) or ("ALL",),
        ignore=tuple(c.upper() for c in table.get("ignore", [])),
        per_file_ignores=tuple((k, tuple(c.upper() for c in v)) for k, v in pfi.items()),
        exclude=tuple(exclude) if exclude is not None else DEFAULT_EXCLUDE,
        options=table.get("options", {}),
        root=os.path.dirname(path),
        source=path,
    )
    return cfg.with_overrides(extend_select=table.get("extend-select"), exclude=table.get("extend-exclude"))


def _table(path: str, text: str) -> dict:
    """[tool.aoti-lsp] of a pyproject.toml's text."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc}") from None
    tools = data.get("tool", {})
    near = [k for k in tools if isinstance(tools, dict) and k != "aoti-lsp" and _squash(k) == "aotilsp"]
    if near:  # `[tool.aoti_lsp]`: silently unread, the checks would run unconfigured
        raise ConfigError(f"{path}: [tool.{near[0]}] is not read: the table is [tool.aoti-lsp]")
    table = tools.get("aoti-lsp", {}) if isinstance(tools, dict) else {}
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.aoti-lsp] must be a table")
    return table


# -- validation: one line per key ----------------------------------------------------------------
def known_codes() -> list[str]:
    from aoti_lsp.project.triggers import CODES  # the rules' codes, without importing them (a test keeps it true)

    return list(CODES)


def check_codes(codes, where: str) -> None:
    """A code is known when it is "ALL" or a prefix of some rule code: `--select NOPE` must
    never turn every rule off quietly."""
    if not codes:
        return  # no flag given: the rules are not imported to check nothing
    known = known_codes()
    for code in codes:
        c = code.upper()
        if c != "ALL" and not any(k.startswith(c) for k in known):
            raise ConfigError(f"invalid value {code!r} for {where}: no rule code starts with it "
                              f"(known: ALL, {', '.join(known)}, or a prefix such as AOTI1)")


def _strings(value, key: str) -> str | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return f"{key} must be a list of strings, got {_shown(value)}"
    return None


def _codes(value, key: str) -> str | None:
    error = _strings(value, key)
    if error is None:
        check_codes(value, key)
    return error


def _code_table(value, key: str) -> str | None:
    if not isinstance(value, dict):
        return f"{key} must be a table of path pattern = list of codes, got {_shown(value)}"
    for pattern, codes in value.items():
        error = _codes(codes, f"{key}.{_quoted(pattern)}")
        if error:
            return error
    return None


def _options(value, key: str) -> str | None:
    if not isinstance(value, dict):
        return f"{key} must be a table, got {_shown(value)}"
    validate(value, OPTIONS, key, None)
    return None


def _nonempty_strings(value, key: str) -> str | None:
    error = _strings(value, key)
    return error or (f"{key} must not be empty (leave it out for the default list)" if not value else None)


# key -> checker(value, key path) returning an error or None. A new key is one line here.
KEYS = {
    "select": _codes,
    "ignore": _codes,
    "extend-select": _codes,
    "per-file-ignores": _code_table,
    "exclude": _strings,
    "extend-exclude": _strings,
    "options": _options,
}
OPTIONS = {
    "jagged-names": _nonempty_strings,  # AOTI201/202: shell-style patterns of jagged parameter names
}


def validate(table: dict, schema: dict, prefix: str, path: str | None) -> None:
    where = f"{path}: " if path is not None else ""
    unknown = sorted(set(table) - set(schema))
    if unknown:
        raise ConfigError(f"{where}unknown key(s) in [{prefix}]: {', '.join(unknown)} "
                          f"(known: {', '.join(schema)})")
    for key, check in schema.items():
        if key in table:
            try:
                error = check(table[key], f"{prefix}.{key}")
            except ConfigError as exc:
                raise ConfigError(f"{where}{exc}") from None
            if error:
                raise ConfigError(f"{where}{error}")


def _shown(value) -> str:
    kind = {str: "a string", int: "an integer", float: "a number", bool: "a boolean", dict: "a table",
            list: "a list"}.get(type(value), type(value).__name__)
    text = repr(value) if not isinstance(value, (dict, list)) else ""
    if isinstance(value, list):
        text = repr(value) if len(repr(value)) < 60 else ""
    return f"{kind} {text}".strip()


def _quoted(key: str) -> str:
    import json  # a message's odd key only
    import re

    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)
