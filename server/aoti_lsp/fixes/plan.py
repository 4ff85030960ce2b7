"""The migration off aot_compile / aot_load, planned per artifact across the project.

One artifact (the `.so` an `aot_compile` writes) -> every place that names it changes together:
the compile call, the loaders (`aot_load` -> `aoti_load_package`, in any file), and the string
text its path ends with (`"tower.so"` -> `"tower.pt2"`), wherever that is spelt: a literal at the
call, a constant of the file, a constant of another module. The artifact graph comes from the
facts layer (facts.py, project.py). When the plan cannot be made whole, no fix is given and the
reason is (`CannotFix`): a path computed at run time, an artifact written or read outside what
the project shows, a path constant also used for something else. A loader that asks for another
device type than the compile used is a bug of its own (AOTI101): the plan is then only offered
in the editor, never applied by `--fix` or fix-all, and says which device it drops.
"""

from __future__ import annotations

import os
import sys

from aoti_lsp import lazyre
from aoti_lsp.analysis import findings
from aoti_lsp.analysis.facts import LOADS, NEW_COMPILE, NEW_LOAD, OLD_COMPILE, OLD_LOAD, PRIVATE, REF, bind, unwrap
from aoti_lsp.analysis.findings import Applicability, Edit, Fix, LazyFix
from aoti_lsp.analysis.records import record
from aoti_lsp.analysis.names import DEF, IMPORT, LOCAL, positional_names
from aoti_lsp.analysis.source import absolute, statement_of
from aoti_lsp.analysis.treesitter import Node
from aoti_lsp.fixes.mentions import mentioning, tree
from aoti_lsp.fixes.migrate import (
    OUTPUT_PATH,
    CannotFix,
    Unsure,
    _key as _entry_key,
    compile_check,
    compile_fix,
    import_check,
    import_edits,
    load_check,
    keys_written,
    load_fix,
    moved_span,
    graph_never_run,
    reexported_graph,
    run_time_device,
)

COMPILE_TITLE = "Migrate to torch.export.export + aoti_compile_and_package"
LOAD_TITLE = "Migrate to torch._inductor.aoti_load_package"


@record("ctx", "call", "qualname")
class Member:
    """`ctx`: the engine Context of the member's file."""

    def __init__(self, ctx: object, call: Node, qualname: str):
        self.ctx = ctx
        self.call = call
        self.qualname = qualname

    @property
    def path(self) -> str:
        return self.ctx.source.path

    @property
    def file(self) -> str:
        """The absolute path of its file."""
        return self.ctx.source.abspath


@record("compiles", "loads", "tails", "name", "producers", "outside", "key", "basis")
class Plan:
    """`tails`: (file, start) -> (end, text); `name`: the artifact's file name, for titles;
    `producers`: compiles of the project that write it, old API or new; `outside`: why a program
    outside the project may read it (then display-only); `key`: the artifact's key, when the plan
    was collected by it; `basis`: what the plan rests on where no compile of the artifact is
    known (for the title)."""

    def __init__(self, compiles: list[Member] | None = None, loads: list[Member] | None = None,
                 tails: dict[tuple[str, int], tuple[int, bytes]] | None = None, name: str | None = None,
                 producers: int = 0, outside: str | None = None, key: str | None = None,
                 basis: str | None = None):
        self.compiles = [] if compiles is None else compiles
        self.loads = [] if loads is None else loads
        self.tails = {} if tails is None else tails
        self.name = name
        self.producers = producers
        self.outside = outside
        self.key = key
        self.basis = basis
        self.seen: set = set()  # the compiles whose value the plan followed (_returned_artifact)


def migration(ctx, call: Node) -> Fix | LazyFix:
    """The whole migration of the artifact `call` (an old compile or a loader) writes or reads."""
    plan = _plan(ctx, call)
    # the compile's finding and each loader's carry the same fix: build it once per analysis
    key = plan.key or tuple(sorted((m.file, m.call.start_byte) for m in plan.compiles + plan.loads))
    memo = ctx.lookups.setdefault("migrations", {}) if getattr(ctx, "lookups", None) is not None else {}
    if key not in memo:
        memo[key] = _migration(ctx, plan)
    return memo[key]


def _migration(ctx, plan: Plan) -> Fix | LazyFix:
    """The plan's fix: its title, applicability and files decided now, with tree-sitter; its
    edits built with libcst when someone reads them (findings.LazyFix). A plan whose calls
    nest (`aot_load(aot_compile(...))`), or whose calls libcst might read otherwise than
    tree-sitter, is built at once: then libcst decides, as it always did."""
    for member in plan.compiles:  # before either way of building: both refuse it alike
        if member.qualname in OLD_COMPILE:
            _plain_function_by_callers(member.ctx, member.call)
    if findings.EAGER_FIXES or _nested(plan):
        return _built(ctx, plan)
    try:
        _preflight(plan)
    except Unsure:
        return _built(ctx, plan)
    here = ctx.source.abspath
    title, applicability, files = _header(ctx, plan)
    basis = {}
    for path in files - {here}:
        member = next((m for m in plan.compiles + plan.loads if m.file == path), None)
        other = member.ctx if member is not None else (ctx.project.context(path) if ctx.project is not None else None)
        if other is not None:
            basis[path] = other.source.data
    return LazyFix(title, applicability, lambda: tuple(_edits(ctx, plan)), other_files=files - {here}, basis=basis)


def _built(ctx, plan: Plan) -> Fix:
    """The plan's fix with its edits, built now (libcst)."""
    edits = _edits(ctx, plan)
    title, applicability, _ = _header(ctx, plan)
    return Fix(title, tuple(edits), applicability)


def _preflight(plan: Plan) -> None:
    """Raises the CannotFix that building the plan's edits would raise, first one first
    (members in order, then each file's imports), without libcst; Unsure where only libcst can say."""
    for member in plan.compiles + plan.loads:
        if member.qualname in OLD_COMPILE:
            compile_check(member.ctx, member.call, member.qualname)
        elif member.qualname in OLD_LOAD:
            load_check(member.ctx, member.call, member.qualname)
    for member_ctx, calls in _rewritten(plan).values():
        import_check(member_ctx, calls)


def _nested(plan: Plan) -> bool:
    """Whether a call of the plan sits inside another one of the same file (what `_nest` composes)."""
    spans: dict[str, list[tuple[int, int]]] = {}
    for m in plan.compiles + plan.loads:
        spans.setdefault(m.file, []).append((m.call.start_byte, m.call.end_byte))
    for found in spans.values():  # sorted by start (longest first): a span inside the one before
        end = -1
        for start, stop in sorted(set(found), key=lambda x: (x[0], -x[1])):
            if stop <= end:
                return True
            end = max(end, stop)
    return False


def _rewritten(plan: Plan) -> dict[str, tuple[object, list]]:
    """file -> (its ctx, the old-API calls the plan rewrites there)."""
    rewritten: dict[str, tuple[object, list]] = {}
    for m in plan.compiles + plan.loads:
        if m.qualname in OLD_COMPILE or m.qualname in OLD_LOAD:
            rewritten.setdefault(m.file, (m.ctx, []))[1].append(m.call)
    return rewritten


def _renamed(plan: Plan) -> list[tuple[str, int, int]]:
    """(file, start, end) of each `.so` the plan renames outside its rewritten calls."""
    covered = [(m.file, m.call.start_byte, m.call.end_byte) for m in plan.compiles + plan.loads]
    covered += [(m.file, *span) for m in plan.compiles
                if (span := moved_span(m.ctx, m.call, m.qualname)) is not None]
    out = []
    for (path, start), (end, text) in sorted(plan.tails.items()):
        if not text.endswith(b".so") or any(p == path and s <= start < e for p, s, e in covered):
            continue  # a literal inside a rewritten call: the call's own fix renames it
        out.append((path, start, end))
    return out


def _header(ctx, plan: Plan) -> tuple[str, Applicability, set[str]]:
    """(title, applicability, every file the fix edits): what is known before any edit is built."""
    dropped = _device_conflicts(plan)
    _same_text(plan)
    if plan.name is None and plan.tails:
        plan.name = os.path.basename(next(iter(sorted(plan.tails.values())))[1].decode())
    renamed_files = {path for path, _, _ in _renamed(plan)}
    title = COMPILE_TITLE if plan.compiles else LOAD_TITLE
    if plan.compiles and plan.loads:
        title = "Migrate to aoti_compile_and_package + aoti_load_package"
    files = {m.file for m in plan.compiles + plan.loads} | renamed_files
    notes = []
    if plan.name and plan.tails:
        stem = plan.name[:-3] if plan.name.endswith(".so") else plan.name
        notes.append(f"renames {plan.name} -> {stem}.pt2" + (f" in {len(files)} files" if len(files) > 1 else ""))
    elif len(files) > 1:
        notes.append(f"edits {len(files)} files")
    # what it decides for the user (AOTI101): a .pt2 loads on the device it was compiled for
    notes += [f'decides the device: drops device="{d}", loads where compiled' for d in dropped]
    if plan.outside:
        notes.append(plan.outside)
    graphs = [n for m in plan.compiles if (n := reexported_graph(m.ctx, m.call, m.qualname)) is not None]
    notes += graphs
    notes += [n for m in plan.compiles if (n := graph_never_run(m.ctx, m.call, m.qualname)) is not None]
    notes += [f"device_index= reads the index of `{d[:40]}` when it runs, as aot_load did" for m in plan.loads
              if m.qualname in OLD_LOAD and (d := run_time_device(m.ctx, m.call)) is not None]
    if plan.basis:
        notes.append(plan.basis)
    if notes:
        title += f" ({', '.join(notes)})"
    # a device mismatch, or a reader the project does not show, is the user's decision: editor only
    # (and a graph module re-exported statically, which may have had dynamic dims)
    return title, Applicability.DISPLAY if dropped or plan.outside or graphs else Applicability.UNSAFE, files


