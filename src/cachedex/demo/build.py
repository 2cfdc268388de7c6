"""The demo data set: realistic sample build caches of four tags, written as real mirrors.

:func:`build_demo_mirrors` concretizes the packages of :mod:`cachedex.demo.packages` for every
stack of every tag (one node per package per stack, compilers and runtimes included),
then writes each tag's root mirror (complete) and one mirror per stack (its index) with
:mod:`cachedex.mirrorgen`, and a ``cachedex.yaml`` that lists them. Output is deterministic: the same arguments give
byte-identical files.

* ``v1.0.2`` and ``develop-2026-11-01``: layout 2, Database "7", spec-v4 nodes (``compiler`` key)
* ``develop-2026-11-08`` and ``develop``: layout 3, Database "8", spec-v5 nodes (compilers as
  build dependencies), clearsigned spec manifests with binary sizes; the stacks of
  ``develop-2026-11-08`` are buildcache views of its one mirror (``views: all``)
* ``develop_revision=1`` changes ``develop`` only: version bumps (new hashes for those
  packages and their dependents), roots removed from and new packages added to some stacks.
"""

from __future__ import annotations

import random
import re
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import archspec.cpu

from .data import COMPILERS, GLIBC, NEW_IN_REVISION_1, PROVIDES, STACKS, TAGS, Compiler, Stack, Tag
from .mirrorgen import edge, make_node, target_object, write_mirror, write_view
from .packages import PACKAGES

__all__ = ["CONFIG_NAME", "build_demo_mirrors", "bump_version", "demo_records"]

CONFIG_NAME = "cachedex.yaml"
_SEED = 20261108
#: Stacks that pin the oldest listed version of every package.
_OLD_STACKS = ("bootstrap-x86_64-linux-gnu", "aws-pcluster-neoverse_v1")
#: develop's own version bumps: revision 0 (a week's worth since its newest snapshot: a
#: library thirteen packages build on, and three that nothing does, so that the snapshot
#: shares most of its specs with develop, as Spack's weekly snapshots do), and the extra
#: ones of revision 1.
_BUMPS = {
    0: ("py-numpy", "llvm", "gdb", "adios2"),
    1: ("py-torch", "kokkos", "git", "tmux", "gromacs", "paraview", "py-jupyterlab", "ripgrep"),
}
#: develop revision 1: roots dropped from stacks, and new packages added as roots.
_REMOVED_1 = {"e4s": ("cp2k", "julia"), "radiuss": ("chai",), "ml-linux-aarch64-cpu": ("py-dask",)}
_ADDED_1 = {
    "ml-linux-x86_64-cuda": ("py-polars",),
    "ml-linux-aarch64-cpu": ("py-polars",),
    "developer-tools-darwin": ("fzf",),
    "developer-tools-x86_64_v3-linux-gnu": ("fzf",),
}
_LANGUAGE_VIRTUALS = {"c": "c", "cxx": "cxx", "fortran": "fortran"}
#: Tags whose stacks are buildcache views of the tag's one mirror (found by views: all),
#: as Spack's CI is moving to, rather than mirrors of their own.
_VIEW_TAGS = ("develop-2026-11-08",)

Record = tuple[dict[str, Any], bool]


def bump_version(version: str) -> str:
    """The next patch version: the last run of digits plus one (``1.14.5`` -> ``1.14.6``)."""
    match = list(re.finditer(r"\d+", version))[-1]
    return f"{version[: match.start()]}{int(match.group()) + 1}{version[match.end() :]}"


