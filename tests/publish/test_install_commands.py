"""The shell commands the pages offer to paste, checked against what Spack accepts.

Each command is split as a POSIX shell splits it (``shlex``), then parsed with the
options Spack's own argparse parsers define (read in spack/spack's
``lib/spack/spack/cmd/mirror.py``, ``buildcache.py`` and ``install.py`` and its command
reference): a command Spack would refuse, or one that adds a mirror Spack then refuses
to install from, fails here."""

from __future__ import annotations

import argparse
import shlex
import subprocess
from pathlib import Path

import pytest

from cachedex.catalog import Catalog
from cachedex.ingest.sync import sync
from cachedex.ingest.verify import verify
from cachedex.publish.graph import SpecGraph
from cachedex.publish.pages import package_page, spec_page, tag_page
from cachedex.publish.site import write_site
from tests.helpers import MIRRORS, fixture_index, make_config, record, replace_mirror, write_v3_mirror


class Refused(Exception):
    """Spack's parser would have stopped at this command."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise Refused(message)


def _spack() -> argparse.ArgumentParser:
    """The subcommands and options the snippets use, as Spack 1.x defines them."""
    spack = _Parser(prog="spack")
    commands = spack.add_subparsers(dest="command", required=True, parser_class=_Parser)
    mirror = commands.add_parser("mirror").add_subparsers(dest="action", required=True, parser_class=_Parser)
    add = mirror.add_parser("add")
    add.add_argument("name")
    add.add_argument("url")
    add.add_argument("--scope")
    add.add_argument("--type", action="append", choices=("binary", "source"))
    add.add_argument("--autopush", action="store_true")
    signing = add.add_mutually_exclusive_group()
    signing.add_argument("--unsigned", dest="signed", action="store_false", default=None)
    signing.add_argument("--signed", dest="signed", action="store_true", default=None)
    add.add_argument("--oci-username-variable")
    add.add_argument("--oci-password-variable")
    keys = commands.add_parser("buildcache").add_subparsers(dest="action", required=True, parser_class=_Parser)
    keys_parser = keys.add_parser("keys")
    keys_parser.add_argument("-i", "--install", action="store_true")
    keys_parser.add_argument("-t", "--trust", action="store_true")
    keys_parser.add_argument("-f", "--force", action="store_true")
    install = commands.add_parser("install")
    cache = install.add_mutually_exclusive_group()
    cache.add_argument("--use-cache", action="store_true")
    cache.add_argument("--no-cache", action="store_true")
    cache.add_argument("--cache-only", action="store_true")
    install.add_argument("--no-check-signature", dest="unsigned", action="store_true")
    install.add_argument("specs", nargs="+")
    return spack


SPACK = _spack()


def run(commands: str) -> list[argparse.Namespace]:
    """Each line of ``commands`` as ``sh`` reads it, then as Spack's parser reads it."""
    assert subprocess.run(["sh", "-n"], input=commands, text=True, check=False).returncode == 0, commands
    parsed = []
    for line in commands.splitlines():
        words = shlex.split(line)
        assert words[0] == "spack", line
        parsed.append(SPACK.parse_args(words[1:]))
    return parsed


def installs_unsigned(commands: str) -> bool:
    """Whether Spack installs the spec unsigned: its mirror was added ``--unsigned`` or
    the install says ``--no-check-signature``. (A mirror added plainly is ``signed``:
    Spack then stops at an unsigned binary with "To install unsigned packages, use the
    --no-check-signature option, or configure the mirror with signed: false".)"""
    parsed = run(commands)
    added = [p for p in parsed if p.command == "mirror"]
    installs = [p for p in parsed if p.command == "install"]
    return all(p.signed is False for p in added) or any(p.unsigned for p in installs)


def test_the_parser_refuses_what_spack_refuses() -> None:
    # (the check itself: options Spack lacks, or both signing options, are refused)
    for bad in ("spack mirror add --unsigned --signed a b", "spack install --unsigned /x", "spack mirror add a"):
        with pytest.raises(Refused):
            run(bad)