def _edits(ctx, plan: Plan) -> list[Edit]:
    """Every edit of the plan, built with libcst (raises CannotFix where it cannot be)."""
    edits: list[Edit] = []
    here = ctx.source.abspath
    for member in plan.compiles + plan.loads:
        fix = (compile_fix(member.ctx, member.call, member.qualname) if member.qualname in OLD_COMPILE else
               load_fix(member.ctx, member.call, member.qualname) if member.qualname in OLD_LOAD else None)
        path = None if member.file == here else member.file
        if fix is not None:
            edits += [Edit(e.start, e.end, e.text, path) for e in fix.edits]
    _same_text(plan)
    for path, (member_ctx, calls) in _rewritten(plan).items():  # imports once per file, for all its calls
        edits += [Edit(e.start, e.end, e.text, None if path == here else path) for e in import_edits(member_ctx, calls)]
    for path, _, end in _renamed(plan):
        edits.append(Edit(end - 3, end, ".pt2", None if path == here else path))
    return _nest(sorted(set(edits), key=lambda e: (e.path or "", e.start, e.end, e.text)), plan, ctx)


def _nest(edits: list[Edit], plan: Plan, ctx) -> list[Edit]:
    """`aot_load(aot_compile(m, args), "cpu")`: the loader's new text still spells the inner call
    as it was; put the inner call's new text into it (one edit per place, never overlapping)."""
    data = {m.file: m.ctx.source.data for m in plan.compiles + plan.loads}
    data[None] = ctx.source.data
    out = list(edits)
    for inner in edits:
        outer = next((o for o in out if o is not inner and o.path == inner.path and o.start <= inner.start
                      and inner.end <= o.end and (o.start, o.end) != (inner.start, inner.end)
                      and not (inner.start == inner.end and inner.start in (o.start, o.end))), None)
        if outer is None or inner not in out:
            continue
        source = data.get(inner.path)
        old = source[inner.start:inner.end].decode() if source is not None else ""
        if not old or outer.text.count(old) != 1:
            raise CannotFix("its calls are nested in a way the migration cannot rewrite")
        out.remove(outer)
        out.remove(inner)
        out.append(Edit(outer.start, outer.end, outer.text.replace(old, inner.text), outer.path))
    return sorted(out, key=lambda e: (e.path or "", e.start, e.end, e.text))


# -- building the plan ----------------------------------------------------------------------------
def _plan(ctx, call: Node) -> Plan:
    facts = ctx.facts
    plan = Plan()
    compile_site = facts.compile_of(call)
    load_site = facts.load_of(call)
    if compile_site is None and load_site is None:
        raise CannotFix("the call is not an AOTI compile or load this analysis can read")
    if load_site is not None:
        behind = facts.deref(load_site.path_node, call.start_byte) if load_site.path_node is not None else None
        inner = facts.path_of(behind) if behind is not None else None
        if inner is not None:  # `aot_load(str(so), ...)`: the file `so` names
            behind = facts.deref(inner, call.start_byte) or inner
        compile_site = facts.compile_of(behind) if behind is not None else None
        if compile_site is None and load_site.path_node is None:
            raise CannotFix("the path is missing")
        if compile_site is None and behind is not None and behind.type == "identifier":
            # `so` holds a compile's value on some runs (`if so is None: so = aot_compile(...)`):
            # the compile's plan, which takes this loader with it
            held = [v for v, _ in facts.maybe_values(behind) or ()]
            maybe = next((v for v in held if facts.compile_of(v) is not None), None)
            calls = {v.id for v in held if v.type == "call"}
            if maybe is None and calls:  # `so = build(p)`: a function of this file returns a compile's value
                maybe = next((site.call for site in facts.compiles if any(v.id in calls for v in facts.flows(site.call))),
                             None)
            if maybe is not None:
                return _plan(ctx, maybe)
        producer = _producer_elsewhere(ctx, call) if compile_site is None else None
        if producer is not None:  # `so = build(...)` of another module whose `return` is a compile's value
            return _plan(*producer)
    if compile_site is not None and compile_site.path_node is None:
        # the compile's plan and each of its loaders' is this one: made once per analysis
        memo = ctx.lookups.setdefault("returned", {}) if getattr(ctx, "lookups", None) is not None else {}
        key = compile_site.call.id
        if key not in memo:
            memo[key] = _returned_artifact(ctx, compile_site, plan)
            if memo[key].outside is not None and memo[key].outside == _printed_command(ctx, compile_site):
                group = _command_plan_of(ctx, compile_site)
                if group is not None:
                    memo[key] = group
        return memo[key]
    node = compile_site.path_node if compile_site is not None else load_site.path_node
    owner = compile_site.call if compile_site is not None else call
    raw = facts.path_key(node, owner.start_byte)
    key = facts.resolve_key(raw)
    what = f"`{ctx.source.node_text(node)[:40]}` ({_where(ctx, node)})"
    if key is None:
        if compile_site is None:
            if load_site.qualname not in OLD_LOAD:
                raise CannotFix(f"the path {what} is known only at run time and no compile of the project "
                                f"writes it: migrate this loader together with the program that does ({PAGE})")
            writer = _spelt_alike_compile(ctx, load_site)
            helper = _helper_writing(ctx, load_site) if writer is None else None
            if writer is None and helper is not None and helper[2]:
                writer = helper[0]
            if writer is not None:  # a compile of its scope (or a helper it called) writes the same path: its plan takes this loader
                return _plan(ctx, writer.call)
            plan.loads.append(Member(ctx, call, load_site.qualname))
            plan.basis = _packages_only(ctx, load_site, node)
            if plan.basis is None and helper is not None:
                site, via, _ = helper
                plan.outside = (f"the path {what} is known only at run time; `{ctx.source.node_text(via)[:50]}` "
                                f"({_where(ctx, via)}) writes it with the compile at {_where(ctx, site.call)}, whose "
                                "function is also called elsewhere: migrate that compile with this loader")
            elif plan.basis is None and _from_command_line(ctx, node, call.start_byte):
                group = _command_plan(ctx, ctx)
                if group is not None and any(m.ctx is ctx and m.call.id == call.id for m in group.loads):
                    return group  # the compiles that write its argument into a command for this script
                hops = _commands_for(ctx)
                plan.outside = (f"the path {what} comes from the command line; " + (
                    (f"the compiles at {', '.join(hops)} write what they make into a command for this script: "
                     "migrate them with this loader" if len(hops) > 1 else
                     f"the compile at {hops[0]} writes what it makes into a command for this script: "
                     "migrate it with this loader") if hops else
                    "what is given there must be a .pt2 written by aoti_compile_and_package"))
            elif plan.basis is None:
                plan.outside = (f"the path {what} is known only at run time and no compile of the project writes it: "
                                "what it names must become a .pt2 written by aoti_compile_and_package")
            return plan
        _opened_otherwise(ctx, node)
        # this run's loaders are those its value reaches; another program may be given the path too
        _returned_artifact(ctx, compile_site, plan)
        taken = {m.call.id for m in plan.loads}
        alike = [load for load in _spelt_alike_loads(ctx, compile_site) if load.call.id not in taken]
        plan.loads += [Member(ctx, load.call, load.qualname) for load in alike]
        tail = _run_time_tail(ctx, node, owner.start_byte, plan)
        caller = _only_caller(ctx, compile_site) if tail is None else None
        option = None
        if caller is not None:  # `def build(cache_path): aot_compile(..., output_path=str(cache_path))`
            given = _argument_for_path(ctx, compile_site, caller)
            tail = _run_time_tail(ctx, given, caller.start_byte, plan)
            taken = {m.call.id for m in plan.loads}
            # `export_model(model, x, out)` then `aot_load(out)`: what the caller passed, loaded after the call
            plan.loads += [Member(ctx, load.call, load.qualname) for load in _loads_after(ctx, caller, given)
                           if load.call.id not in taken]
            option = _option_of(ctx, given, caller.start_byte) if tail is not None else None
        for load in alike:  # a loader spelling the path again spells its .so again
            _run_time_tail(ctx, load.path_node, load.call.start_byte, plan)
        if _private_by_callers(ctx, compile_site, node):
            return plan
        runner = _container_runner(ctx)
        scope = ctx.names.scope_of(compile_site.call if caller is None else caller)
        if tail is not None and runner is None and getattr(ctx.project, "root", None) \
                and any(m.ctx is ctx and ctx.names.scope_of(m.call) is scope for m in plan.loads) \
                and _named_outside_python(ctx, tail.decode(errors="replace")) is None:
            # the .so it visibly ends with is renamed, the code that writes it loads it (each run
            # of it: a helper whose callers load what it returns may be called by one that does
            # not) and does nothing else with it, and nothing of the project outside Python reads a .so
            other = _other_use(ctx, compile_site, plan)
            if other is None:
                plan.basis = (f"the path {what} is known only at run time: it ends in .pt2 now, and this program "
                              "loads what it writes" + (f"; a path given as {option} must end in .pt2 too"
                                                        if option else ""))
                return plan
            reader = other.parent
            while reader is not None and reader.type != "call" and reader.type not in _STATEMENTS:
                reader = reader.parent
            reader = reader if reader is not None and reader.type == "call" else statement_of(other)
            plan.outside = (f"the path {what} is known only at run time and the compile's result is also read by "
                            f"`{' '.join(ctx.source.node_text(reader).split())[:60]}` ({_where(ctx, other)}): "
                            "whatever reads it there (or is told where it is) must read the .pt2")
            return plan
        plan.outside = (f"the path {what} is known only at run time: it must end in .pt2, and any program "
                        "outside the project that loads it must use aoti_load_package") if runner is None else (
            f"the path {what} is known only at run time: it must end in .pt2, and {runner} of the project opens "
            ".so files with AOTIModelContainerRunner: it must load the package with AOTIModelPackageLoader")
        return plan
    plan = _collected(ctx, key)
    if not plan.producers:
        if not any(m.qualname in OLD_LOAD for m in plan.loads):
            raise CannotFix(f"no compile in the project writes {what}: migrate this loader together with the "
                            f"aot_compile that does ({PAGE})")
        plan.outside = (f"no compile of the project writes {what}: the program that does must write a .pt2 "
                        "with aoti_compile_and_package")
        return plan
    if not plan.compiles and not any(m.qualname in OLD_LOAD for m in plan.loads):
        raise CannotFix("nothing of it uses the old API")
    if not key.startswith(PRIVATE):
        named = _named_outside_python(ctx, key)
        if named is not None:
            plan.outside = (f"`{os.path.basename(key)}` is also named in {named}: a program outside Python may "
                            "read it, and must change to aoti_load_package / AOTIModelPackageLoader with it")
        elif not plan.loads and not _loaded_in_project(ctx, key):
            plan.outside = (f"nothing in the project loads {what}: the program that does (a C++ runner, another "
                            "repository) must change to aoti_load_package / AOTIModelPackageLoader with it")
    return plan