class _Concretizer:
    """Builds the nodes of one stack of one tag (one node per package, memoised)."""

    def __init__(
        self,
        tag: Tag,
        stack: Stack,
        compiler_key: str,
        revision: int,
        changed: Mapping[str, bool],
        parent: _Concretizer | None = None,
    ) -> None:
        self.tag, self.stack, self.revision, self.changed = tag, stack, revision, changed
        self.compiler: Compiler = COMPILERS[compiler_key]
        self.v5 = tag.spec_version >= 5
        uarch = archspec.cpu.TARGETS[stack.target]
        self.family = uarch.family.name
        self.target: str | dict[str, Any] = stack.target if stack.target == self.family else target_object(stack.target)
        self.records: dict[str, Record] = {} if parent is None else parent.records
        self.memo: dict[str, dict[str, Any]] = {}
        self.arch: dict[str, Any] = {"platform": stack.platform, "os": stack.os}
        self._infra: dict[str, dict[str, Any]] = {} if parent is None else parent._infra
        self._compiler_node: dict[str, Any] | None = None
        self._others: _Concretizer | None = None  # the compiler of the languages ours lacks

    def _add(self, node: dict[str, Any], in_buildcache: bool = True) -> dict[str, Any]:
        self.records.setdefault(node["hash"], (node, in_buildcache))
        return node

    def version(self, name: str) -> str:
        versions = PACKAGES[name].versions
        if self.stack.name in _OLD_STACKS:
            version = versions[-1]
        elif self.changed[name]:
            version = versions[min(self.tag.age, len(versions) - 1)]
        else:
            version = versions[0]
        if self.tag.name == "develop":
            for revision in range(self.revision + 1):
                if name in _BUMPS.get(revision, ()):
                    version = bump_version(version)
        return version

    # -- compiler infrastructure ------------------------------------------------------

    def _external(self, name: str, version: str, variants: dict[str, Any], **extra: Any) -> dict[str, Any]:
        key = f"{name}@{version}:{self.stack.platform}:{self.stack.os}:{self.family}"
        if key not in self._infra:
            self._infra[key] = make_node(
                name,
                version,
                **self.arch,
                target=self.family,
                variants=variants,
                external_path="/usr",
                spec_version=5,
                **extra,
            )
        return self._add(self._infra[key], in_buildcache=False)

    def compiler_node(self) -> dict[str, Any]:
        if self._compiler_node is None:
            c = self.compiler
            if c.built_with is not None:
                builder = _Concretizer(self.tag, self.stack, c.built_with, self.revision, self.changed, self)
                self._compiler_node = builder.package(c.name, version=c.version)
            else:
                tools = (
                    {"c": "gcc", "cxx": "g++", "fortran": "gfortran"}
                    if c.name == "gcc"
                    else {"c": "clang", "cxx": "clang++"}
                )
                variants = PACKAGES["gcc"].variants if c.name == "gcc" else {"build_system": "bundle"}
                paths = {lang: f"/usr/bin/{tool}" for lang, tool in tools.items()}
                self._compiler_node = self._external(
                    c.name, c.version, dict(variants), extra_attributes={"compilers": paths}
                )
        return self._compiler_node

    def _simple(self, name: str, version: str, deps: list[dict[str, Any]]) -> dict[str, Any]:
        compiler = None if self.v5 else (self.compiler.legacy_name, self.compiler.version)
        return self._add(
            make_node(
                name,
                version,
                **self.arch,
                target=self.target,
                variants={"build_system": "generic"},
                dependencies=deps,
                compiler=compiler,
                spec_version=self.tag.spec_version,
            )
        )

    def language_edges(self, languages: tuple[str, ...]) -> list[dict[str, Any]]:
        """v5: compiler (build, virtuals), compiler-wrapper, runtime, glibc; v4: the runtime."""
        c = self.compiler
        edges: list[dict[str, Any]] = []
        glibc = None
        if self.v5 and self.stack.platform == "linux":
            glibc = self._external("glibc", GLIBC[self.stack.os], {"build_system": "autotools"})
        if c.runtime is not None:
            key = "runtime"
            if key not in self.memo:
                deps = [edge(self.compiler_node(), ("build",))] if self.v5 else []
                if glibc is not None:
                    deps.append(edge(glibc, ("link",), ("libc",)))
                self.memo[key] = self._simple(c.runtime, c.version, deps)
            edges.append(edge(self.memo[key], ("link",)))
        if not self.v5:
            return edges
        provided = [_LANGUAGE_VIRTUALS[lang] for lang in languages if lang in c.languages]
        if provided:
            edges.append(edge(self.compiler_node(), ("build",), provided))
        if "wrapper" not in self.memo:
            self.memo["wrapper"] = self._simple("compiler-wrapper", "1.0", [])
        edges.append(edge(self.memo["wrapper"], ("build",)))
        if glibc is not None:
            edges.append(edge(glibc, ("link",), ("libc",)))
        missing = tuple(lang for lang in languages if lang not in c.languages)
        if missing and c.others is not None:  # (gfortran beside apple-clang: its compiler and runtime)
            if self._others is None:
                self._others = _Concretizer(self.tag, self.stack, c.others, self.revision, self.changed, self)
            have = {e["hash"] for e in edges}
            edges += [e for e in self._others.language_edges(missing) if e["hash"] not in have]
        return edges

    # -- packages --------------------------------------------------------------------

    def package(self, name: str, version: str | None = None) -> dict[str, Any]:
        if name == self.compiler.name and self.compiler.built_with is not None and version is None:
            return self.compiler_node()
        if name in self.memo:
            return self.memo[name]
        pkg = PACKAGES[name]
        variants = dict(pkg.variants)
        deps = dict(pkg.deps)
        for key, value in self.stack.overrides:
            if key in variants:
                variants[key] = list(value) if isinstance(value, tuple) else value
        if variants.get("cuda") is True and name != "cuda":
            deps.setdefault("cuda", ("build", "link"))
        if variants.get("rocm") is True and name != "hip":
            deps.setdefault("hip", ("build", "link"))
        edges = [edge(self.package(dep), kinds, PROVIDES.get(dep, ())) for dep, kinds in deps.items()]
        edges += self.language_edges(pkg.languages) if pkg.languages else []
        compiler = None if self.v5 else (self.compiler.legacy_name, self.compiler.version)
        node = make_node(
            name,
            version or self.version(name),
            **self.arch,
            target=self.target,
            variants=variants,
            dependencies=edges,
            compiler=compiler,
            spec_version=self.tag.spec_version,
        )
        self.memo[name] = self._add(node)
        return node


