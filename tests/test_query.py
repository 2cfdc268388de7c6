"""The query language: parsing, Spack's version rules, variants, the archspec family rule."""

from __future__ import annotations

import pytest

from cachedex.query import BadQuery, Query, parse, target_names, variants_satisfy
from cachedex.query_text import format_query
from cachedex.versions import VersionRange, version_satisfies
from tests.helpers import spack_target_satisfies

PARSED = [
    ("zlib", Query(name="zlib")),
    (
        "py-keras@3.9 backend=jax target=aarch64",
        Query(
            name="py-keras", versions=(VersionRange("3.9", "3.9"),), target="aarch64", variants=(("backend", "jax"),)
        ),
    ),
    (
        "hdf5+mpi~cuda os=ubuntu24.04 %gcc@13",
        Query(
            name="hdf5",
            compiler="gcc",
            compiler_versions=(VersionRange("13", "13"),),
            os="ubuntu24.04",
            variants=(("mpi", True), ("cuda", False)),
        ),
    ),
    ("zlib platform=darwin", Query(name="zlib", platform="darwin")),
    # a value given twice is once; '*' is any value; '@:' any version; an empty part of arch= any
    ("abseil-cpp build_system=cmake,cmake", Query(name="abseil-cpp", variants=(("build_system", "cmake"),))),
    ("x cuda_arch=80,90,80", Query(name="x", variants=(("cuda_arch", ("80", "90")),))),
    ("mpi=* target=* os=* platform=*", Query(variants=(("mpi", "*"),))),
    ("hdf5@:", Query(name="hdf5", versions=(VersionRange("", ""),))),
    ("arch=linux--x86_64", Query(platform="linux", target="x86_64")),
    ("/2763an2", Query(hash_prefix="2763an2")),
    ("cuda_arch=80", Query(variants=(("cuda_arch", "80"),))),
    ("openmpi fabrics=none", Query(name="openmpi", variants=(("fabrics", "none"),))),
    ("arch=linux-ubuntu24.04-x86_64_v3", Query(platform="linux", os="ubuntu24.04", target="x86_64_v3")),
    (
        "target=neoverse_v1 %gcc@11",
        Query(target="neoverse_v1", compiler="gcc", compiler_versions=(VersionRange("11", "11"),)),
    ),
    ("target=aarch64:", Query(target="aarch64:")),
    ("zlib target=:zen3", Query(name="zlib", target=":zen3")),
    ("target=x86_64_v2:zen3,neoverse_v1", Query(target="x86_64_v2:zen3,neoverse_v1")),
    ("arch=linux-ubuntu24.04-:zen3", Query(platform="linux", os="ubuntu24.04", target=":zen3")),
    ("zlib@1.2:1.4", Query(name="zlib", versions=(VersionRange("1.2", "1.4"),))),
    ("zlib@=1.2.3", Query(name="zlib", versions=(VersionRange("1.2.3", "1.2.3", exact=True),))),
    ("zlib@:1.4,2.0:", Query(name="zlib", versions=(VersionRange("", "1.4"), VersionRange("2.0", "")))),
    ("zlib -shared mpi=true", Query(name="zlib", variants=(("shared", False), ("mpi", True)))),
    ("cuda_arch=80,90", Query(variants=(("cuda_arch", ("80", "90")),))),
    ('build_type="Release"', Query(variants=(("build_type", "Release"),))),
    # spaces where Spack's lexer takes them: after '@', '~', '-' and around a version list's commas
    ("foo @ 1.2", Query(name="foo", versions=(VersionRange("1.2", "1.2"),))),
    ("foo @1.10 , 2.1", Query(name="foo", versions=(VersionRange("1.10", "1.10"), VersionRange("2.1", "2.1")))),
    ("bar - shared ~ cuda", Query(name="bar", variants=(("shared", False), ("cuda", False)))),
    ("%gcc@ 13", Query(compiler="gcc", compiler_versions=(VersionRange("13", "13"),))),
    ("foo@git.abc=1.2", Query(name="foo", versions=(VersionRange("1.2", "1.2", exact=True, ref="abc"),))),
    ("foo@git.abc", Query(name="foo", versions=(VersionRange(ref="abc"),))),
    ("hdf5 mpi=True", Query(name="hdf5", variants=(("mpi", True),))),  # (Spack's bool, in any case)
    ("hdf5 mpi=FALSE", Query(name="hdf5", variants=(("mpi", False),))),
    ("", Query()),
]