# files other programs read the artifact through (build and run scripts, C++ sources, deployment
# files, docs' run commands); data files (.json, .txt, test goldens) name it without reading it
TEXT_FILES = (".sh", ".bash", ".mk", ".cmake", ".c", ".cc", ".cpp", ".cxx", ".cu", ".h", ".hpp", ".rs", ".go",
              ".java", ".yaml", ".yml", ".md", ".rst")
TEXT_NAMES = ("Makefile", "makefile", "GNUmakefile", "Dockerfile", "CMakeLists.txt", "Justfile")
_SO_NAME = lazyre.compile(rb"[\w.+-]+\.so\b")


def _named_outside_python(ctx, key: str) -> str | None:
    """`file:line` of a non-Python file of the project that names the artifact's file (a Makefile
    running `./inference model.so`, a C++ runner, a README's run command), or None."""
    project = ctx.project
    root = getattr(project, "root", None) if project is not None else None
    if not root:
        return None
    found = project.__dict__.get("so_names")
    if found is None or found[0] != root:  # read once per project: the tree, not each plan
        found = project.__dict__["so_names"] = (root, _so_names(root))
    return found[1].get(os.path.basename(key))


def _container_runner(ctx) -> str | None:
    """`file:line` of the project's first C/C++ source that opens a `.so` with AOTI's container
    runner (`AOTIModelContainerRunnerCpu(argv[1], ...)`): where the path is known only at run
    time, the reader a refusal can still name (llama2.so's run.cpp, molnex's model_runner.cpp)."""
    project = ctx.project
    root = getattr(project, "root", None) if project is not None else None
    if not root:
        return None
    found = project.__dict__.get("container_runner")
    if found is None or found[0] != root:  # read once per project
        where, header = None, None  # a header declares the runner; a source file opens it: named first
        for path in tree(root, lambda name: name.endswith(_SOURCES) and not _generated(name)):
            data = _small_text(path)
            at = data.find(b"AOTIModelContainerRunner") if data is not None else -1
            if at >= 0:
                line = data.count(b"\n", 0, at) + 1
                if path.endswith((".h", ".hpp")):
                    header = header or f"{os.path.relpath(path, root)}:{line}"
                    continue
                where = f"{os.path.relpath(path, root)}:{line}"
                break
        found = project.__dict__["container_runner"] = (root, where or header)
    return found[1]


# which mention of a .so a refusal names: the program that loads it, then what runs it, then docs
_SOURCES = (".c", ".cc", ".cpp", ".cxx", ".cu", ".h", ".hpp", ".rs", ".go", ".java")
_DOCS = (".md", ".rst")


def _small_text(path: str, size: int = 1 << 20) -> bytes | None:
    """A project file's bytes, unless it is a link, larger than `size`, or cannot be read."""
    try:
        if os.path.islink(path) or os.path.getsize(path) > size:
            return None
        with open(path, "rb") as fh:
            return fh.read(size)
    except OSError:
        return None


def _rank(path: str) -> int:
    return 0 if path.endswith(_SOURCES) else 2 if path.endswith(_DOCS) else 1


def _so_names(root: str, size: int = 1 << 20) -> dict[str, str]:
    """`.so` file name -> its first mention (`file:line`) in the project's non-Python text files,
    a source file's before a script's or build file's, and those before a document's (a C++
    runner that loads it says more than the README that mentions it)."""
    out: dict[str, str] = {}
    ranks: dict[str, int] = {}
    for path in tree(root, lambda name: (name.endswith(TEXT_FILES) or name in TEXT_NAMES) and not _generated(name)):
        data = _small_text(path, size)
        if data is None:
            continue
        line, at, rank = 1, 0, _rank(path)
        for m in _SO_NAME.finditer(data):
            line, at = line + data.count(b"\n", at, m.start()), m.start()  # counted once over the file
            name = os.path.basename(m.group().decode(errors="replace"))
            if rank < ranks.get(name, 3):
                out[name], ranks[name] = f"{os.path.relpath(path, root)}:{line}", rank
    return out


def _generated(name: str) -> bool:
    """What AOTI itself writes beside an artifact (`<hash>.wrapper.cpp` names its `.so`)."""
    return ".wrapper." in name or ".kernel." in name or name.endswith("_metadata.json")


PAGE = "see AOTI001's page: producer and consumer in different programs"


def _loaded_in_project(ctx, key: str) -> bool:
    """A loader of the new API already reads `key` (a half-done migration): the project has its consumer."""
    return any(kind == "load" for kind, _ in _sites_by_key(ctx).get(key, ())) or (
        ctx.project is not None and any(kind == "load" for _, kind, _ in ctx.project.artifact_sites().get(key, ())))


def _returned_artifact(ctx, site, plan: Plan) -> Plan:
    """`so = aot_compile(model, args)`: the artifact is the return value; its loaders are the
    loads of this file whose path is that value."""
    if (id(ctx), site.call.id) in plan.seen:
        return plan
    plan.seen.add((id(ctx), site.call.id))
    plan.producers += 1
    if site.qualname in OLD_COMPILE:  # on the new API already: only its old loaders change
        _old_output_uses(ctx, site)
        plan.outside = plan.outside or _unread_reader(ctx, site)
        plan.compiles.append(Member(ctx, site.call, site.qualname))
    plan.loads += [m for m in _value_loads(ctx, site)
                   if not any(n.ctx is m.ctx and n.call.id == m.call.id for n in plan.loads)]
    _maybe_loads(ctx, site, plan)
    return plan


def _maybe_loads(ctx, site, plan: Plan) -> None:
    """Loads whose path holds the compile's value on some runs and another value on others
    (`so = sys.argv[1] if ... else None`, then `if so is None: so = aot_compile(...)`): they
    change with the compile, or the compile's .pt2 would reach an old loader. What else the
    path may hold must then be a .pt2 too: display-only, its title says which. Another compile
    whose value the loader may hold (`if ...: so = aot_compile(a, ...) else: so = aot_compile(b,
    ...)`) joins the plan: the compiles and the loader migrate together."""
    facts = ctx.facts
    # the compile's own assignment, and a helper's call returning its value (`so = build(p)`)
    merges = [(via, load, others) for via in facts.flows(site.call) if via.type == "call"
              for load, others in facts.maybe_loads_of_value(via)]
    for via, load, others in merges:
        held = [(v, facts.compile_of(v)) for v in others]
        for rival in (r for _, r in held if r is not None):
            if rival.path_node is not None:  # it writes a path of its own: that artifact is planned by its key
                raise CannotFix(f"`{ctx.source.node_text(load.call)[:60]}` ({_where(ctx, load.call)}) loads the .so of "
                                f"the compile at {_where(ctx, site.call)} on some runs and the file the one at "
                                f"{_where(ctx, rival.call)} writes on others: migrate the two compiles and the loader together")
            _returned_artifact(ctx, rival, plan)
        if any(m.ctx is ctx and m.call.id == load.call.id for m in plan.loads):
            continue
        others = [v for v, rival in held if rival is None and not _names_written_file(ctx, site, via, v)]
        plan.loads.append(Member(ctx, load.call, load.qualname))
        if others and plan.outside is None:
            plan.outside = (f"`{ctx.source.node_text(load.path_node)[:40]}` ({_where(ctx, load.call)}) may also hold "
                            f"`{ctx.source.node_text(others[0])[:40]}` ({_where(ctx, others[0])}): what it names "
                            "there must become a .pt2 written by aoti_compile_and_package")


def _names_written_file(ctx, site, via: Node, value: Node) -> bool:
    """Whether `value`, another value a loader's path may hold, names the file the compile
    writes: its path spelt again in the compile's scope (`if os.path.exists(p): so = p else: so =
    aot_compile(..., output_path=p)`), or, where the compile is in a helper called at `via` with
    the path as a parameter, the argument that call passes spelt again there (a cache probe:
    `so = str(cache_path)` else `so = _compile_and_cache(cache_path, ...)`: inference-benchmarks)."""
    path = site.path_node
    if path is None:
        return False
    value = ctx.facts.path_of(value) or value
    if via is site.call:
        return _spelt_alike(ctx, ctx.facts.path_of(path) or path, value)
    given = _argument_for_path(ctx, site, via)
    return given is not None and _spelt_alike(ctx, ctx.facts.path_of(given) or given, value)


def _path_parameter(ctx, site) -> tuple[Node, list, str] | None:
    """(function, its positional names, the parameter) where the compile's whole path is one
    parameter of the module-level function holding it (`output_path=str(cache_path)`)."""
    path = site.path_node
    inner = ctx.facts.path_of(path) or path if path is not None else None
    found = _from_params(ctx, site.call, inner) if inner is not None and inner.type == "identifier" else None
    return (found[0], found[1], next(iter(found[2]))) if found is not None else None


def _argument_for_path(ctx, site, call: Node) -> Node | None:
    """What `call`, a call of the function holding the compile, passes for its path parameter;
    None where the path is not one parameter or `call` does not pass it."""
    found = _path_parameter(ctx, site)
    if found is None or call.child_by_field_name("function").text != found[0].child_by_field_name("name").text:
        return None
    return bind(call, tuple(found[1]))[0].get(found[2])


def _only_caller(ctx, site) -> Node | None:
    """The one call of the function holding the compile, where its path is that function's
    parameter and no other file can call it: that call's argument is the path (a cache's path
    built by the caller). None otherwise."""
    found = _path_parameter(ctx, site)
    if found is None:
        return None
    fname = found[0].child_by_field_name("name").text.decode()
    callers = ctx.facts.calls_named(fname)
    if len(callers) != 1 or len(ctx.facts.idents(fname)) != 2 or not _called_here_only(ctx, fname):
        return None  # called more than once, or its name read otherwise
    return callers[0] if _argument_for_path(ctx, site, callers[0]) is not None else None