def _roots(tag: Tag, stack: Stack, revision: int) -> tuple[str, ...]:
    roots = [r for r in stack.roots if r not in NEW_IN_REVISION_1]
    if tag.name == "develop" and revision >= 1:
        roots = [r for r in roots if r not in _REMOVED_1.get(stack.name, ())]
        roots += _ADDED_1.get(stack.name, ())
    return tuple(roots)


def demo_records(tag: Tag, *, develop_revision: int = 0) -> dict[str, list[Record]]:
    """The records of every stack of ``tag`` (stack name -> [(node, in_buildcache)])."""
    rng = random.Random(_SEED)
    changed = {name: rng.random() < 0.35 for name in sorted(PACKAGES)}
    revision = develop_revision if tag.name == "develop" else 0
    out: dict[str, list[Record]] = {}
    for stack_name in tag.stacks:
        stack = STACKS[stack_name]
        concretizer = _Concretizer(tag, stack, stack.compiler, revision, changed)
        for root in _roots(tag, stack, revision):
            concretizer.package(root)
        out[stack_name] = list(concretizer.records.values())
    return out


def build_demo_mirrors(
    dest: Path, *, develop_revision: int = 0, tags: Iterable[str] | None = None, stack_spec_files: bool = False
) -> Path:
    """Write the demo mirrors under ``dest/mirrors/<tag>[/<stack>]`` and ``dest/cachedex.yaml``.

    Root mirrors are complete (index, spec files or spec manifests + blobs). Stack mirrors
    hold their index only unless ``stack_spec_files`` (cachedex reads sizes from the root,
    and file creation dominates the run time). Each tag folder is replaced as a whole;
    ``tags`` limits the work (and the config) to some tags. Returns the config file's path.
    """
    if develop_revision not in (0, 1):
        raise ValueError(f"develop_revision must be 0 or 1, got {develop_revision}")
    wanted = None if tags is None else set(tags)
    unknown = sorted((wanted or set()) - {tag.name for tag in TAGS})
    if unknown:
        raise ValueError(f"unknown demo tags {unknown}")
    dest = Path(dest)
    lines = [
        "# Sample mirrors written by 'cachedex demo' (cachedex.demo); paths are relative",
        "# to this file.",
        "catalog: cachedex.sqlite",
        "tags:",
    ]
    spec_cache: dict[tuple[str, int, str], bytes] = {}
    for tag in TAGS:
        if wanted is not None and tag.name not in wanted:
            continue
        folder = dest / "mirrors" / tag.name
        if folder.exists():
            shutil.rmtree(folder)
        stacks = demo_records(tag, develop_revision=develop_revision)
        root: dict[str, Record] = {}
        for records in stacks.values():
            for node, listed in records:
                root.setdefault(node["hash"], (node, listed))
        options = {"layout": tag.layout, "db_version": tag.db_version, "signed": tag.signed, "spec_cache": spec_cache}
        write_mirror(folder, root.values(), **options)  # type: ignore[arg-type]
        lines += [f"  - name: {tag.name}", f"    url: ./mirrors/{tag.name}"]
        if tag.name in _VIEW_TAGS:
            for stack_name, records in stacks.items():
                write_view(folder, stack_name, records, db_version=tag.db_version)
            lines.append("    views: all")
            continue
        for stack_name, records in stacks.items():
            write_mirror(folder / stack_name, records, spec_files=stack_spec_files, **options)  # type: ignore[arg-type]
        lines.append(f"    stacks: [{', '.join(tag.stacks)}]")
    config = dest / CONFIG_NAME
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return config
