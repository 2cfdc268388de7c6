"""``cachedex verify``: check the mirrors of tags, print one line per problem, keep the result.

Registered on the ``cachedex`` group as ``main.add_command(verify_command)``. Exit codes:
0 all is well, 1 problems were found (or an error stopped the command, or its output was
closed before the end), 2 wrong usage
(an unknown option or tag).
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

import click

from ..catalog import Catalog
from ..catalog.verifications import PROBLEM_KINDS, MirrorVerification
from ..values import counted, short_repr, visible
from .progress import Reporter
from .state import configured_tags, friendly, verdict_command

__all__ = ["print_report", "summary", "verify_command"]

_LAYOUTS = {1: "v1", 2: "v2", 3: "v3", 100: "OCI"}


def _kinds_help() -> str:
    return "\n".join(f"  {kind:<22} {meaning}" for kind, meaning in PROBLEM_KINDS.items())


@click.command(
    "verify", context_settings={"help_option_names": ["-h", "--help"]}, epilog="\b\nProblem kinds:\n" + _kinds_help()
)
@click.argument("tags", nargs=-1, metavar="[TAG]...")
@click.option("--deep", is_flag=True, help="Also download every binary and check its checksum (streamed).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (see below) instead of text.")
@click.pass_obj
@friendly
def verify_command(state: Any, tags: tuple[str, ...], deep: bool, as_json: bool) -> None:
    """Check that the mirrors of TAGs (default: every configured tag) are complete,
    consistent and signed.

    For each mirror (root, stacks, views, OCI repositories): the index is there and
    matches its checksum; every listed spec has its spec manifest (v3), spec file (v2)
    or image (OCI), and its binary exists with the size its manifest gives; each v3
    spec blob matches its checksum and holds the spec its name says; what the index
    does not list is reported (where the mirror's folders can be listed); every link
    or run dependency of a listed spec is listed by a mirror of the tag, or is an
    external; every spec's signature is checked with gpg against the keys the mirror
    publishes (v3/manifests/key/, build_cache/_pgp/): signed, unsigned, bad, or by an
    unknown key. A mirror that publishes keys or signs specs must sign all of them.
    --deep also downloads each binary and checks its checksum.

    Prints one line per problem (the URL, then what is wrong; the first 20 of each
    kind per mirror, then how many more: --json lists each), then a summary per
    mirror. The catalog keeps each verification (the site and /api/tags/TAG/verify
    show the latest, once the tag is synced); what it lists is not changed.

    --json prints {deep, ok, problems, seconds, tags: [{tag, ok, problems, mirrors:
    [{tag, stack, url, view, layout, started_at, finished_at, deep, checks, skipped,
    listed, found, binaries, signing, keys, signatures: {signed, unsigned, bad,
    unknown_key}, problems: [{kind, url, message, hash}], problem_count, id}]}]}.

    Exit status: 0 no problem, 1 problems found (or an error, or an output closed
    before the end: cachedex verify | head), 2 wrong usage.
    """
    from ..ingest.verify import verify

    verdict_command()

    config = state.config()
    with configured_tags(config, tags), Catalog(config.catalog) as catalog, Reporter() as reporter:
        report = verify(config, catalog, tags or None, deep=deep, reporter=reporter)
        synced = set(catalog.tag_names())
    if as_json:
        from .present import print_json

        print_json(report)
    else:
        print_report(report.tags, report.seconds)
        for tag in sorted({t.tag for t in report.tags} - synced):
            # (the site and the API show a verification beside the tag's listing)
            shown = f"the site and the API show it once the tag is synced (cachedex sync {tag})"
            click.echo(visible(f"{tag}: kept; {shown}"))
    sys.exit(0 if report.ok else 1)


#: Problems of one kind printed per mirror; the others are counted (``--json`` lists
#: each): a mirror with one fault repeats it per spec (950,000 lines for two big tags).
PRINTED_PER_KIND = 20


def print_report(tags: Any, seconds: float) -> None:
    """The problems, one line each (at most :data:`PRINTED_PER_KIND` of a kind per mirror,
    then how many more), then a summary line per mirror and a total."""
    mirrors: list[MirrorVerification] = [m for tag in tags for m in tag.mirrors]
    for mirror in mirrors:
        kinds = Counter(problem.kind for problem in mirror.problems)
        printed: Counter[str] = Counter()
        for problem in mirror.problems:
            printed[problem.kind] += 1
            if printed[problem.kind] <= PRINTED_PER_KIND:
                click.echo(visible(problem.line()))  # (it may quote what a mirror holds)
        for kind, count in kinds.items():
            if count > PRINTED_PER_KIND:
                more = count - PRINTED_PER_KIND
                click.echo(visible(f"... and {more:,} more {kind} in {mirror.tag}/{mirror.stack} (--json lists each)"))
    if any(m.problems for m in mirrors):
        click.echo("")
    for mirror in mirrors:
        click.echo(visible(summary(mirror)))
        for skipped in mirror.skipped:
            click.echo(visible(f"  not checked: {skipped}"))
    total = sum(m.problem_count for m in mirrors)
    verdict = "no problem" if total == 0 else counted(total, "problem")
    click.echo(f"verified {counted(len(mirrors), 'mirror')} in {seconds:.1f} s: {verdict}")


def summary(mirror: MirrorVerification) -> str:
    """One line: the mirror, what it holds, its signatures, its problems."""
    where = f"{mirror.tag}/{mirror.stack}" + (f" (view {short_repr(mirror.view)})" if mirror.view else "")
    problems = "no problem" if mirror.ok else counted(mirror.problem_count, "problem")
    kinds = Counter(problem.kind for problem in mirror.problems)
    if kinds:  # what they are, at a glance
        problems += " (" + ", ".join(f"{n:,} {kind}" for kind, n in kinds.most_common()) + ")"
    if mirror.layout is None:
        layout = "no index" if "index-missing" in kinds else "index unreadable"
        return f"{where}: {mirror.url}: {layout}; {problems}"
    layout = _LAYOUTS.get(mirror.layout, "index unreadable")
    parts = [
        f"{mirror.listed:,} listed",
        f"{mirror.found:,} {'images' if mirror.layout == 100 else 'manifests' if mirror.layout == 3 else 'spec files'}",
        f"{mirror.binaries:,} binaries" + (" checksummed" if mirror.deep else ""),
    ]
    counts = mirror.signatures
    if mirror.signing == "none":
        parts.append("not signed (OCI)")
    elif mirror.signing == "signed" and any(skipped.startswith("signatures: ") for skipped in mirror.skipped):
        parts.append("signed, signatures not checked")  # (its "not checked" line says why)
    elif mirror.signing == "unsigned" and not mirror.keys:
        parts.append("unsigned")
    else:
        signs = [f"{counts.signed:,} signed"]
        signs += [
            f"{n:,} {what}" for n, what in ((counts.bad, "badly signed"), (counts.unknown_key, "by unknown keys"))
        ]
        signs += [f"{counts.unsigned:,} unsigned"] if counts.unsigned else []
        keys = counted(len(mirror.keys), "key")
        parts.append(", ".join(s for s in signs if not s.startswith("0 ")) + f" ({keys} published)")
    return f"{where} ({layout}, {mirror.url}): {'; '.join(parts)}; {problems}"