@pytest.mark.parametrize(("text", "expected"), PARSED, ids=[t or "empty" for t, _ in PARSED])
def test_parse(text: str, expected: Query) -> None:
    assert parse(text) == expected


BAD = [
    ("zlib }", 5, "unexpected '}'"),
    ("zlib zstd", 5, "'zstd' is a second"),
    ("zlib@", 5, "'@' needs a version"),
    ("zlib@1.4:1.2", 5, "empty range"),
    ("arch=linux-x86_64", 5, "platform-os-target"),
    ("/", 1, "'/' needs a hash"),
    ("zlib +mpi +mpi", 10, "given twice"),
    ("target=", 7, "needs a value"),
    ("target=:", 7, "a range"),
    ("zlib target=zen2:zen3:zen4", 12, "a range"),
    ("target=zen3,", 7, "joined by commas"),
    ("arch=linux-ubuntu24.04-a:b:c", 23, "a range"),
    ("@1.2 zlib", 5, "the package name comes first"),
    ("cuda_arch=,", 10, "cuda_arch= has an empty value between its commas"),
    ("cuda_arch=80,,90", 10, "empty value"),
    # Spack 1.0's compiler for one language: named as such, with the search that works
    ("hdf5 %c=gcc@13 +mpi", 7, "a compiler for one language (%c=gcc@13, Spack 1.0) is not read here"),
    ("hdf5 %c=gcc@13 +mpi", 7, "search %gcc@13"),
    ("hdf5 %[virtuals=c] gcc", 5, "(%[virtuals=c] gcc, Spack 1.0) is not read here"),
    ("x %", 2, "unexpected '%'"),
    # a variant propagated to the dependencies (Spack's ++, ~~, ==) is no binary's
    ("hdf5 ++mpi", 5, "++mpi propagates a variant to the dependencies"),
    ("hdf5 ~~mpi", 5, "search ~mpi"),
    ("hdf5 mpi==True", 8, "mpi==True propagates a variant to the dependencies, which Spack settles before it builds"),
    ("hdf5 cflags==-O3", 5, "cflags= is a compiler flag, which cachedex does not search"),
    # Spack 1.0 reads what follows %gcc as gcc's: refused, with the query that asks the package's
    ("hdf5 %gcc@11 target=neoverse_v1", 13, "write it before the compiler: hdf5 target=neoverse_v1 %gcc@11"),
    ("hdf5+mpi %gcc@13 target=x86_64: ^zlib", 17, "before the compiler: hdf5+mpi target=x86_64: %gcc@13 ^zlib"),
    ("hdf5 %gcc -mpi", 10, "-mpi follows %gcc: Spack 1.0 reads it as the compiler's"),
    ("hdf5 %gcc @1.14", 10, "@1.14 follows %gcc"),
    (
        "hdf5 ^mpi=openmpi",
        6,
        "^mpi=openmpi (Spack 1.0: openmpi providing mpi) is not read here; search ^openmpi or ^mpi",
    ),
    (
        "hdf5 ^[virtuals=mpi] openmpi",
        6,
        "an edge's attributes ([virtuals=mpi] openmpi) are not read here; search ^openmpi",
    ),
    ("x cflags=-O3", 2, "cflags= is a compiler flag"),
    ("x ldflags='-L/x -ly'", 2, "ldflags= is a compiler flag"),
    # as Spack's parser: a version ends with a letter, digit or _; a name comes before facets
    ("hdf5@1.", 5, "bad version '1.'"),
    ("hdf5@.14", 5, "bad version '.14'"),
    ("target=x86_64_v3 hdf5", 17, "the package name comes first"),
    ("os=rhel8 @1.2 hdf5", 14, "the package name comes first"),
    (
        "%gcc hdf5",
        5,
        "hdf5 follows %gcc: Spack 1.0 reads it as the compiler's, older Spack as the package's; "
        "for the package's, write it before the compiler: hdf5 %gcc",
    ),
    # a range of a target archspec does not know is refused, as Spack does
    ("target=zen9:", 7, "'zen9' is none of them; target=zen9 alone finds"),
    ("target=zen2,:zen9", 13, "'zen9' is none of them"),
    # no rewrite to suggest where it would be refused too (a nameless ^dep of key=value)
    ("hdf5 ^%gcc target=x", 11, "target=x follows %gcc: Spack 1.0 reads it"),
    # Spack 1.0's compilers for several languages, and propagated compilers: refused as such
    ("bar %c,cxx=gcc", 6, "a compiler for one language (%c,cxx=gcc, Spack 1.0)"),
    ("bar %%c=gcc", 4, "a compiler for one language (%%c=gcc, Spack 1.0)"),
    ("bar %%[virtuals=c] gcc", 4, "a compiler for one language (%%[virtuals=c] gcc"),
    ("bar %%gcc@13", 4, "%%gcc@13 propagates a compiler to the dependencies"),
    # (a binary that two compilers built is each one's: not "its own compiler only")
    ("bar %%gcc@13", 4, "a binary has the compilers that built it only; search %gcc@13"),
    ("bar ^c,cxx=gcc", 5, "^c,cxx=gcc (Spack 1.0: gcc providing c,cxx) is not read here; search ^gcc"),
    # a hash in capitals, a quote left open, a git version at a range's end
    ("/ABC", 1, "a hash is lower case: /abc"),
    ('baz name="a b', 9, "name= has a quote that is not closed"),
    ("baz name='", 9, "name= has a quote that is not closed"),
    ("zlib os=''", 8, "os= needs a value"),
    ("foo@:git.abc", 4, "a git version (git.abc) ends no range"),
    ("foo@git.a:b=1", 4, "bad git reference 'a:b'"),
    ("foo@git.abc=1.4:1.2", 4, "empty range '1.4:1.2'"),
    ("foo@git.abc=git.def", 4, "bad version 'git.def' given git reference 'abc'"),
    ("+mpi hdf5", 5, "the package name comes first"),
    # arch= with none of its three parts (it read as no condition: every spec)
    ("arch=--", 5, "arch= is platform-os-target"),
]