def _called_here_only(ctx, name: str) -> bool:
    """Whether no other Python file of the project can call this file's function `name`: none
    spells it but as its own module-level `def` (runtimes/torch_tensorrt/runtime.py's
    `_compile_and_cache`, not the one of aot_inductor/runtime.py)."""
    others = mentioning(ctx, name)
    return others is not None and all(_own_function(other, name) for other in others[1:])


def _own_function(ctx, name: str) -> bool:
    """Whether `name` in this file is only its own module-level function, or no name at all (spelt
    inside another word, `export_model_examples`, or in a comment)."""
    if not ctx.facts.idents(name):
        return True
    names = ctx.names
    bindings = names.module.bindings.get(name, [])
    if len(bindings) != 1 or bindings[0].kind != DEF:
        return False
    return all(names.lookup(name, i.start_byte, names.scope_of(i)) is bindings[0] for i in ctx.facts.idents(name))


# What the compile's path may not be given to once it names a .pt2. Its folder and its stem are
# not here: measured on torch 2.13 (CPU), aoti_compile_and_package without package_path writes
# `<h>.wrapper.pt2` into an inductor folder that holds `<h>.wrapper.so` (aot_load runs it, same
# outputs), `<h>.wrapper.cpp`, the kernels' C++ and metadata, as the old call's folder did; and
# `os.path.splitext(p)[0]` is the same stem for `x.so` and `x.pt2`. Copying that folder's files
# (seantempesta/remaster) or reading `splitext(p)[0] + ".cpp"` work the same after the migration.
OLD_OUTPUT_USES = {
    **dict.fromkeys(("os.path.dirname", "os.path.split", "posixpath.dirname", "posixpath.split"),
                    lambda call: None),  # its folder: what is done with that folder is no use of the path
    **dict.fromkeys(("os.path.splitext", "posixpath.splitext"),
                    lambda call: None if _stem_only(call) else "reads its extension apart: it becomes .pt2"),
    **dict.fromkeys(("shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.move", "os.rename", "os.replace"),
                    "copies or moves the .so elsewhere: whatever loads it there must change with it, and is not seen here"),
}


def _stem_only(call: Node) -> bool:
    """`os.path.splitext(p)[0]`: the part before the extension alone."""
    parent = call.parent
    if parent is None or parent.type != "subscript" or parent.child_by_field_name("value") != call:
        return False
    index = parent.child_by_field_name("subscript")
    return index is not None and index.type == "integer" and index.text == b"0"


def _old_output_uses(ctx, site) -> None:
    """Raises where the compile's value is used as the old output, not only loaded or named
    (`shutil.copy(so_path, "model.so")`; `ctypes.CDLL(so_path)`; `so_path.replace(".so", ".cpp")`;
    `os.path.splitext(so_path)[1]`)."""
    for value in ctx.facts.flows(site.call):
        found = _misuse(ctx, value, OLD_OUTPUT_USES)
        if found is not None:
            parent, why = found
            raise CannotFix(f"its result is also used as the old .so: `{ctx.source.node_text(parent)[:60]}` "
                            f"({_where(ctx, parent)}) {why}")


def _unread_reader(ctx, site) -> str | None:
    """The title note where the compile's value is given to a function imported from outside
    torch and the standard library (torch_musa's own `load_package`, which opens the old call's
    .so or list of files; an artifact store): what it does with the file is not read here, so
    the migration is the user's call. None where no such call is given it."""
    for value in ctx.facts.flows(site.call):
        node = value
        while node.parent is not None and node.parent.type in ("parenthesized_expression", "keyword_argument"):
            node = node.parent
        if node.parent is None or node.parent.type != "argument_list":
            continue
        call = node.parent.parent
        qualname = ctx.facts.qualname(call) or _local_method(ctx, call)
        if qualname is None or qualname.split(".")[0] in _KNOWN_MODULES or _logs(call):
            continue
        return (f"gives it to `{qualname}` ({_where(ctx, call)}), which this analysis does not read: "
                "that must read the .pt2 the new call writes")
    return _printed_command(ctx, site)


def _local_method(ctx, call: Node) -> str | None:
    """`builder.add_library` of `builder.add_library("enc", so)`: a method of an object bound in
    the project's code (zhxchen17/torchnative's PackageBuilder copies the .so it is given for a
    Rust program), whose body the plan does not read. None for anything else."""
    func = call.child_by_field_name("function")
    obj = func.child_by_field_name("object") if func is not None and func.type == "attribute" else None
    if obj is None or obj.type != "identifier":
        return None
    binding = ctx.names.lookup(obj.text.decode(), obj.start_byte, ctx.names.scope_of(obj))
    return func.text.decode() if binding is not None and binding.kind != IMPORT else None


_SCRIPT = lazyre.compile(rb"[\w./-]+\.py\b")


def _printed_command(ctx, site) -> str | None:
    """The title note where the compile's path is written into a string that names a Python script
    (`print(f"python flux_test.py {fmodel_path}")`, zhxchen17/torchnative): a command handing it to
    another program, which must load the .pt2."""
    found = _command_of(ctx, site)
    if found is None:
        return None
    script, node = found
    return (f"its path is written into a command for `{script}` ({_where(ctx, node)}): "
            "that program must load the .pt2 with aoti_load_package")


def _command_of(ctx, site) -> tuple[str, Node] | None:
    """(the script, the interpolation) where the compile's value is written into a string naming a script."""
    for value in ctx.facts.flows(site.call):
        node = value.parent
        if node is None or node.type != "interpolation" or node.parent is None:
            continue
        script = _SCRIPT.search(node.parent.text)
        if script is not None:
            return script.group().decode(), node
    return None


def _from_command_line(ctx, node: Node | None, at: int, depth: int = 0) -> bool:
    """Whether a path is read from the command line: `sys.argv[i]`, an argparse option (`args.x`),
    through names."""
    node = unwrap(node)
    if node is None or depth > 8:
        return False
    if node.type == "identifier":
        found = ctx.facts.binding_value(node, at)
        if found is not None:
            return _from_command_line(ctx, found[0], found[1].at, depth + 1)
        # `fmodel_path, ae_decoder_path = sys.argv[1:]`: unpacked from the command line (the one binding)
        found = _unpacked(ctx, node, at)
        right = found[0] if found is not None else None
        return right is not None and right.type == "subscript" and _from_command_line(ctx, right, at, depth + 1)
    if node.type == "subscript":
        value = node.child_by_field_name("value")
        return value is not None and value.type == "attribute" and ctx.names.resolve(value) == "sys.argv"
    return node.type == "attribute" and ctx.facts.option(node) is not None


def _commands_for(ctx) -> list[str]:
    """Where (file:line) other files of the project compile what they write into a command naming
    this script (flux_aoti.py's `print(f"python flux_test.py {fmodel_path} {ae_decoder_path}")`)."""
    name = os.path.basename(ctx.source.path)
    out = []
    for other in (mentioning(ctx, name) or [])[1:]:
        for site in other.facts.compiles:
            found = _command_of(other, site) if site.qualname in OLD_COMPILE else None
            if found is not None and os.path.basename(found[0]) == name:
                out.append(_where(other, site.call))
    return out


def _script_path(ctx, script: str) -> str | None:
    """The project file a command's script names (`flux_test.py`): beside the file that writes the
    command, else the one file of the project of that name; None where none or several, or where
    it is no file of the project (excluded by its configuration or .gitignore: never edited)."""
    project = ctx.project
    root = getattr(project, "root", None) if project is not None else None
    scanned = getattr(project, "files", None)  # the project's files, as its run or index listed them
    if not root or not scanned:
        return None
    beside = os.path.normpath(os.path.join(os.path.dirname(ctx.source.abspath), script))
    if os.path.isfile(beside):
        return beside if beside in scanned else None
    name = os.path.basename(script)
    found = [p for p in project.memo(f"scripts named {name}", lambda: list(tree(root, lambda n: n == name)))
             if p in scanned]
    return found[0] if len(found) == 1 else None


def _command_plan_of(ctx, site) -> Plan | None:
    """_command_plan of the script the compile's path is written into a command for."""
    found = _command_of(ctx, site)
    path = _script_path(ctx, found[0]) if found is not None and ctx.project is not None else None
    script = ctx.project.context(path) if path is not None else None
    if script is None:
        return None
    group = _command_plan(script, ctx)
    return group if group is not None and any(m.ctx is ctx and m.call.id == site.call.id for m in group.compiles) else None


def _command_plan(script, live) -> Plan | None:
    """One plan for a script and the compiles of other files that write their paths into a
    command for it (zhxchen17/torchnative's wip/flux_aoti.py prints `python flux_test.py
    {fmodel_path} {ae_decoder_path}`; flux_test.py loads `fmodel_path, ae_decoder_path =
    sys.argv[1:]` with aot_load): the compiles and the loaders of those arguments migrate together,
    the command then hands each loader the .pt2 its compile wrote. Only where the two sides match
    argument for argument: each compile's path is a whole word of the command, at the position of
    a `sys.argv` item the script's old loaders (and nothing of another kind of read) take; every
    such item is written by one of them; the compiles pass their path to nothing else the plan
    cannot follow. None otherwise (the refusal names the other side). `live`: the file being
    analysed, whose own members are read from it (the project's copy of it may be older)."""
    memo = live.lookups.setdefault("command plans", {}) if getattr(live, "lookups", None) is not None else {}
    key = script.source.abspath
    if key not in memo:
        memo[key] = None
        try:
            memo[key] = _matched_command_plan(script, live)
        except CannotFix:
            pass
    return memo[key]


