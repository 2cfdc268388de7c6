"""Data tables of the demo build caches: compilers, GLIBC versions, provided virtuals, stacks and tags.

The packages themselves, and the table they are parsed from, are in :mod:`.packages`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "COMPILERS",
    "GLIBC",
    "NEW_IN_REVISION_1",
    "PROVIDES",
    "STACKS",
    "TAGS",
    "Compiler",
    "Stack",
    "Tag",
]

#: Packages added only in develop revision 1 (absent from every other tag and revision 0).
NEW_IN_REVISION_1 = ("py-polars", "fzf")


@dataclass(frozen=True)
class Compiler:
    """A compiler of a stack: an external (no binary) or a package built by ``built_with``."""

    name: str  # package name (spec v5)
    version: str
    legacy_name: str  # the spec-v4 compiler name (oneapi, clang, ...)
    languages: tuple[str, ...]
    runtime: str | None  # link-time runtime package (gcc-runtime, intel-oneapi-runtime)
    built_with: str | None = None  # key in COMPILERS of the compiler that built this one
    #: Key in COMPILERS of the compiler of the languages this one lacks: apple-clang has no
    #: Fortran, and Spack's darwin stacks build it with gfortran from gcc (a binary with two
    #: compilers, as ``%gcc`` and ``%apple-clang`` both find it).
    others: str | None = None


COMPILERS = {
    "gcc@11.4.0": Compiler("gcc", "11.4.0", "gcc", ("c", "cxx", "fortran"), "gcc-runtime"),
    "gcc@13.3.0": Compiler("gcc", "13.3.0", "gcc", ("c", "cxx", "fortran"), "gcc-runtime"),
    "gcc@8.5.0": Compiler("gcc", "8.5.0", "gcc", ("c", "cxx", "fortran"), "gcc-runtime"),
    "gcc@7.3.1": Compiler("gcc", "7.3.1", "gcc", ("c", "cxx", "fortran"), "gcc-runtime"),
    "apple-clang@16.0.0": Compiler("apple-clang", "16.0.0", "apple-clang", ("c", "cxx"), None, others="gcc@14.2.0"),
    "gcc@14.2.0": Compiler("gcc", "14.2.0", "gcc", ("c", "cxx", "fortran"), "gcc-runtime"),
    "gcc@12.3.0": Compiler("gcc", "12.3.0", "gcc", ("c", "cxx", "fortran"), "gcc-runtime", "gcc@11.4.0"),
    "intel-oneapi-compilers@2025.1.0": Compiler(
        "intel-oneapi-compilers", "2025.1.0", "oneapi", ("c", "cxx", "fortran"), "intel-oneapi-runtime", "gcc@11.4.0"
    ),
}

GLIBC = {"ubuntu22.04": "2.35", "ubuntu24.04": "2.39", "rhel8": "2.28", "amzn2": "2.26"}

#: The virtuals a package provides to those depending on it (Spack writes them on the
#: edge, ``parameters.virtuals``: a package depends on mpi, and gets openmpi as its mpi).
PROVIDES = {
    "openmpi": ("mpi",),
    "mpich": ("mpi",),
    "zlib-ng": ("zlib-api",),
    "openblas": ("blas", "lapack"),
    "netlib-lapack": ("blas", "lapack"),
    "pkgconf": ("pkgconfig",),
    "libiconv": ("iconv",),
    "libjpeg-turbo": ("jpeg",),
}


@dataclass(frozen=True)
class Stack:
    """One stack: where it builds, with which compiler, which roots, which variant overrides."""

    name: str
    platform: str
    os: str
    target: str  # archspec name; generic families (x86_64, aarch64) are written as strings
    compiler: str  # key in COMPILERS
    roots: tuple[str, ...]
    overrides: tuple[tuple[str, bool | str | tuple[str, ...]], ...] = ()


_HPC = (
    "hdf5 netcdf-c netcdf-fortran parallel-netcdf adios2 petsc slepc trilinos hypre superlu-dist "
    "sundials mfem kokkos kokkos-kernels raja umpire chai caliper zfp sz3 c-blosc py-h5py "
    "py-mpi4py py-numpy py-scipy py-matplotlib gromacs lammps cp2k quantum-espresso julia"
)
_ML = (
    "py-torch py-torchvision py-torchaudio py-tensorflow py-keras py-jax py-scikit-learn "
    "py-transformers py-xgboost py-lightgbm py-pandas py-matplotlib py-jupyterlab py-dask py-xarray"
)
_CUDA = (("cuda", True), ("cuda_arch", ("80", "90")))
STACKS = {
    s.name: s
    for s in (
        Stack("e4s", "linux", "ubuntu22.04", "x86_64_v3", "gcc@11.4.0", tuple(_HPC.split())),
        Stack("e4s-neoverse_v1", "linux", "ubuntu22.04", "neoverse_v1", "gcc@11.4.0", tuple(_HPC.split()[:10])),
        Stack(
            "e4s-oneapi",
            "linux",
            "ubuntu22.04",
            "x86_64_v3",
            "intel-oneapi-compilers@2025.1.0",
            tuple(_HPC.split()[:14]),
        ),
        Stack(
            "ml-linux-x86_64-cuda",
            "linux",
            "ubuntu22.04",
            "x86_64_v3",
            "gcc@11.4.0",
            tuple(_ML.split()) + ("cudnn", "nccl", "magma"),
            _CUDA,
        ),
        Stack(
            "ml-linux-aarch64-cpu",
            "linux",
            "ubuntu22.04",
            "aarch64",
            "gcc@11.4.0",
            ("py-torch", "py-scikit-learn", "py-pandas", "py-matplotlib", "py-jax", "py-dask"),
        ),
        Stack(
            "ml-linux-x86_64-rocm",
            "linux",
            "ubuntu24.04",
            "zen4",
            "gcc@13.3.0",
            ("py-torch", "py-jax", "py-scikit-learn", "hip", "py-pandas"),
            (("rocm", True), ("amdgpu_target", ("gfx90a",))),
        ),
        Stack(
            "radiuss",
            "linux",
            "ubuntu22.04",
            "x86_64_v3",
            "gcc@11.4.0",
            tuple(
                [
                    "raja",
                    "umpire",
                    "chai",
                    "caliper",
                    "conduit",
                    "hypre",
                    "mfem",
                    "sundials",
                    "zfp",
                    "ascent",
                    "adiak",
                    "py-pyyaml",
                ]
            ),
        ),
        Stack(
            "data-vis-sdk",
            "linux",
            "ubuntu22.04",
            "x86_64_v3",
            "gcc@11.4.0",
            tuple(
                [
                    "paraview",
                    "visit",
                    "vtk-m",
                    "vtk",
                    "ascent",
                    "adios2",
                    "py-cinemasci",
                    "zfp",
                    "sz3",
                    "hdf5",
                    "netcdf-c",
                    "cairo",
                ]
            ),
        ),
        Stack(
            "developer-tools-darwin",
            "darwin",
            "sequoia",
            "m1",
            "apple-clang@16.0.0",
            tuple(
                [
                    "cmake",
                    "git",
                    "git-lfs",
                    "ninja",
                    "python",
                    "tmux",
                    "vim",
                    "emacs",
                    "ccache",
                    "llvm",
                    "ripgrep",
                    "meson",
                    "py-pip",
                    "zlib",
                    "netlib-lapack",
                ]
            ),
        ),
        Stack(
            "tutorial",
            "linux",
            "ubuntu22.04",
            "x86_64",
            "gcc@12.3.0",
            tuple(["gcc", "hdf5", "mpich", "zlib-ng", "trilinos", "julia", "py-numpy", "py-scipy", "boost"]),
        ),
        Stack(
            "bootstrap-x86_64-linux-gnu",
            "linux",
            "rhel8",
            "x86_64",
            "gcc@8.5.0",
            tuple(["clingo-bootstrap", "gnupg", "patchelf", "py-pip", "py-setuptools", "py-wheel"]),
        ),
        Stack(
            "aws-pcluster-neoverse_v1",
            "linux",
            "amzn2",
            "neoverse_v1",
            "gcc@7.3.1",
            tuple(["openmpi", "gromacs", "lammps", "quantum-espresso", "wrf", "hdf5", "fftw"]),
        ),
        Stack(
            "developer-tools-x86_64_v3-linux-gnu",
            "linux",
            "ubuntu24.04",
            "x86_64_v3",
            "gcc@13.3.0",
            tuple(
                [
                    "cmake",
                    "git",
                    "gdb",
                    "valgrind",
                    "llvm",
                    "emacs",
                    "tmux",
                    "vim",
                    "ripgrep",
                    "ccache",
                    "py-pip",
                    "curl",
                ]
            ),
        ),
    )
}


@dataclass(frozen=True)
class Tag:
    """One tag: its layout/format, stacks, and how far its package versions lag behind."""

    name: str
    layout: int
    db_version: str
    spec_version: int
    signed: bool
    stacks: tuple[str, ...]
    age: int  # 0 newest; n: recently changed packages use their n-th older version


_ALL = tuple(STACKS)
TAGS = (
    Tag("develop", 3, "8", 5, True, _ALL, 0),
    Tag("develop-2026-11-08", 3, "8", 5, True, _ALL[:-1], 0),
    Tag("develop-2026-11-01", 2, "7", 4, False, tuple(s for s in _ALL[:-1] if s != "ml-linux-x86_64-rocm"), 1),
    Tag("v1.0.2", 2, "7", 4, True, tuple(s for s in _ALL[:-2] if s != "ml-linux-x86_64-rocm"), 2),
)