# Bounds: far beyond a question people ask (a thousand ^dep held a server's worker for half a minute)
_DEPS = " ".join(f"^p{n}" for n in range(17))
_VARIANTS = " ".join(f"+v{n}" for n in range(65))
BAD += [
    (_DEPS, _DEPS.rindex("^"), "a query holds at most 16 ^dependencies"),
    ("@" + ",".join(map(str, range(65))), 1, "at most 64 versions or ranges"),
    ("target=" + ",".join(["zen3"] * 65), 7, "target= takes at most 64"),
    ("cuda_arch=" + ",".join(map(str, range(65))), 10, "cuda_arch= takes at most 64 values"),
    (_VARIANTS, _VARIANTS.rindex("+"), "a spec takes at most 64 variants"),
    # a version is kept with its sort key while the query runs: an unbounded one is memory
    ("zlib@" + "1." * 30_000 + "1", 5, "a version is at most 200 characters"),
    ("zlib@1:" + "2" * 201, 5, "a version is at most 200 characters"),
    ("%gcc@=" + "1" * 201, 5, "a version is at most 200 characters"),
    # what is in no name or value: a control character, an argument that was not UTF-8
    # (a lone surrogate, which SQLite would refuse to encode), an invisible one
    ("zlib os=\udcff", 8, "unexpected character \\udcff"),
    ("zlib foo=\x1b[2J", 9, "unexpected character \\x1b"),
    ("zlib target=\u202ezen3", 12, "unexpected character \\u202e"),
    ("zl\u200bib", 2, "unexpected character \\u200b"),
]


def test_the_bounds_hold_what_people_ask() -> None:
    assert len(parse("x " + " ".join(f"^p{n}" for n in range(16))).dependencies) == 16
    assert len(parse(" ".join(f"+v{n}" for n in range(64))).variants) == 64
    assert len(parse("@" + ",".join(map(str, range(64)))).versions) == 64


@pytest.mark.parametrize(("text", "position", "problem"), BAD, ids=[t[:40] for t, _, _ in BAD])
def test_malformed_queries_show_where(text: str, position: int, problem: str) -> None:
    with pytest.raises(BadQuery) as caught:
        parse(text)
    assert caught.value.position == position and problem in caught.value.problem
    lines = str(caught.value).splitlines()
    assert lines[2] == "  " + " " * (len(lines[2]) - 3) + "^"
    if position < len(text):  # the caret under the character it names
        assert lines[1][len(lines[2]) - 1] == text[position]
    if len(text) <= 100:
        assert lines[1] == f"  {text}" and len(lines[2]) == position + 3
    else:  # the part of a long query around the problem, its cut ends "..."
        assert len(lines[1]) <= 2 + 100 + 6 and "..." in lines[1]