def _matched_command_plan(script, live) -> Plan | None:
    name = os.path.basename(script.source.path)
    writers: dict[int, list] = {}
    for other in (mentioning(script, name) or [])[1:]:
        other = live if other.source.abspath == live.source.abspath else other
        for site in other.facts.compiles:
            found = _command_of(other, site) if site.qualname in OLD_COMPILE else None
            if found is None or os.path.basename(found[0]) != name:
                continue
            if _script_path(other, found[0]) != script.source.abspath:
                continue  # a script of the same name elsewhere
            index = _argument_index(found[1], found[0])
            if index is None:
                return None
            writers.setdefault(index, []).append((other, site))
    readers: dict[int, list] = {}
    for load in script.facts.loads:
        if load.path_node is None or not _from_command_line(script, load.path_node, load.call.start_byte):
            continue
        index = _argv_index(script, load.path_node, load.call.start_byte)
        if index is None or load.qualname not in OLD_LOAD:
            return None  # a command-line path read another way, or loaded by the new API already
        readers.setdefault(index, []).append(load)
    if not writers or set(writers) != set(readers) or any(len(w) != 1 for w in writers.values()):
        return None
    plan = Plan()
    for index in sorted(writers):
        other, site = writers[index][0]
        own = _returned_artifact(other, site, Plan())
        if own.outside != _printed_command(other, site):
            return None  # read somewhere the plan does not follow, too
        plan.compiles += own.compiles
        plan.loads += [m for m in own.loads if not any(n.ctx is m.ctx and n.call.id == m.call.id for n in plan.loads)]
        plan.producers += own.producers
        plan.loads += [Member(script, load.call, load.qualname) for load in readers[index]]
    where = ", ".join(_where(other, site.call) for other, site in
                      sorted((w for ws in writers.values() for w in ws), key=lambda w: (w[0].source.path, w[1].call.start_byte)))
    if len(writers) > 1:
        plan.basis = (f"the compiles at {where} write their paths into a command for `{name}`, "
                      "whose loaders of them change with them")
    else:
        plan.basis = f"the compile at {where} writes its path into a command for `{name}`, whose loader of it changes with it"
    return plan


_HOLE = "\ue001%d\ue001"


def _argument_index(interpolation: Node, script: str) -> int | None:
    """The `sys.argv` index the interpolation becomes where the command runs: its word's place
    after the script's (`python flux_test.py {a} {b}`: 1 and 2). None where it is not a whole word
    after the script (`--model={p}`, a path inside a longer word)."""
    string = interpolation.parent
    if string is None:
        return None
    children = string.children
    if len(children) < 2 or children[0].type != "string_start" or children[-1].type != "string_end":
        return None
    parts, at, end = [], children[0].end_byte, children[-1].start_byte  # inside the quotes
    holes = [c for c in children if c.type == "interpolation"]
    data = string.text
    for k, hole in enumerate(holes):
        parts.append(data[at - string.start_byte:hole.start_byte - string.start_byte].decode(errors="replace"))
        parts.append(_HOLE % k)
        at = hole.end_byte
    parts.append(data[at - string.start_byte:end - string.start_byte].decode(errors="replace"))
    words = "".join(parts).split()
    ids = [h.id for h in holes]
    mine = _HOLE % ids.index(interpolation.id) if interpolation.id in ids else None
    spelt = [k for k, w in enumerate(words) if w.endswith(script)]
    if mine is None or not spelt or mine not in words:
        return None
    k = words.index(mine)
    return k - spelt[0] if k > spelt[0] else None


def _argv_index(ctx, node: Node | None, at: int, depth: int = 0) -> int | None:
    """The `sys.argv` index a path is: `sys.argv[2]`, or a name unpacked from `sys.argv[1:]`
    (`a, b = sys.argv[1:]`: b is 2), through names. None for anything else (an argparse option)."""
    node = unwrap(node)
    if node is None or depth > 8:
        return None
    if node.type == "identifier":
        found = ctx.facts.binding_value(node, at)
        if found is not None:
            return _argv_index(ctx, found[0], found[1].at, depth + 1)
        found = _unpacked(ctx, node, at)
        if found is None:
            return None
        right, place = unwrap(found[0]), found[1]
        if right is None or right.type != "subscript" or not _is_argv(ctx, right.child_by_field_name("value")):
            return None
        index = right.child_by_field_name("subscript")
        if index is None or index.type != "slice" or any(c.type == ":" for c in index.children[2:]):
            return None  # `sys.argv[1:]`, `sys.argv[1:3]`: nothing else is read as in order
        low = index.children[0] if index.children else None
        if low is None or low.type not in (":", "integer"):
            return None  # `sys.argv[-2:]`: counted from the end
        return (int(low.text) if low.type == "integer" else 0) + place
    if node.type == "subscript" and _is_argv(ctx, node.child_by_field_name("value")):
        index = node.child_by_field_name("subscript")
        return int(index.text) if index is not None and index.type == "integer" else None
    return None


def _unpacked(ctx, node: Node, at: int) -> tuple[Node | None, int] | None:
    """(the value, the name's place in the pattern) of the assignment `a, b = value` that binds
    the name `node` reads at `at` (its one binding there); None where it is bound otherwise."""
    name = node.text.decode()
    binding = ctx.names.lookup(name, at, ctx.names.scope_of(node))
    if binding is None or binding.kind != LOCAL:
        return None
    for ident in ctx.facts.idents(name):
        pattern = ident.parent
        stmt = pattern.parent if pattern is not None and pattern.type in ("pattern_list", "tuple_pattern") else None
        if stmt is not None and stmt.type == "assignment" and stmt.child_by_field_name("left") == pattern \
                and ctx.names.lookup(name, stmt.end_byte, ctx.names.scope_of(stmt)) is binding:
            return stmt.child_by_field_name("right"), pattern.named_children.index(ident)
    return None


def _is_argv(ctx, node: Node | None) -> bool:
    return node is not None and node.type == "attribute" and ctx.names.resolve(node) == "sys.argv"


_KNOWN_MODULES = frozenset({"torch", "builtins", *sys.stdlib_module_names})


def _from_params(ctx, call: Node, path: Node) -> tuple[Node, list, set] | None:
    """(function, its parameter names, those `path` reads) where `call` is in a module-level
    function and `path` reads its parameters (never rebound): its callers give the path."""
    func = call.parent
    while func is not None and func.type not in ("function_definition", "class_definition", "lambda", "module"):
        func = func.parent
    if func is None or func.type != "function_definition" or func.parent is None or func.parent.type != "module":
        return None
    params = func.child_by_field_name("parameters")
    names = positional_names(params)
    scope = ctx.names.scope_of(path)
    used = set()
    for ident in [path] if path.type == "identifier" else _identifiers(path):
        b = ctx.names.lookup(ident.text.decode(), ident.start_byte, scope)
        if b is not None and params.start_byte <= b.at < params.end_byte and len(scope.bindings.get(b.name, [])) == 1:
            used.add(b.name)
    if not used or not all(n in names for n in used):
        return None
    return func, names, used


def _spelt_alike(ctx, a: Node, b: Node) -> bool:
    """Whether two path expressions of one scope are one value: the same tokens, whose names are
    the same bindings where each is read (nothing rebound between them): `os.path.join(
    os.getcwd(), f"m_{n}.so")` written at the compile and again at its loader; or names bound to
    such values (nfdi-demonstrator's cache probe binds `so_path` to the same f-string in a `try`
    and in its `except`)."""
    if _same_spelling(ctx, a, b):
        return True
    if a.type != "identifier" and b.type != "identifier":
        return False
    x, y = _bound_path(ctx, a), _bound_path(ctx, b)
    return (x is not a or y is not b) and _same_spelling(ctx, x, y)


def _bound_path(ctx, node: Node) -> Node:
    """The expression a name holds where it is read (one straight-line assignment), else itself."""
    found = ctx.facts.binding_value(node, node.start_byte) if node.type == "identifier" else None
    return unwrap(found[0]) if found is not None else node


def _same_spelling(ctx, a: Node, b: Node) -> bool:
    if a.text.translate(None, b" \t\n\r\\") != b.text.translate(None, b" \t\n\r\\"):
        return False  # not the same tokens, most often: a look at the text first (a comment inside: kept apart)
    names = ctx.names
    scope = names.scope_of(a)
    if names.scope_of(b) is not scope or _tokens(a) != _tokens(b):
        return False
    left, right = list(_identifiers(a)), list(_identifiers(b))
    return len(left) == len(right) and all(
        x.text == y.text and names.lookup(x.text.decode(), x.start_byte, scope)
        is names.lookup(y.text.decode(), y.start_byte, scope) for x, y in zip(left, right))


def _tokens(node: Node) -> list[tuple[str, bytes]]:
    """The tokens of an expression (comments aside), as its tree has them."""
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if n.type == "comment":
            continue
        if n.child_count == 0:
            out.append((n.type, n.text))
        stack.extend(reversed(n.children))
    return out


def _spelt_alike_loads(ctx, site) -> list:
    """The old loaders in the scope of `site` (a compile) whose path is spelt as its own: after
    it, and before it (a cache probe: `try: aot_load(p)`, `except: aot_compile(..., p)`)."""
    return [load for load in _old_loads_spelt(ctx, site.path_node)
            if not site.call.start_byte <= load.call.start_byte < site.call.end_byte]


def _old_loads_spelt(ctx, path: Node) -> list:
    """The old loaders of this file whose path is spelt as `path` (_spelt_alike: one scope, the
    same bindings)."""
    return [load for load in ctx.facts.loads if load.qualname in OLD_LOAD and load.path_node is not None
            and _spelt_alike(ctx, path, load.path_node)]


def _loads_after(ctx, call: Node, given: Node | None) -> list:
    """The old loaders after `call` whose path is spelt as `given`, what `call` passed (the same
    binding, in the same scope): what the called function wrote there, loaded by its caller."""
    if given is None:
        return []
    return [load for load in _old_loads_spelt(ctx, given) if load.call.start_byte >= call.end_byte]