@pytest.mark.parametrize("url", ["oci://ghcr.io/spack/github-actions-buildcache", "oci+http://localhost:5000/c"])
def test_an_oci_registry_is_added_unsigned_on_every_page(tmp_path: Path, url: str) -> None:
    # OCI build caches are never signed (`spack buildcache push` to oci:// drops the
    # signature) and publish no keys: added plainly, `spack install` refused each binary.
    dag_hash, stack_hash = "a" * 32, "b" * 32
    with Catalog(tmp_path / "c.sqlite") as catalog:
        with catalog.writing_tag("ci") as writer:
            writer.add_specs([record(dag_hash, "zlib"), record(stack_hash, "zlib", version="1.3")], {})
            replace_mirror(writer, "root", {dag_hash: True}, url=url, checksum="root")
            replace_mirror(writer, "e4s", {stack_hash: True}, url=url + "-e4s", checksum="e4s")
        page = spec_page(catalog, dag_hash)
        graph = SpecGraph(catalog)
        assert graph.page(graph.ids[dag_hash], page.node) == page
        (install,) = page.install
        (stack_install,) = spec_page(catalog, stack_hash).install
        preambles = [tag_page(catalog, "ci").install, package_page(catalog, "ci", "zlib").install]
    for commands in (install.commands, stack_install.commands, *preambles):
        assert installs_unsigned(commands + ("" if "install" in commands.split() else f"\nspack install /{dag_hash}"))
        assert "buildcache keys" not in commands  # (there are none to trust)
    assert [shlex.split(line) for line in install.commands.splitlines()] == [
        ["spack", "mirror", "add", "--unsigned", "ci", url],
        ["spack", "install", "--cache-only", f"/{dag_hash}"],
    ]


def test_a_mirror_found_unsigned_is_added_unsigned(tmp_path: Path) -> None:
    # Spack's own fixture of an unsigned v2 mirror, synced and verified for real: its
    # specs' signature status is "unsigned", and the spec page's commands add it so.
    config = make_config(
        tmp_path,
        [
            {"name": "plain", "url": str(MIRRORS / "v2_layout/unsigned")},
            {"name": "sig", "url": str(MIRRORS / "v2_layout/signed")},
        ],
    )
    with Catalog(config.catalog) as catalog:
        sync(config, catalog)
        verify(config, catalog)
        _check_commands(catalog)


def test_a_mirror_synced_unsigned_is_added_unsigned_on_every_page(mirrors: Path, tmp_path: Path) -> None:
    # A v3 mirror pushed with --unsigned (plain JSON manifests), synced and never
    # verified: the sync read three of its manifests, all plain, and found no key index;
    # every page adds it --unsigned.
    write_v3_mirror(tmp_path / "plain", fixture_index(mirrors))
    write_v3_mirror(tmp_path / "sig", fixture_index(mirrors), signed=True)
    config = make_config(tmp_path, [{"name": tag, "url": str(tmp_path / tag)} for tag in pages_of])
    with Catalog(config.catalog) as catalog:
        sync(config, catalog)
        _check_commands(catalog)
        mirrors = (write_site(catalog, tmp_path / "site").outdir / "mirrors/index.html").read_text()
    rows = {row.split("</td>")[0]: row for row in mirrors.split('<tr><td class="name">')[1:]}
    assert "binaries not signed" in rows["plain / root"] and "binaries signed" in rows["sig / root"]


#: The two tags of the tests above: a mirror that does not sign and one that does.
pages_of = ("plain", "sig")


def _check_commands(catalog: Catalog) -> None:
    """The unsigned mirror "plain" is added --unsigned, without keys, on its specs'
    pages (read one by one and from the site's graph alike), its tag page and its package
    pages; the signed one "sig", holding the same specs, as signed."""
    hashes = {h for h, *_ in catalog.listed_rows("plain")}
    assert hashes == {h for h, *_ in catalog.listed_rows("sig")}  # (the same specs, unsigned and signed)
    pages = {h: spec_page(catalog, h) for h in hashes}
    graph = SpecGraph(catalog)
    for dag_hash, page in pages.items():
        assert graph.page(graph.ids[dag_hash], page.node) == page
    name = catalog.spec_summary(next(iter(hashes))).name  # type: ignore[union-attr]
    preambles = {tag: (tag_page(catalog, tag).install, package_page(catalog, tag, name).install) for tag in pages_of}
    example = f"\nspack install /{next(iter(hashes))}"
    for commands in preambles["plain"]:
        assert installs_unsigned(commands + example), commands
        assert "buildcache keys" not in commands
    for commands in preambles["sig"]:
        assert not installs_unsigned(commands + example), commands
    for page in pages.values():
        commands = {i.tag: i.commands for i in page.install}
        assert installs_unsigned(commands["plain"]), commands["plain"]
        assert "buildcache keys" not in commands["plain"]
        # a signed mirror's stay as they were (a bad signature too): keys trusted, signatures checked
        assert not installs_unsigned(commands["sig"])
        assert [p.action for p in run(commands["sig"]) if p.command == "buildcache"] == ["keys"]