def test_a_rewrite_the_refusal_suggests_is_read() -> None:
    for text in ("hdf5 %gcc target=zen4", "hdf5 ^zlib %gcc@13 +pic", "hdf5 ^%gcc target=x", "%gcc hdf5"):
        with pytest.raises(BadQuery) as caught:
            parse(text)
        said = caught.value.problem
        if "write it before the compiler: " in said:
            parse(said.rsplit("write it before the compiler: ", 1)[1])
        else:
            assert said.endswith("write it before the compiler"), said


def test_a_long_query_is_quoted_around_its_problem_only() -> None:
    text = "hdf5 foo=" + "a" * 40_000 + " ~~x bar=" + "b" * 40_000
    with pytest.raises(BadQuery) as caught:
        parse(text)
    assert len(str(caught.value)) < 400 and "~~x" in str(caught.value).splitlines()[1]


VERSIONS = [
    ("@3.9", "3.9", True),
    ("@3.9", "3.9.2", True),
    ("@3.9", "3.10", False),
    ("@3.9", "3.8.9", False),
    ("@1.2:1.4", "1.2", True),
    ("@1.2:1.4", "1.3.7", True),
    ("@1.2:1.4", "1.4.9", True),
    ("@1.2:1.4", "1.5", False),
    ("@1.2:1.4", "1.1.9", False),
    ("@1.2:", "10.0", True),
    ("@:1.4", "0.9", True),
    ("@:1.4", "1.10", False),
    ("@=1.2.3", "1.2.3", True),
    ("@=1.2", "1.2.3", False),
    ("@1.10:", "1.9", False),
    ("@1.10:", "1.10.1", True),  # numeric, not lexical
    ("@1.0a:1.0", "1.0a", True),
    ("@1.0b:", "1.0a", False),  # letters sort before numbers
    ("@2:", "develop", True),
    ("@:99", "main", False),  # branches sort after releases
    ("@1.2,3.0", "3.0.1", True),
    ("@1.2,3.0", "2.0", False),
    ("@=1.1", "1_1", True),  # separators are equal, as in Spack
    ("@=1.1", "1.1.0", False),
    ("@=git.abc=1.2", "1.2", False),  # a git version is its reference too
    ("@:", "0.1", True),
    # a range ends before the version after its end, as Spack's: 1.3rc1 precedes 1.3
    ("@1.2", "1.3rc1", True),
    ("@:1.2", "1.3rc1", True),
    ("@1.2", "1.3.0rc1", False),
    ("@1.2", "1.3", False),
    ("@:1.3rc1", "1.3rc1", True),
    ("@:1.3rc1", "1.3rc2", False),
    # a word's end: before the word after it (Spack's _next_version: 1.2a -> 1.2b)
    ("@:1.2a", "1.2a.1", True),
    ("@:1.2a", "1.2aa", True),
    ("@1.2a", "1.2ab", True),
    ("@:1.2a", "1.2b", False),
    ("@1.2a", "1.2", False),
    ("@:1.2Z", "1.2Za", True),  # Z -> a
    ("@:1.2Z", "1.2a", False),
    ("@:1.2z", "1.2zA", False),  # z -> zA
    ("@:master", "main", False),  # a branch's end: the next branch
    ("@:1.masteq", "1.master", False),  # masteq -> mastes: master is a branch
    ("@=git.abc=1.2", "abc=1_2", True),  # a git version: its reference, its version as Spack reads it
    ("@=git.abc=1.2", "git.abd=1.2", False),
    # a git version asked is built from that reference (git. or a commit's 40 hex digits)
    ("@git.abc1234=1.2", "git.abc1234=1.2", True),
    ("@abc1234=1.2", "git.abc1234=1.2", True),
    ("@git.abc1234=1.2", "1.2", False),
    ("@git.abc1234=1.2", "1.2.5", False),
    ("@git.abc1234=1.2", "git.abc1234=1.2.5", False),
    ("@git.abc1234=1.2", "git.other=1.2", False),
    ("@git.abc1234", "git.abc1234=0.9", True),
    ("@git.abc1234", "git.abc1234", True),
    ("@git.abc1234", "1.0", False),
    ("@git.abc1234=1.1:1.3", "git.abc1234=1.2", True),
    ("@git.abc1234=1.3:", "git.abc1234=1.2", False),
    ("@git.release/1.0", "git.release/1.0", True),
    (f"@{'0123456789' * 4}", f"{'0123456789' * 4}=2.1", True),
    (f"@{'0123456789' * 4}=2.1", "2.1", False),
    ("@1.2", "git.abc1234=1.2.5", True),  # a plain range holds a git version by its given one
    ("@git.abc1234=:1.2", "git.abc1234=2.0", False),  # (a range given by its end alone)
    ("@git.abc1234=:1.2", "git.abc1234=1.0", True),
]