def _helper_writing(ctx, load):
    """(the old compile, the call, whether that call is its function's only one) where a call
    before `load` of a function of this file whose compile writes to its path parameter passes
    the path `load` reads (PyTorchDemos: `export_model(model, x, output_model_path)`, then
    `aot_load(output_model_path)`). None where no such call is seen."""
    for site in ctx.facts.compiles:
        found = _path_parameter(ctx, site) if site.qualname in OLD_COMPILE and site.path_node is not None else None
        if found is None:
            continue
        only = _only_caller(ctx, site)
        for call in ctx.facts.calls_named(found[0].child_by_field_name("name").text.decode()):
            if call.end_byte <= load.call.start_byte and any(
                    other.call.id == load.call.id for other in _loads_after(ctx, call, _argument_for_path(ctx, site, call))):
                return site, call, call is only or (only is not None and call.id == only.id)
    return None


def _option_of(ctx, node: Node | None, at: int, depth: int = 0) -> str | None:
    """The command-line option (`--out`) a path's end comes from, where it does: `args.out`,
    through names, `os.path.join(d, args.out)`, `str()`, `+` (facts.option)."""
    node = unwrap(node)
    if node is None or depth > 8:
        return None
    if node.type == "identifier":
        found = ctx.facts.binding_value(node, at)
        return _option_of(ctx, found[0], found[1].at, depth + 1) if found is not None else None
    if node.type == "attribute":
        found = ctx.facts.option(node)
        return f"`{found[0]}`" if found is not None else None
    if node.type == "binary_operator":
        return _option_of(ctx, node.child_by_field_name("right"), at, depth + 1)
    if node.type == "call":
        args = [a for a in node.child_by_field_name("arguments").named_children if a.type != "comment"]
        return _option_of(ctx, args[-1], at, depth + 1) if args else None
    return None


def _spelt_alike_compile(ctx, load):
    """The old compile of `load`'s scope whose path is spelt as the loader's: the last before it,
    else the first after it (the compile of a cache the loader probes first)."""
    found = [site for site in ctx.facts.compiles if site.qualname in OLD_COMPILE and site.path_node is not None
             and not load.call.start_byte <= site.call.start_byte < load.call.end_byte
             and _spelt_alike(ctx, site.path_node, load.path_node)]
    before = [site for site in found if site.call.end_byte < load.call.start_byte]
    return before[-1] if before else found[0] if found else None


def _packages_only(ctx, load, path: Node) -> str | None:
    """`def aot_load(path): return torch._export.aot_load(path, "cuda")` with no caller in the
    project, in a file whose compiles all write packages (aoti_compile_and_package) — the shape
    of a serving utilities module half migrated: every artifact the project makes for it is a
    .pt2, which the old loader cannot open, so the new loader is what a caller needs. Why, for
    the fix's title; None where a caller, or an old compile, could give it a .so, or where its
    device cannot be read. A package loads on the device type it was compiled for, which nothing
    here tells: the title says that the loader's device type is dropped."""
    found = _from_params(ctx, load.call, path)
    if found is None or getattr(ctx.project, "root", None) is None:
        return None  # no project to tell whether something calls it
    device = ctx.facts.str_value(load.device_node, load.call.start_byte) if load.device_node is not None else None
    if device is None:
        return None
    new = [c for c in ctx.facts.compiles if c.qualname in NEW_COMPILE]
    if not new or any(c.qualname in OLD_COMPILE for c in ctx.facts.compiles):
        return None
    fname = found[0].child_by_field_name("name").text.decode()
    others = mentioning(ctx, fname)
    if others is None:
        return None  # what calls it cannot be told
    for other in others:
        for ident in other.facts.idents(fname):
            parent = ident.parent
            if parent is not None and parent.type in ("function_definition", "dotted_name", "aliased_import"):
                continue  # its def, its import
            callee = parent if parent is not None and parent.type == "attribute" else ident
            use = callee.parent
            if use is not None and use.type == "call" and other.facts.qualname(use) in LOADS:
                continue  # torch's own loader of that name, not this function
            return None  # a call or another use: its callers decide what the path names
    line = ctx.source.lines.line_of(new[0].call.start_byte) + 1
    kind = device.split(":", 1)[0]
    return (f"nothing calls `{fname}`, and this file writes only .pt2 packages (aoti_compile_and_package, "
            f"line {line}), which the old loader cannot open; drops device \"{kind}\": a package loads on "
            "the device type it was compiled for")


def _run_time_tail(ctx, path: Node, at: int, plan: Plan) -> bytes | None:
    """The `.so` text a path known only at run time visibly ends with (`os.path.join(d,
    f"{name}.so")`, `out / "net.so"`, a module constant), renamed with the plan (aoti_compile_and_package
    refuses a path that does not end in .pt2). Returned where it is written in this file and not
    as a parameter's default (a caller may pass another path); None otherwise."""
    tail = ctx.facts.tail(path, at)
    if tail is None or isinstance(tail, tuple) and not ctx.source.data[tail[0]:tail[1]].endswith(b".so"):
        return None
    try:
        _add_tail(ctx, tail, plan)  # another module's constant too, where its other uses allow
    except CannotFix:
        return None  # a constant that serves more than this path, one that cannot be read: as it was
    if isinstance(tail, str):
        return None
    start, end = tail
    text = ctx.source.data[start:end]
    holder = ctx.source.tree.root_node.descendant_for_byte_range(start, end)
    while holder is not None and holder.type not in ("default_parameter", "typed_default_parameter", "module"):
        holder = holder.parent
    return text if holder is None or holder.type == "module" else None


def _rebinds(ident: Node) -> bool:
    parent = ident.parent
    return parent is not None and parent.type == "assignment" and parent.child_by_field_name("left") == ident


_STATEMENTS = ("expression_statement", "return_statement", "block", "module")
_LOG_LEVELS = frozenset({b"debug", b"info", b"warning", b"warn", b"error", b"exception", b"critical"})


def _logs(call: Node | None) -> bool:
    """`logger.info(...)`, `L.debug(...)`: a logging method by its name (a log line names a file for
    a person; `print` is not one: a build script prints where the .so is for another program)."""
    func = call.child_by_field_name("function") if call is not None and call.type == "call" else None
    return func is not None and func.type == "attribute" and func.child_by_field_name("attribute").text in _LOG_LEVELS


def _other_use(ctx, site, plan: Plan) -> Node | None:
    """The first read of the compile's value that is not one of the plan's loaders (`str()` around
    it for one of them), or None: a build script that also sizes the .so, audits the files beside
    it or prints where it is for another program (geoeo/depthsplat) gives it to more than its
    own loader."""
    facts = ctx.facts
    paths = {site_.path_node.id for m in plan.loads if m.ctx is ctx
             and (site_ := facts.load_of(m.call)) is not None and site_.path_node is not None}
    flows = facts.flows(site.call)
    ids = {v.id for v in flows}
    for value in flows[1:]:
        if value.id in paths:
            continue
        parent = value.parent
        while parent is not None and parent.type == "parenthesized_expression":
            parent = parent.parent
        if parent is not None and parent.type == "argument_list" and parent.parent is not None \
                and parent.parent.id in ids:
            continue  # `str(so)`, itself a value the check reads
        if parent is not None and parent.type == "return_statement" and facts.calls_of_function(parent) \
                and (name := facts.returning_function(parent)) is not None and _called_here_only(ctx, name):
            continue  # returned to its callers, all of this file: the calls are values the check reads
        left = parent.child_by_field_name("left") if parent is not None and parent.type == "assignment" else None
        if left is not None and left.type == "identifier" and unwrap(parent.child_by_field_name("right")) == value:
            # `so = build(p)`: its reads are values the check reads, or (after a merge of branches,
            # which flows does not follow) a loader of the plan; any other read is another use
            end = ctx.names.scope_of(value).node.end_byte
            later = [i for i in facts.idents(left.text.decode(), parent.end_byte, end)
                     if i.id not in ids and i.id not in paths and not _rebinds(i)]
            if later:
                return later[0]
            continue
        if parent is not None and parent.type == "keyword_argument":
            parent = parent.parent
        if parent is not None and parent.type == "argument_list" and _logs(parent.parent):
            continue  # `log.info("saved", path=so)`: a line for a person, not a reader of the file
        return value
    return None


def _private_by_callers(ctx, site, path: Node) -> bool:
    """`def build(model, out_dir): aot_compile(..., output_path=os.path.join(out_dir, "m.so"))` where
    every mention of `build` in the project's Python files is its import or a call passing a
    private folder (`tempfile.mkdtemp()`) for `out_dir`: the artifact is that run's alone."""
    found = _from_params(ctx, site.call, path)
    if found is None:
        return False
    func, names, used = found
    fname = func.child_by_field_name("name").text.decode()
    callers = 0
    others = mentioning(ctx, fname)
    if others is None:
        return False  # what calls it cannot be told
    for other in others:
        for ident in other.facts.idents(fname):
            if ident.parent is not None and ident.parent.type in ("function_definition", "dotted_name", "aliased_import"):
                continue  # its def, its import
            call = ident.parent
            if call is None or call.type != "call" or call.child_by_field_name("function") != ident:
                return False
            bound, _ = bind(call, tuple(names))
            for name in used:
                arg = bound.get(name)
                value = other.facts.str_value(arg, call.start_byte) if arg is not None else None
                if value is None or not value.startswith(PRIVATE):
                    return False
            callers += 1
    return callers > 0


_PLAIN = {"functools.partial": "`functools.partial(...)`"}


def _plain_function_by_callers(ctx, call: Node) -> None:
    """Raises CannotFix where the compiled model is a parameter of the enclosing function and a
    caller in its file passes a plain function for it (a `def`, a lambda, `functools.partial`):
    torch.export.export takes an nn.Module (torch 2.13: `ValueError: Expected 'mod' to be an
    instance of 'torch.nn.Module'`), so its migration cannot run (diffusers-torchao's guide).
    The file's helpers are looked up in one pass over its text (one per helper grew with the
    sites); callers in other files are not read (a walk of the project per helper)."""
    args = call.child_by_field_name("arguments")
    first = next((a for a in args.named_children if a.type not in ("comment", "keyword_argument")), None) \
        if args is not None else None
    if first is None or first.type != "identifier":
        return
    decorator = _decorated(ctx, first)
    if decorator is not None:
        raise CannotFix(f"`{first.text.decode()}` is what the decorator {decorator} wraps: a function, not an "
                        "nn.Module, and torch.export.export takes an nn.Module: wrap it in a Module first")
    func = ctx.names.module_function(call)
    if func is None:
        return
    if getattr(ctx, "lookups", None) is not None and "helpers" not in ctx.lookups:
        ctx.lookups["helpers"] = True
        ctx.source.find_words(_helper_names(ctx))
    callers = ctx.facts.calls_named(func.child_by_field_name("name").text.decode())
    found = _from_params(ctx, call, first) if callers else None
    if found is None:
        return
    _, names, _ = found
    name = first.text.decode()
    for caller in callers:
        what = _plain_function(ctx, bind(caller, tuple(names))[0].get(name))
        if what is not None:
            where = f"{os.path.basename(ctx.source.path)}:{ctx.source.lines.line_of(caller.start_byte) + 1}"
            raise CannotFix(f"its caller ({where}) passes {what} for `{name}`: torch.export.export takes an "
                            "nn.Module, not a plain function: wrap it in a Module first")


def _decorated(ctx, param: Node) -> str | None:
    """`@name` (file:line) where `param` is the parameter of a decorator: of the function applied
    as `@f`, or of the one its enclosing function returns, applied as `@g(...)`
    (lianakoleva/no-libtorch-compile's `aot_compile_sticky_cache(name)`): what it receives is the
    decorated `def` (or class), never an nn.Module instance. None otherwise."""
    names = ctx.names
    scope = names.scope_of(param)
    binding = names.lookup(param.text.decode(), param.start_byte, scope)
    while scope is not None and binding is not None and binding not in scope.bindings.get(binding.name, ()):
        scope = scope.parent  # the scope it is bound in: a closure reads its function's parameter
    if scope is None:
        return None
    func = scope.node
    params = func.child_by_field_name("parameters") if func.type == "function_definition" else None
    if binding is None or binding.kind != LOCAL or binding.value is not None or params is None \
            or not params.start_byte <= binding.at < params.end_byte:
        return None
    fname = func.child_by_field_name("name").text.decode()
    wrappers = [fname]
    outer = scope.parent
    if outer is not None and outer.kind == "function" and f"return {fname}".encode() in outer.node.text:
        wrappers.append(outer.node.child_by_field_name("name").text.decode())
    for name in wrappers:
        for ident in ctx.facts.idents(name):
            holder = ident.parent
            if holder is not None and holder.type == "call" and holder.child_by_field_name("function") == ident:
                holder = holder.parent
            if holder is not None and holder.type == "decorator":
                return f"`@{name}` ({_where(ctx, holder)})"
    return None


def _helper_names(ctx) -> list[str]:
    """The names of the module-level functions around the file's compiles."""
    funcs = (ctx.names.module_function(site.call) for site in ctx.facts.compiles)
    return [f.child_by_field_name("name").text.decode() for f in funcs if f is not None]


def _plain_function(ctx, arg: Node | None) -> str | None:
    """How `arg` spells a plain function (None where it does not, or is not known to)."""
    arg = ctx.facts.deref(arg, arg.start_byte) if arg is not None else None
    if arg is None:
        return None
    if arg.type == "lambda":
        return "a lambda"
    if arg.type == "call" and ctx.facts.qualname(arg) in _PLAIN:
        return _PLAIN[ctx.facts.qualname(arg)]
    if arg.type == "identifier":
        b = ctx.names.lookup(arg.text.decode(), arg.start_byte, ctx.names.scope_of(arg))
        if b is not None and b.kind == DEF:
            return f"the function `{arg.text.decode()}`"
    return None


def _identifiers(node: Node):
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "identifier":
            parent = n.parent
            if not (parent is not None and parent.type in ("attribute", "keyword_argument")
                    and parent.child_by_field_name("attribute" if parent.type == "attribute" else "name") == n):
                yield n
        stack.extend(n.named_children)


def _value_loads(ctx, site, strict: bool = True) -> list[Member]:
    """The loads the compile's value reaches: in this file, and through a module-level function
    returning it to callers in other modules (strict: raises when a return leads where none can
    be seen; a plan keyed by the path finds its loaders by the path too)."""
    facts = ctx.facts
    out = [Member(ctx, load.call, load.qualname) for load in facts.loads_of_value(site.call)]
    for value in facts.flows(site.call):
        parent = value.parent
        while parent is not None and parent.type == "parenthesized_expression":
            parent = parent.parent
        if parent is None or parent.type != "return_statement" or facts.calls_of_function(parent):
            continue
        name = facts.returning_function(parent)
        elsewhere = _loads_of_function(ctx, name) if name is not None else []
        if not elsewhere and strict:
            if name is None:  # a method or a nested function: its callers are not followed
                raise CannotFix(f"its result is returned by {_function_label(parent)} ({_where(ctx, parent)}), whose "
                                "callers this analysis does not follow: the loader of the .so cannot be changed with it")
            raise CannotFix(f"its result is returned by `{name}` ({_where(ctx, parent)}) to code "
                            "this analysis cannot follow: the loader of the .so cannot be changed with it")
        out += elsewhere
    return out


def _function_label(ret: Node) -> str:
    """"the method `Runner.compile`", "the function `build`" (nested), "a lambda": what holds `ret`."""
    func = ret.parent
    while func is not None and func.type not in ("function_definition", "lambda"):
        func = func.parent
    if func is None or func.type == "lambda":
        return "a lambda"
    name = func.child_by_field_name("name").text.decode()
    holder = func.parent.parent if func.parent is not None and func.parent.type == "decorated_definition" else func.parent
    owner = holder.parent if holder is not None and holder.type == "block" else None
    if owner is not None and owner.type == "class_definition":
        return f"the method `{owner.child_by_field_name('name').text.decode()}.{name}`"
    return f"the function `{name}`"


def _loads_of_function(ctx, name: str) -> list[Member]:
    """Loads in other modules whose path is the value `name()` of this file returns."""
    project, here = ctx.project, ctx.source.abspath
    if project is None:
        return []
    out = []
    for path, summary in sorted(project.summaries.items()):
        for target, start, end, _ in (summary.get("@facts") or {}).get("returned_loads", ()):
            folder, _, dotted = target.strip(REF).partition("|")
            found = project.module_file(folder, dotted)
            if found is None or absolute(found[0]) != here or found[1] != name:
                continue
            other = project.context(path)
            site = next((s for s in other.facts.loads if s.call.start_byte == start and s.call.end_byte == end),
                        None) if other is not None else None
            if site is None:
                raise CannotFix(f"{os.path.basename(path)} changed since it was read")
            out.append(Member(other, site.call, site.qualname))
    return out


def _producer_elsewhere(ctx, call: Node):
    """(ctx, compile call) of the compile whose value the imported function this load's path
    calls returns (`from build import build`; `aot_load(build(...))`), or None."""
    project = ctx.project
    entry = next((e for e in ctx.facts.returned_loads if e[1] == call.start_byte and e[2] == call.end_byte), None)
    if project is None or entry is None:
        return None
    folder, _, dotted = entry[0].strip(REF).partition("|")
    found = project.module_file(folder, dotted)
    other = project.context(found[0]) if found is not None else None
    if other is None:
        return None
    for site in other.facts.compiles:
        for value in other.facts.flows(site.call):
            parent = value.parent
            while parent is not None and parent.type == "parenthesized_expression":
                parent = parent.parent
            if parent is not None and parent.type == "return_statement" \
                    and other.facts.returning_function(parent) == found[1]:
                return other, site.call
    return None


def _collected(ctx, key: str) -> Plan:
    """The plan of artifact `key` (every compile and load of it), collected once per analysis:
    each of its calls asks (400 loads of one path must not collect it 400 times)."""
    memo = ctx.lookups.setdefault("collected", {}) if getattr(ctx, "lookups", None) is not None else {}
    if key not in memo:
        plan = Plan(name=os.path.basename(key) if not key.startswith(("@", PRIVATE)) else None)
        try:
            _collect(ctx, key, plan)
            memo[key] = plan
        except CannotFix as why:
            memo[key] = why
    found = memo[key]
    if isinstance(found, CannotFix):
        raise found
    return Plan(list(found.compiles), list(found.loads), dict(found.tails), found.name, found.producers,
                outside=found.outside, key=key)


def _collect(ctx, key: str, plan: Plan) -> None:
    """Every compile and load of the artifact `key`: this file's, then the project's."""
    here = ctx.source.abspath
    seen: set[tuple[str, int]] = set()

    def add(member_ctx, site, kind):
        mark = (member_ctx.source.abspath, site.call.start_byte)
        if mark in seen:
            return
        seen.add(mark)
        facts = member_ctx.facts
        if kind == "compile":
            plan.producers += 1
            if site.qualname not in OLD_COMPILE:
                return  # written with the new API already (a .pt2): only its old loaders change
            plan.outside = plan.outside or _unread_reader(member_ctx, site)
            plan.compiles.append(Member(member_ctx, site.call, site.qualname))
            for load in _value_loads(member_ctx, site, strict=False):  # `so = aot_compile(...)`, `aot_load(so)`
                add(load.ctx, load.ctx.facts.load_of(load.call), "load")
            known = len(plan.loads)
            _maybe_loads(member_ctx, site, plan)  # `aot_load(so)` where `so` may also hold another path
            for load in plan.loads[known:]:
                seen.add((absolute(load.path), load.call.start_byte))
        else:
            if site.qualname not in OLD_LOAD and site.qualname not in NEW_LOAD:
                return
            if site.qualname in OLD_LOAD:
                plan.loads.append(Member(member_ctx, site.call, site.qualname))
        tail = facts.tail(site.path_node, site.call.start_byte)
        _add_tail(member_ctx, tail, plan)

    for kind, site in _sites_by_key(ctx).get(key, ()):
        add(ctx, site, kind)
    _mentions(ctx, key, plan)
    project = ctx.project
    if project is None:
        return
    for path, kind, (_, start, end, _) in project.artifact_sites().get(key, ()):
        if absolute(path) == here:
            continue
        other = project.context(path)
        if other is None:
            raise CannotFix(f"{os.path.basename(path)} also names it and cannot be read")
        sites = other.facts.compiles if kind == "compile" else other.facts.loads
        site = next((s for s in sites if s.call.start_byte == start and s.call.end_byte == end), None)
        if site is None:
            raise CannotFix(f"{os.path.basename(path)} changed since it was read")
        add(other, site, kind)
        _mentions(other, key, plan)