@pytest.mark.parametrize(("query", "version", "expected"), VERSIONS)
def test_spack_version_semantics(query: str, version: str, expected: bool) -> None:
    assert version_satisfies(version, parse(query).versions) is expected


VARIANTS = [
    ("+mpi", ("+mpi", "~cuda"), True),
    ("+mpi", ("~mpi",), False),
    ("~cuda", ("+mpi", "~cuda"), True),
    ("mpi=true", ("+mpi",), True),
    ("+mpi", (), False),
    ("backend=jax", ("backend=jax",), True),
    ("backend=jax", ("backend=tensorflow",), False),
    ("cuda_arch=80", ("cuda_arch:=80,90",), True),
    ("cuda_arch=80,90", ("cuda_arch:=80,90",), True),
    ("cuda_arch=70", ("cuda_arch:=80,90",), False),
    ("cuda_arch=70,80", ("cuda_arch:=80,90",), False),  # every value asked for, not one of them
    ("fabrics=none", ("fabrics:=none",), True),
    ("languages=c,c++", ("languages:='c,c++,fortran'",), True),
    # ':=' asks for the values exactly, as Spack compares concrete values
    ("cuda_arch:=80", ("cuda_arch:=80,90",), False),
    ("cuda_arch:=90,80", ("cuda_arch:=80,90",), True),
    ("languages:=c,c++", ("languages:='c,c++,fortran'",), False),
    ("build_type:=Release", ("build_type=Release",), True),
    # patches are kept as their first 7 characters: a longer one (the whole sha256) by its start
    ("patches=0d38234384870bfd34dfcb738a9083952656f0c766a0f5990b1893076b084b76", ("patches=0d38234",), True),
    ("patches=0d38234384", ("patches:=0d38234,a1b2c3d",), True),
    ("patches=0d38235", ("patches=0d38234",), False),
    ("patches=0d382", ("patches=0d38234",), True),  # a shorter start of one too
    ("patches:=0d38234", ("patches:=0d38234,a1b2c3d",), False),
    # exactly: whole sha256s, as Spack compares concrete values (a prefix is never one)
    ("patches:=0d38234", ("patches=0d38234",), False),
    ("patches:=0d38234" + "5" * 57, ("patches=0d38234",), True),
    ("patches:=0d38235" + "5" * 57, ("patches=0d38234",), False),
    # '*': the variant, with any value (Spack's)
    ("mpi=*", ("+mpi",), True),
    ("mpi=*", ("~mpi",), True),
    ("cuda_arch=*", ("cuda_arch:=80,90",), True),
    ("cuda_arch=*", ("+mpi",), False),
    # a single-valued variant holds one value: two asked are never both it
    ("build_system=cmake,autotools", ("build_system=cmake",), False),
    # exactly these patches: not a spec with one more
    ("patches:=0d38234" + "5" * 57, ("patches:=0d38234,a1b2c3d",), False),
    # an index that writes a boolean as text
    ("+mpi", ("mpi=true",), True),
    ("~mpi", ("mpi=False",), True),
    ("+mpi", ("mpi=false",), False),
]


@pytest.mark.parametrize(("query", "stored", "expected"), VARIANTS)
def test_variant_matching(query: str, stored: tuple[str, ...], expected: bool) -> None:
    assert variants_satisfy(stored, parse(query)) is expected


def test_target_ranges_come_from_archspec() -> None:
    aarch64 = target_names("aarch64:")
    assert {"aarch64", "neoverse_v1", "neoverse_v2", "a64fx", "m1"} <= set(aarch64)
    assert "x86_64_v3" not in aarch64
    assert "zen4" in target_names("x86_64_v3:") and "x86_64" not in target_names("x86_64_v3:")
    assert target_names(":zen3") == ("x86_64", "x86_64_v2", "x86_64_v3", "zen", "zen2", "zen3")
    assert target_names("x86_64_v3:zen3") == ("x86_64_v3", "zen", "zen2", "zen3")
    assert target_names("zen3") == ("zen3",) and target_names("aarch64:zen3") == ()
    assert target_names("not-a-target:") == ("not-a-target",) == target_names(":not-a-target")