def _same_text(plan: Plan) -> None:
    """A string spelt exactly like a renamed one, in a file the plan edits (`... == "m.so"`)."""
    texts = {text for _, text in plan.tails.values() if text.endswith(b".so") and text != b".so"}  # a name, not an f-string's ending
    for member in plan.compiles + plan.loads:
        src = member.ctx.source
        root = src.tree.root_node
        for text in texts:
            for at in src.occurrences(text.decode()):
                node = root.descendant_for_byte_range(at, at + len(text))
                if node is not None and node.type == "string_content" and node.text == text:
                    plan.tails.setdefault((absolute(src.path), node.start_byte), (node.end_byte, node.text))


def _sites_by_key(ctx) -> dict[str, list[tuple[str, object]]]:
    """artifact key -> ("compile" | "load", site) of this file, compiles first, each in file
    order: one pass for every plan of the analysis, not one per plan."""
    found = ctx.lookups.get("sites_by_key")
    if found is None:
        facts = ctx.facts
        found = ctx.lookups["sites_by_key"] = {}
        for kind, sites in (("compile", facts.compiles), ("load", facts.loads)):
            for site in sites:
                if site.path_node is not None:
                    key = facts.resolve_key(facts.path_key(site.path_node, site.call.start_byte))
                    found.setdefault(key, []).append((kind, site))
    return found


def _mentions(ctx, key: str, plan: Plan) -> None:
    """Other strings of the file naming the same artifact (`os.path.exists("out/m.so")`)."""
    path = ctx.source.abspath
    for node in _so_mentions(ctx).get(key, ()):
        plan.tails.setdefault((path, node.start_byte), (node.end_byte, node.text))


def _so_mentions(ctx) -> dict[str, list[Node]]:
    """artifact key -> the `.so` strings of the file that name it (in file order), read once."""
    found = ctx.lookups.get("so_mentions")
    if found is not None:
        return found
    src, facts = ctx.source, ctx.facts
    found = ctx.lookups["so_mentions"] = {}
    root = src.tree.root_node
    for at in src.occurrences(".so"):
        node = root.descendant_for_byte_range(at, at + 3)
        if node is None or node.type != "string_content" or node.end_byte != at + 3:
            continue
        keys, expr = [], node.parent
        for _ in range(4):  # the string, os.path.join(..., "m.so"), d + "/m.so", Path(d) / "m.so"
            key = facts.resolve_key(facts.path_key(expr, expr.start_byte))
            if key is not None and key not in keys:
                keys.append(key)
            expr = expr.parent
            while expr is not None and expr.type in ("argument_list", "parenthesized_expression"):
                expr = expr.parent
            if expr is None or expr.type not in ("call", "binary_operator"):
                break
        for key in keys:
            found.setdefault(key, []).append(node)
    return found


def _add_tail(ctx, tail, plan: Plan) -> None:
    """The string text a path ends with, in this file or (a reference) in another module."""
    if tail is None:
        return
    if isinstance(tail, str):
        project = ctx.project
        found = project.tail(tail) if project is not None else None
        if found is None:
            raise CannotFix("the path is built in a module this analysis cannot read")
        path, start, end = found
        other = project.context(path)
        if other is None:
            raise CannotFix(f"{os.path.basename(path)} cannot be read")
        _check_constant_uses(other, start, plan)
        plan.tails[(absolute(path), start)] = (end, other.source.data[start:end])
        return
    start, end = tail
    _check_constant_uses(ctx, start, plan)
    plan.tails[(ctx.source.abspath, start)] = (end, ctx.source.data[start:end])


def _check_constant_uses(ctx, start: int, plan: Plan) -> None:
    """A module constant whose text is renamed must not serve anything but this artifact: its
    reads in its own file are either path arguments of the plan's calls or other constants.
    Asked once per constant and analysis (every load of a shared path names the same one)."""
    memo = ctx.lookups.setdefault("constant_uses", {}) if getattr(ctx, "lookups", None) is not None else {}
    if start not in memo:
        try:
            _constant_uses(ctx, start)
            memo[start] = None
        except CannotFix as why:
            memo[start] = why
    if memo[start] is not None:
        raise memo[start]


def _constant_uses(ctx, start: int) -> None:
    facts = ctx.facts
    names = ctx.names
    for name, bindings in names.module.bindings.items():
        b = bindings[0]
        if len(bindings) != 1 or b.value is None or not b.value.start_byte <= start < b.value.end_byte:
            continue
        for ident in facts.idents(name):
            if ident.start_byte < b.value.end_byte and ident.start_byte >= b.at:
                continue  # the definition itself
            if _reads_as_path(ctx, ident):
                continue
            keys = keys_written(ident)
            if keys is not None and OUTPUT_PATH not in keys and _output_path_entry(b.value, start):
                continue  # `opts["max_autotune"] = True` on the options dict that holds the path
            line = ctx.source.lines.line_of(ident.start_byte) + 1
            raise CannotFix(f"the path constant `{name}` is also used for something else "
                            f"({os.path.basename(ctx.source.path)}:{line})")


def _opened_otherwise(ctx, path: Node) -> None:
    """Raises where the name a compile writes its .so to (`model_dir = f"{tmp}/model.so"`, known
    only at run time) is, as that same binding, also opened as a shared library or taken apart as
    a string (Intel's DLRM example opens it with `torch._C._aoti.AOTIModelContainerRunnerCpu`, a
    runner that takes only a .so): renamed to a .pt2, that reader breaks."""
    names = ctx.names
    while path.type == "parenthesized_expression" and path.named_child_count == 1:
        path = path.named_children[0]
    if path.type != "identifier":
        return
    name = path.text.decode()
    binding = names.lookup(name, path.start_byte, names.scope_of(path))
    for ident in ctx.facts.idents(name, path.end_byte):
        if names.lookup(name, ident.start_byte, names.scope_of(ident)) is not binding:
            continue
        found = _misuse(ctx, ident, {})
        if found is not None:
            expr, why = found
            raise CannotFix(f"`{ctx.source.node_text(expr)[:60]}` ({_where(ctx, expr)}) {why}: the .so `{name}` "
                            "names must stay one (a private runner such as AOTIModelContainerRunnerCpu opens only a "
                            ".so); move that reader to aoti_load_package (C++: AOTIModelPackageLoader) first")


def _output_path_entry(value: Node, start: int) -> bool:
    """Whether `value` is a dict literal whose `"aot_inductor.output_path"` entry holds offset
    `start` (an options dict: writing its other keys leaves the path alone)."""
    value = unwrap(value)
    if value is None or value.type != "dictionary":
        return False
    return any(c.type == "pair" and c.start_byte <= start < c.end_byte and _entry_key(c) == OUTPUT_PATH
               for c in value.named_children)


# reads that use the `.so` as something other than the artifact's name: renaming would break them
LIBRARY_LOADS = {"ctypes.CDLL", "ctypes.cdll.LoadLibrary", "ctypes.PyDLL", "torch.ops.load_library",
                 "torch.classes.load_library", "importlib.util.spec_from_file_location",
                 "torch._C._aoti.AOTIModelContainerRunnerCpu", "torch._C._aoti.AOTIModelContainerRunnerCuda",
                 "torch._C._aoti.AOTIModelContainerRunnerXpu", "torch._C._aoti.AOTIModelContainerRunnerMps"}
STRING_SURGERY = {"replace", "removesuffix", "rstrip", "split", "rsplit", "endswith", "partition", "rpartition"}


def _reads_as_path(ctx, ident: Node) -> bool:
    """A read of a path constant that keeps naming the artifact (a compile or load argument,
    `os.path.exists(P)`, another constant built from it) — not loaded as a shared library,
    nor taken apart as a string (`P.replace(".so", ...)`, `P[:-3]`)."""
    return _misuse(ctx, ident, {}) is None


def _misuse(ctx, node: Node, calls: dict) -> tuple[Node, str] | None:
    """(the expression, why) where the path `node` is, inside the expression it stands in, taken
    apart as a string, loaded as a shared library, or given to one of `calls` (qualname -> why,
    or a function of the call that says why, None where that spelling is harmless); None where
    it only names the artifact."""
    while node.parent is not None and node.parent.type in ("parenthesized_expression", "argument_list",
                                                           "keyword_argument", "attribute", "subscript", "call"):
        parent = node.parent
        if parent.type == "subscript" and parent.child_by_field_name("value") == node:
            return parent, "takes the path apart as a string"
        if parent.type == "attribute" and parent.child_by_field_name("object") == node \
                and parent.child_by_field_name("attribute").text.decode() in STRING_SURGERY:
            return parent, "takes the path apart as a string"
        if parent.type == "call":
            qualname = ctx.facts.qualname(parent)
            if qualname in LIBRARY_LOADS:
                return parent, "loads it as a shared library"
            why = calls.get(qualname)
            if callable(why):  # a use that breaks only in some spellings: None where it does not
                why = why(parent)
                if why is None:
                    return None  # what it made of the path (a stem) is no longer the path
            if why is not None:
                return parent, why
        node = parent
    return None


def _device_conflicts(plan: Plan) -> list[str]:
    """Loader devices that the migration would drop although they disagree with the device the
    artifact was compiled for (as AOTI101 sees it)."""
    from aoti_lsp.analysis.devices import analysis

    out = []
    for member in plan.loads:
        if member.qualname not in OLD_LOAD:
            continue
        a = analysis(member.ctx)
        site = member.ctx.facts.load_of(member.call)
        if site is None or site.device_node is None:
            continue
        art = a.artifact(site)
        dev = a.device_value(site.device_node, site.call.start_byte)
        if art is not None and art.device is not None and dev is not None and dev.type != art.device.type:
            out.append(dev.spelled)
    return out


def _where(ctx, node: Node) -> str:
    return f"{os.path.basename(ctx.source.path)}:{ctx.source.lines.line_of(node.start_byte) + 1}"