def test_target_ranges_are_what_spack_satisfies() -> None:
    """Every range between two of archspec's targets, and each target's family and what it
    runs, against Spack's rule (archspec's microarchitectures compared, in helpers)."""
    import archspec.cpu

    names = sorted(archspec.cpu.TARGETS)
    for low in names:
        for constraint in (f"{low}:", f":{low}", *(f"{low}:{high}" for high in names[::7])):
            expected = {t for t in names if spack_target_satisfies(t, constraint)}
            assert set(target_names(constraint)) == expected, constraint
    assert set(target_names("zen4,:m1,haswell:broadwell")) == {
        t for t in names if spack_target_satisfies(t, "zen4,:m1,haswell:broadwell")
    }


def test_tags_are_ordered_as_people_look_for_them() -> None:
    from cachedex.versions import tag_order

    names = [
        "v0.22.1",
        "develop-2026-11-01",
        "v1.0.2",
        "develop",
        "develop-2026-11-08",
        "v2026.06.0",
        "v0.9.0",
        "zz",
        "aa",
    ]
    assert tag_order(names) == [
        "develop",
        "develop-2026-11-08",
        "develop-2026-11-01",
        "v2026.06.0",
        "v1.0.2",
        "v0.22.1",
        "v0.9.0",
        "aa",
        "zz",
    ]


def test_a_compilers_old_and_new_names_are_one() -> None:
    """``%oneapi`` (a spec before Spack 1.0) and ``%intel-oneapi-compilers`` (its package
    since) find each other's specs, as ``%clang`` and ``%llvm`` do."""
    from cachedex.catalog.facets import facet_terms

    built = ["oneapi@2025.1.0", "intel-oneapi-compilers@2025.1.0", "gcc@13.2.0", "clang@17.0.6", "llvm@18.1.8"]
    assert facet_terms(parse("%oneapi@2025"), lambda: built) == [(2, tuple(built[:2]))]
    assert facet_terms(parse("%intel-oneapi-compilers"), lambda: built) == [(2, tuple(built[:2]))]
    assert facet_terms(parse("%llvm@17:"), lambda: built) == [(2, ("clang@17.0.6", "llvm@18.1.8"))]
    assert facet_terms(parse("%gcc"), lambda: built) == [(2, ("gcc@13.2.0",))]


def test_a_variant_s_empty_value_is_searched_as_its_spec_shows_it() -> None:
    """A spec's empty variant value shows as e='' (as Spack writes it); that query was
    refused, "a quote that is not closed", of a closed one."""
    for text in ("varx e=''", 'varx e=""', "varx e:=''"):
        assert parse(text).variants == (("e", ""),), text
    assert variants_satisfy(("e=''", "+shared"), parse("e=''"))
    assert not variants_satisfy(("e=x",), parse("e=''"))


@pytest.mark.parametrize(
    "text",
    [
        "x='a\"b'",
        'name="it\'s"',
        'x="a b"',
        "x=a",
        # a nameless dependency of variants alone: bare, its first reads as a provider
        'hdf5 ^build_type="Release"',
        'hdf5 ^cuda_arch="80,90"',
        'hdf5 ^build_type:="Release"',
    ],
)
def test_a_value_is_written_back_as_it_parses(text: str) -> None:
    """Hints and the search page write queries back: a value holding a quote or a space
    keeps the quotes that read it again (``x=""a"b"`` would not parse)."""
    query = parse(text)
    assert format_query(query) == text and parse(format_query(query)) == query


@pytest.mark.parametrize(
    "text", ['x ^build_type="R" +mpi', 'x ^g="R" %gcc', "x ^+mpi os=rhel8", 'x ^t="zen3"', 'x ^c="80,90" ~mpi']
)
def test_a_nameless_dependency_is_written_back_as_a_query_that_reads_the_same(text: str) -> None:
    """Its first word not key=value (that reads as Spack 1.0's provider), or key="value";
    the same conditions, perhaps in another order."""
    written = format_query(parse(text))
    again = parse(written)
    assert format_query(again) == written
    (dependency,), (before,) = again.dependencies, parse(text).dependencies
    assert set(dependency.variants) == set(before.variants) and dependency.os == before.os


def test_a_nameless_dependency_s_normal_form_starts_with_what_is_not_key_value() -> None:
    assert format_query(parse('x ^build_type="R" +mpi')) == "x ^+mpi build_type=R"
    assert format_query(parse('x ^build_type="R"')) == 'x ^build_type="R"'  # (none such: quoted)
