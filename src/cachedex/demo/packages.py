"""The demo's package table and its parsing: the packages every stack concretizes.

:data:`PACKAGES` is parsed from a compact table, one package a line (any order;
:func:`parse_packages` sorts it topologically and rejects cycles):

    name | versions (newest first) | build system | languages | deps | variants

* languages: ``-`` (none: pure Python, data, binaries) or ``c``, ``c,cxx``, ``c,cxx,fortran``
* deps: ``name`` (build+link), ``name:b`` (build), ``name:r`` (build+run), ``name:lr`` (link+run);
  build tools implied by the build system are added by :func:`parse_packages`
* variants: ``+x`` / ``~x`` (bool), ``k=v`` (single-valued), ``k:=a,b`` (multi-valued)

Apart from :mod:`.data` (compilers, stacks, tags): a long table and the parser that reads it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PACKAGES", "Package", "parse_packages"]

_TABLE = """
gmake          | 4.4.1,4.4        | generic   | c         |                                   |
libsigsegv     | 2.14             | autotools | c         |                                   | +shared
m4             | 1.4.19           | autotools | c         | libsigsegv                        | +sigsegv
zlib-ng        | 2.2.1,2.1.6      | autotools | c         |                                   | +compat +new_strategies +opt +pic +shared
zlib           | 1.3.1,1.2.13     | makefile  | c         |                                   | +optimize +pic +shared
bzip2          | 1.0.8            | generic   | c         |                                   | ~debug +pic +shared
xz             | 5.4.6,5.4.1      | autotools | c         |                                   | ~pic libs:=shared,static
zstd           | 1.5.6,1.5.5      | makefile  | c,cxx     |                                   | compression:=none libs:=shared,static +programs
lz4            | 1.10.0,1.9.4     | makefile  | c         |                                   | libs:=shared,static
snappy         | 1.2.1,1.1.10     | cmake     | c,cxx     |                                   | +pic +shared
ncurses        | 6.5,6.4          | autotools | c,cxx     |                                   | abi=none ~symlinks +termlib
readline       | 8.2              | autotools | c         | ncurses                           |
berkeley-db    | 18.1.40          | autotools | c,cxx     |                                   | +cxx ~docs +stl
gdbm           | 1.23             | autotools | c         | readline                          |
perl           | 5.40.0,5.38.0    | generic   | c         | berkeley-db bzip2 gdbm zlib-ng    | +cpanm +opcode +open +shared +threads
autoconf       | 2.72,2.69        | autotools | -         | m4:r perl:r                       |
automake       | 1.16.5           | autotools | -         | autoconf:r perl:r                 |
libtool        | 2.4.7            | autotools | c         | m4:r                              |
pkgconf        | 2.2.0,1.9.5      | autotools | c         |                                   |
libiconv       | 1.17             | autotools | c         |                                   | libs:=shared,static
libxml2        | 2.13.4,2.10.3    | autotools | c         | libiconv xz zlib-ng pkgconf:b     | ~http +pic ~python +shared
gettext        | 0.22.5,0.22.4    | autotools | c,cxx     | libiconv libxml2 ncurses xz       | +bzip2 +curses +git ~libunistring +libxml2 +pic +shared +tar +xz
expat          | 2.6.4,2.6.2      | autotools | c,cxx     |                                   | +libbsd +shared
openssl        | 3.4.0,3.3.1      | generic   | c         | perl:b zlib-ng                    | certs=mozilla ~docs +shared
curl           | 8.11.1,8.10.1    | autotools | c         | openssl zlib-ng nghttp2 pkgconf:b | ~gssapi ~ldap ~librtmp ~libssh ~libssh2 +nghttp2 tls:=openssl
nghttp2        | 1.64.0,1.62.0    | autotools | c,cxx     | pkgconf:b                         |
libffi         | 3.4.6,3.4.4      | autotools | c         |                                   |
sqlite         | 3.46.0,3.43.2    | autotools | c         | readline zlib-ng                  | +column_metadata +dynamic_extensions +fts ~functions +rtree
util-linux-uuid| 2.40.2,2.38.1    | autotools | c         | pkgconf:b                         |
tar            | 1.35,1.34        | autotools | c         | bzip2 libiconv xz zstd            | zip=pigz
pigz           | 2.8              | makefile  | c         | zlib-ng                           |
python         | 3.13.0,3.11.9    | generic   | c,cxx     | bzip2 expat libffi openssl sqlite util-linux-uuid | +bz2 +crypt +ctypes +dbm ~debug +libxml2 +lzma +optimizations +pic +pyexpat +pythoncmd +readline +shared +sqlite3 +ssl ~tkinter +uuid +zlib
py-pip         | 25.1.1,24.0      | generic   | -         | python:r                          |
py-setuptools  | 75.8.0,69.2.0    | generic   | -         | python:r                          |
py-wheel       | 0.45.1,0.41.2    | generic   | -         | python:r                          |
py-flit-core   | 3.10.1,3.9.0     | python_pip| -         |                                   |
py-packaging   | 24.2,23.1        | python_pip| -         | py-flit-core:b                    |
py-cython      | 3.0.11,0.29.36   | python_pip| c,cxx     |                                   |
py-pybind11    | 2.13.6,2.12.0    | cmake     | cxx       | python py-pip:b py-setuptools:b   |
py-six         | 1.16.0           | python_pip| -         |                                   |
py-pyparsing   | 3.1.2,3.1.1      | python_pip| -         | py-flit-core:b                    |
py-pyyaml      | 6.0.2,6.0.1      | python_pip| c         | libyaml py-cython:b               | +libyaml
libyaml        | 0.2.5            | autotools | c         |                                   |
cmake          | 3.31.2,3.30.5,3.27.9 | generic | c,cxx   | curl ncurses zlib-ng              | build_type=Release +doc ~ownlibs ~qtgui
ninja          | 1.12.1,1.11.1    | generic   | c,cxx     | python:b                          | ~re2c
meson          | 1.5.1,1.3.2      | python_pip| -         | ninja:r                           |
bison          | 3.8.2            | autotools | c,cxx     | m4:b perl:b                       | ~color
flex           | 2.6.4,2.6.3      | autotools | c         | bison:b gettext m4:b              | +lex ~nls
hwloc          | 2.11.1,2.9.1     | autotools | c         | libxml2 ncurses pkgconf:b         | ~cairo ~cuda ~gl ~libudev +libxml2 ~nvml ~oneapi-level-zero ~opencl +pci ~rocm +shared
libpciaccess   | 0.17             | autotools | c         | util-macros:b pkgconf:b libtool:b |
util-macros    | 1.20.1,1.19.3    | autotools | -         |                                   |
numactl        | 2.0.18,2.0.14    | autotools | c         | autoconf:b automake:b libtool:b m4:b |
libevent       | 2.1.12           | autotools | c         | openssl                           | +openssl
pmix           | 5.0.5,5.0.3      | autotools | c         | hwloc libevent                    | ~munge ~python ~restful
rdma-core      | 52.0,49.0        | cmake     | c         | libnl pkgconf:b py-docutils:b     | ~ipo +static
libnl          | 3.3.0            | autotools | c         | bison:b flex:b m4:b               |
py-docutils    | 0.21.2,0.20.1    | python_pip| -         |                                   |
ucx            | 1.17.0,1.16.0    | autotools | c,cxx     | numactl rdma-core                 | ~assertions ~cma ~cuda ~dc ~dm +examples ~gdrcopy ~ib_hw_tm ~java ~knem ~logging ~mlx5_dv +openmp +optimizations ~parameter_checking +pic ~rc ~rocm +thread_multiple ~ucg ~ud ~verbs ~vfs ~xpmem
libfabric      | 1.22.0,1.21.0    | autotools | c         | pkgconf:b                         | ~debug fabrics:=sockets,tcp,udp ~kdreg ~uring
openmpi        | 5.0.8,5.0.5,4.1.6 | autotools | c,cxx,fortran | hwloc libevent pmix numactl     | +atomics ~cuda ~debug fabrics:=none +fortran ~gpfs ~internal-hwloc ~internal-libevent ~internal-pmix ~ipv6 ~java ~lustre ~memchecker ~openshmem ~romio romio-filesystem:=none +rsh schedulers:=none ~static ~two_level_namespace +vt +wrapper-rpath
mpich          | 4.2.3,4.2.1      | autotools | c,cxx,fortran | hwloc libfabric libxml2 pkgconf:b | ~argobots ~cuda datatype-engine=auto device=ch4 +fortran ~hcoll +hwloc +libxml2 netmod=ofi pmi=default ~rocm +romio ~slurm ~vci ~verbs +wrapperrpath
cuda           | 12.6.2,12.4.1    | generic   | -         | libxml2                           | ~allow-unsupported-compilers ~dev
hip            | 6.2.4,6.1.2      | cmake     | c,cxx     | numactl pkgconf:b                 | build_type=Release ~cuda +rocm
openblas       | 0.3.28,0.3.26    | makefile  | c,cxx,fortran |                               | ~bignuma ~consistent_fpcsr +dynamic_dispatch +fortran ~ilp64 +locking +pic +shared symbol_suffix=none threads=none
netlib-lapack  | 3.12.0,3.11.0    | cmake     | c,fortran |                                   | ~external-blas +lapacke ~pic +shared ~xblas
fftw           | 3.3.10           | autotools | c,fortran | openmpi                           | +mpi ~openmp ~pfft_patches precision:=double,float
gmp            | 6.3.0,6.2.1      | autotools | c,cxx     | m4:b                              | +cxx libs:=shared,static
mpfr           | 4.2.1,4.2.0      | autotools | c         | gmp                               | libs:=shared,static
mpc            | 1.3.1            | autotools | c         | gmp mpfr                          | libs:=shared,static
isl            | 0.26             | autotools | c,cxx     | gmp                               |
gcc            | 13.3.0,12.3.0    | autotools | c,cxx     | gmp mpc mpfr zlib-ng zstd     | ~binutils +bootstrap ~graphite languages:=c,c++,fortran ~nvptx ~piclibs ~profiled ~strip
intel-oneapi-compilers | 2025.1.0,2024.2.1 | generic | - |                                   | +envmods
boost          | 1.86.0,1.83.0    | generic   | c,cxx     | bzip2 zlib-ng zstd xz             | +atomic +chrono ~clanglibcpp ~container ~context +date_time ~debug +exception +filesystem ~icu +iostreams +multithreaded +program_options +regex +serialization +shared +system ~taggedlayout +thread visibility=hidden
eigen          | 3.4.0            | cmake     | c,cxx     |                                   | build_type=RelWithDebInfo ~nightly_ctest
hdf5           | 1.14.5,1.14.3,1.12.2 | cmake | c,cxx,fortran | openmpi zlib-ng pkgconf:b      | ~cxx +fortran +hl ~ipo ~java +map +mpi +shared ~subfiling ~szip ~threadsafe +tools api=default
netcdf-c       | 4.9.2            | cmake     | c         | hdf5 openmpi zlib-ng curl         | +blosc +byterange +dap ~fsync ~hdf4 ~jna +mpi ~nczarr_zip +optimize ~parallel-netcdf +pic +shared +szip +zstd
netcdf-fortran | 4.6.1            | autotools | c,fortran | netcdf-c                          | ~doc +pic +shared
parallel-netcdf| 1.12.3           | autotools | c,cxx,fortran | openmpi perl:b m4:b           | ~burstbuffer +cxx +fortran +pic +shared
c-blosc        | 1.21.6,1.21.5    | cmake     | c,cxx     | lz4 snappy zlib-ng zstd           | ~avx2
c-blosc2       | 2.15.1,2.11.1    | cmake     | c,cxx     | lz4 zlib-ng zstd                  | +avx2 ~ipo
libpng         | 1.6.44,1.6.39    | cmake     | c         | zlib-ng                           | libs:=shared,static
libjpeg-turbo  | 3.0.4,3.0.0      | cmake     | c         | nasm:b                            | +jpeg8 ~partial_decoder +pic +shared +static
nasm           | 2.16.03,2.15.05  | autotools | c         |                                   |
libtiff        | 4.6.0,4.5.1      | cmake     | c,cxx     | libjpeg-turbo xz zlib-ng zstd     | +ccitt ~jbig +jpeg ~jpeg12 ~lerc ~libdeflate +logluv ~lzma +lzw +next +old-jpeg +packbits ~pic +pixarlog ~shared +thunder ~webp +zlib ~zstd
freetype       | 2.13.3,2.13.2    | autotools | c         | bzip2 libpng zlib-ng pkgconf:b    | ~shared
fontconfig     | 2.15.0,2.14.2    | autotools | c         | expat freetype gperf:b pkgconf:b util-linux-uuid | ~pic
gperf          | 3.1              | autotools | c,cxx     |                                   |
pixman         | 0.44.0,0.42.2    | autotools | c         | libpng pkgconf:b                  |
cairo          | 1.18.0,1.16.0    | meson     | c,cxx     | fontconfig freetype pixman libpng | ~dwrite +fc +ft ~gobject +pdf +png ~quartz ~svg ~x
mesa           | 23.3.6,23.0.3    | meson     | c,cxx     | expat libxml2 zlib-ng zstd        | ~glx +llvm +opengl ~opengles +osmesa ~strip
glew           | 2.2.0            | cmake     | c         | mesa                              | gl=osmesa
libx11         | 1.8.10,1.8.4     | autotools | c         | pkgconf:b util-macros:b           |
qt-base        | 6.8.1,6.7.3      | cmake     | c,cxx     | double-conversion freetype libpng zstd pcre2 | ~accessibility ~dbus +gui ~ipo +network ~opengl +shared +sql +widgets
double-conversion | 3.3.0         | cmake     | c,cxx     |                                   |
pcre2          | 10.44,10.42      | autotools | c         |                                   | ~jit +multibyte
tbb            | 2021.12.0,2021.9.0 | cmake   | c,cxx     | hwloc                             | build_type=Release cxxstd=default +ipo +shared +tm
kokkos         | 4.5.01,4.4.01,4.2.00 | cmake | cxx       |                                   | ~aggressive_vectorization ~compiler_warnings ~complex_align ~cuda ~debug ~deprecated_code ~examples ~hpx ~openmp +serial +shared ~sycl ~tests ~threads ~tuning
kokkos-kernels | 4.5.01,4.4.01    | cmake     | cxx       | kokkos                            | ~blas ~cblas ~cublas ~cusolver ~cusparse ~execspace_cuda ~lapack ~mkl ~openmp +serial +shared ~superlu
camp           | 2024.07.0,2024.02.1 | cmake  | c,cxx     | blt:b                             | ~cuda ~omptarget ~openmp ~rocm ~sycl ~tests
blt            | 0.6.2,0.5.3      | generic   | -         |                                   |
raja           | 2024.07.0,2024.02.2 | cmake  | c,cxx     | blt:b camp                        | ~cuda ~desul ~examples ~exercises ~ipo ~lowop_sycl ~omptask +openmp ~plugins ~rocm ~run-all-tests +shared ~tests ~vectorization
umpire         | 2024.07.0,2024.02.1 | cmake  | c,cxx     | blt:b camp fmt                    | ~asan ~backtrace +c ~cuda ~dev_benchmarks ~device_alloc ~deviceconst ~examples ~fortran ~ipc_shmem ~ipo ~mpi ~numa ~omptarget ~openmp ~rocm ~sanitizer_tests +shared ~sqlite_experimental ~tools ~werror
fmt            | 11.0.2,10.2.1    | cmake     | cxx       |                                   | cxxstd=11 ~ipo +pic +shared
chai           | 2024.07.0,2024.02.2 | cmake  | c,cxx     | blt:b raja umpire                 | ~benchmarks ~cuda ~disable_rm ~enable-pick ~examples ~ipo ~openmp ~raja ~rocm +shared ~tests
caliper        | 2.12.1,2.11.0    | cmake     | c,cxx,fortran | openmpi papi python:b           | +adiak ~cuda ~fortran ~gotcha +libdw ~libpfm +libunwind ~mpi +papi ~rocm +sampler +shared ~sosflow
papi           | 7.1.0,7.0.1      | autotools | c,fortran |                                   | ~cuda +example ~infiniband ~lmsensors ~nvml ~powercap ~rapl ~rocm ~rocm_smi ~sde +shared ~static_tools
adiak          | 0.4.0            | cmake     | c,cxx     | openmpi blt:b                     | +mpi +shared
conduit        | 0.9.2,0.8.8      | cmake     | c,cxx,fortran | hdf5 openmpi python:b         | ~adios ~doc ~doxygen +examples +fortran +hdf5 ~hdf5_compat +mpi ~parmetis ~python +shared ~silo +test +utilities ~zfp
metis          | 5.1.0            | cmake     | c         |                                   | ~gdb ~int64 ~ipo ~no_warning ~real64 +shared
parmetis       | 4.0.3            | cmake     | c,cxx     | metis openmpi                     | ~gdb ~int64 ~ipo +shared
superlu-dist   | 9.1.0,8.2.1      | cmake     | c,cxx,fortran | openblas parmetis metis openmpi | ~cuda ~int64 ~ipo ~openmp ~rocm +shared
hypre          | 2.32.0,2.31.0    | autotools | c,cxx     | openblas openmpi superlu-dist     | ~caliper ~complex ~cuda ~debug +fortran ~gptune ~int64 ~internal-superlu ~magma ~mixedint +mpi ~openmp ~rocm +shared ~superlu-dist ~sycl ~umpire ~unified-memory
sundials       | 7.1.1,6.7.0      | cmake     | c,cxx,fortran | openmpi openblas              | +ARKODE +CVODE +CVODES +IDA +IDAS +KINSOL ~cuda +examples +examples-install ~f2003 ~fcmix ~ginkgo ~hypre ~int64 ~ipo ~klu ~lapack ~magma ~monitoring +mpi ~openmp ~petsc ~pthread ~raja ~rocm +shared +static ~superlu-dist ~superlu-mt ~sycl ~trilinos logging-level=2 precision=double
mfem           | 4.7.0,4.6.0      | makefile  | c,cxx     | hypre metis openmpi zlib-ng       | ~amgx ~conduit ~cuda ~examples ~exceptions ~fms ~ginkgo ~gnutls ~gslib ~hiop ~lapack ~libceed ~libunwind +metis ~miniapps ~mpfr +mpi ~netcdf ~occa ~openmp ~petsc ~pumi ~raja ~rocm ~shared ~slepc +static ~strumpack ~suite-sparse ~sundials ~superlu-dist ~threadsafe ~umpire +zlib timer=auto
petsc          | 3.22.2,3.21.6,3.20.5 | generic | c,cxx,fortran | hdf5 hypre metis openblas parmetis superlu-dist | ~X ~batch ~cgns ~complex ~cuda ~debug +double ~exodusii ~fftw +fortran ~giflib +hdf5 ~hpddm ~hwloc +hypre ~int64 ~jpeg ~knl ~kokkos ~libpng ~libyaml ~memkind +metis ~mkl-pardiso ~mmg ~moab ~mpfr +mpi ~mumps ~openmp ~p4est ~parmmg ~ptscotch ~random123 ~rocm ~saws ~scalapack +shared ~strumpack ~suite-sparse +superlu-dist ~tetgen ~trilinos ~valgrind ~zoltan clanguage=C memalign=none
slepc          | 3.22.2,3.21.2    | generic   | c,fortran | petsc python:b                    | +arpack ~blopex ~cuda ~hpddm ~rocm
trilinos       | 16.0.0,15.1.1    | cmake     | c,cxx,fortran | boost hdf5 openblas openmpi kokkos | ~adelus ~adios2 +amesos +amesos2 +anasazi +aztec ~basker +belos ~boost ~chaco ~complex ~cuda ~cuda_rdc ~debug ~dtk +epetra +epetraext ~epetraextbtf ~epetraextexperimental ~epetraextgraphreorderings ~exodus +explicit_template_instantiation ~float +fortran ~gtest +hdf5 ~hypre +ifpack +ifpack2 ~intrepid ~intrepid2 ~ipo ~isorropia +kokkos ~mesquite ~minitensor +ml +mpi +muelu ~mumps ~nox ~openmp ~panzer ~phalanx ~piro ~python ~rocm ~rol ~rythmos +sacado ~scorec ~shards +shared ~shylu ~stk ~stokhos ~stratimikos ~strumpack ~suite-sparse ~superlu ~superlu-dist ~teko ~tempus ~test ~thyra +tpetra ~trilinoscouplings ~wrapper ~x11 ~zoltan ~zoltan2 cxxstd=17 gotype=long_long
adios2         | 2.10.2,2.9.2     | cmake     | c,cxx,fortran | c-blosc2 hdf5 openmpi zstd python:b | +aws ~bzip2 +campaign ~cuda +dataspaces ~fortran +hdf5 ~ipo ~kokkos ~libcatalyst ~libpressio ~mgard +mpi ~pic ~png ~python ~rocm +sha256 +shared ~sst ~sz ~zfp
zfp            | 1.0.1,1.0.0      | cmake     | c,cxx     |                                   | bsws=64 ~aligned ~c ~cuda ~fasthash ~fortran ~ipo ~openmp ~profile ~python +round ~shared ~strided ~twoway
sz3            | 3.2.1,3.1.8      | cmake     | c,cxx     | zstd pkgconf:b                    | ~hdf5 ~ipo ~mdz ~openmp ~python ~stats ~time_compression
vtk-m          | 2.2.0,2.1.0      | cmake     | c,cxx     | kokkos                            | ~64bitids ~ascent_types ~cuda +doubleprecision ~examples +fpic ~hip ~ipo ~kokkos ~logging ~mpi ~openmp +rendering ~shared ~tbb ~testlib ~virtuals cuda_arch:=none
vtk            | 9.3.1,9.2.6      | cmake     | c,cxx     | expat freetype hdf5 libtiff glew | ~ffmpeg ~ipo +mpi +opengl2 ~osmesa ~python ~qt ~xdmf
paraview       | 5.13.2,5.12.1    | cmake     | c,cxx,fortran | hdf5 openmpi qt-base tbb mesa | +adios2 ~advanced_debug ~cdi ~cuda ~development_files ~eyedomelighting +examples ~fides +hdf5 ~ipo ~kits +libcatalyst ~mpi ~nvindex +opengl2 ~pagosa ~python ~qt ~raytracing ~rocm +shared ~tbb ~visitbridge build_edition=canonical cuda_arch:=none
visit          | 3.4.1,3.3.3      | cmake     | c,cxx     | hdf5 mesa python qt-base vtk | ~adios2 ~conduit ~gui ~hdf5 ~ipo ~mfem ~mpi ~osmesa ~python ~silo ~vtkm
ascent         | 0.9.3,0.9.2      | cmake     | c,cxx,fortran | conduit openmpi vtk-m raja umpire | ~adios2 +blt_find_mpi ~babelflow ~cuda ~dray ~doc ~fides ~fortran ~genten ~ipo ~mfem +mpi ~occa +openmp ~python +serial +shared ~test +vtkh
py-cinemasci   | 1.7.0,1.3        | python_pip| -         | py-pandas py-pillow py-h5py       | ~mpi
git            | 2.47.1,2.45.2    | autotools | c         | curl expat gettext openssl pcre2 | ~man +nls +perl ~svn ~tcltk
git-lfs        | 3.5.1,3.4.1      | generic   | -         | go:b                              |
go             | 1.23.4,1.22.4    | generic   | c         | git:b                             |
rust           | 1.83.0,1.78.0    | generic   | c,cxx     | curl openssl pkgconf:b python:b   | ~dev ~src
ripgrep        | 14.1.1,14.1.0    | generic   | -         | rust:b                            |
fzf            | 0.57.0,0.56.3    | generic   | -         | go:b                              |
tmux           | 3.5a,3.4         | autotools | c         | libevent ncurses pkgconf:b        | ~static ~utf8proc
vim            | 9.1.0437,9.0.0045 | autotools | c        | ncurses                           | ~cscope ~gui ~lua ~perl ~python ~ruby ~x features=normal
emacs          | 29.4,29.3        | autotools | c         | gnutls libxml2 ncurses pkgconf:b zlib-ng | ~X ~json +native ~tls ~treesitter
gnutls         | 3.8.8,3.8.4      | autotools | c,cxx     | gmp nettle libidn2 zlib-ng         | ~guile +zlib
nettle         | 3.9.1            | autotools | c         | gmp m4:b                          |
libidn2        | 2.3.7,2.3.4      | autotools | c         | libunistring pkgconf:b            |
libunistring   | 1.2,1.1          | autotools | c         | libiconv                          |
ccache         | 4.10.2,4.9.1     | cmake     | c,cxx     | zstd hiredis:b                    | +redis
hiredis        | 1.2.0            | makefile  | c         |                                   | ~ssl ~test ~test_async ~test_ssl
llvm           | 19.1.7,18.1.8,17.0.6 | cmake | c,cxx     | hwloc libxml2 ncurses python:b zstd | ~cuda +clang ~code_signing +compiler-rt ~flang +gold +libcxx +libomptarget +lld +lldb +llvm_dylib +lua ~mlir +polly ~python ~split_dwarf +z3 ~zstd build_type=Release shlib_symbol_version=none targets:=all version_suffix=none
gdb            | 15.2,14.2        | autotools | c,cxx     | expat gmp mpfr ncurses python | ~debuginfod +gold ~ld +lto ~quad ~source-highlight +tui +xz
valgrind       | 3.24.0,3.23.0    | autotools | c,cxx     | boost:b                           | ~boost ~mpi ~only64bit ~ubsan
patchelf       | 0.18.0,0.17.2    | autotools | c,cxx     |                                   |
gnupg          | 2.4.5,2.4.4      | autotools | c         | libgcrypt libassuan libksba npth pinentry | +bzip2 ~sqlite
libgpg-error   | 1.50,1.49        | autotools | c         | gawk:b                            |
gawk           | 5.3.1,5.3.0      | autotools | c         | gettext libsigsegv readline mpfr  | ~nls
libgcrypt      | 1.11.0,1.10.3    | autotools | c         | libgpg-error                      |
libassuan      | 3.0.1,2.5.7      | autotools | c         | libgpg-error                      |
libksba        | 1.6.7,1.6.6      | autotools | c         | libgpg-error                      |
npth           | 1.7,1.6          | autotools | c         |                                   |
pinentry       | 1.3.1,1.3.0      | autotools | c         | libassuan libgpg-error            | ~fltk ~gnome ~gtk ~ncurses ~qt ~tty
re2c           | 3.1,2.2          | cmake     | c,cxx     |                                   |
clingo-bootstrap | 5.5.2,5.4.1    | cmake     | c,cxx     | bison:b python re2c:b             | ~docs ~ipo +optimized ~python +static_libstdcpp
py-numpy       | 2.2.1,2.1.3,1.26.4 | python_pip | c,cxx | openblas py-cython:b py-meson-python:b py-pip:b python:lr |
py-meson-python | 0.16.0,0.15.0   | python_pip| -         | meson:r py-packaging:r py-pyproject-metadata:r |
py-pyproject-metadata | 0.8.0,0.7.1 | python_pip | -     | py-packaging:r                    |
py-scipy       | 1.14.1,1.13.1    | python_pip| c,cxx,fortran | openblas py-numpy:lr py-pybind11:b py-meson-python:b |
py-pandas      | 2.2.3,2.2.2      | python_pip| c,cxx     | py-numpy:lr py-python-dateutil:r py-pytz:r py-tzdata:r |
py-python-dateutil | 2.9.0,2.8.2  | python_pip| -         | py-six:r                          |
py-pytz        | 2024.2,2023.3    | python_pip| -         |                                   |
py-tzdata      | 2024.2,2023.3    | python_pip| -         |                                   |
py-pillow      | 11.0.0,10.3.0    | python_pip| c         | freetype libjpeg-turbo libtiff zlib-ng | ~avif ~freetype ~imagequant +jpeg ~jpeg2000 ~lcms ~raqm +tiff ~webp ~xcb +zlib
py-h5py        | 3.12.1,3.11.0    | python_pip| c         | hdf5 py-numpy:lr py-cython:b py-mpi4py:r | +mpi
py-mpi4py      | 4.0.1,3.1.6      | python_pip| c         | openmpi py-cython:b               |
py-matplotlib  | 3.9.2,3.8.4      | python_pip| c,cxx     | py-numpy:lr py-pillow:r py-pyparsing:r py-kiwisolver:lr | backend=agg ~fonts ~latex ~movies
py-kiwisolver  | 1.4.7,1.4.5      | python_pip| cxx       | py-cppy:b                         |
py-cppy        | 1.2.1            | python_pip| cxx       |                                   |
py-scikit-learn | 1.5.2,1.4.2     | python_pip| c,cxx     | py-scipy:lr py-joblib:r py-threadpoolctl:r py-cython:b |
py-joblib      | 1.4.2,1.3.2      | python_pip| -         |                                   |
py-threadpoolctl | 3.5.0,3.2.0    | python_pip| -         |                                   |
protobuf       | 3.28.2,3.25.3    | cmake     | c,cxx     | abseil-cpp zlib-ng                | ~ipo +shared build_type=Release
abseil-cpp     | 20240722.0,20240116.2 | cmake | cxx      |                                   | cxxstd=17 ~ipo +shared
py-protobuf    | 5.28.2,4.25.3    | python_pip| -         | protobuf                          |
py-typing-extensions | 4.12.2,4.8.0 | python_pip | -     | py-flit-core:b                    |
py-filelock    | 3.16.1,3.12.4    | python_pip| -         |                                   |
py-jinja2      | 3.1.4,3.1.2      | python_pip| -         | py-markupsafe:r                   | ~i18n
py-markupsafe  | 2.1.5,2.1.3      | python_pip| c         |                                   |
py-networkx    | 3.4.2,3.1        | python_pip| -         |                                   | ~default ~extra
py-sympy       | 1.13.3,1.13.1    | python_pip| -         | py-mpmath:r                       |
py-mpmath      | 1.3.0            | python_pip| -         |                                   |
py-fsspec      | 2024.10.0,2024.3.1 | python_pip | -     |                                   | ~http
cudnn          | 9.2.0.82-12,8.9.7.29-12 | generic | -    | cuda                              |
nccl           | 2.23.4-1,2.21.5-1 | makefile | c,cxx    | cuda                              | ~cuda cuda_arch:=none
magma          | 2.8.0,2.7.2      | cmake     | c,cxx,fortran | openblas                  | ~cuda +fortran ~ipo ~rocm +shared
onednn         | 3.6.1,3.5.3      | cmake     | c,cxx     |                                   | cpu_runtime=omp gpu_runtime=none ~ipo
sleef          | 3.6.1,3.6        | cmake     | c         |                                   | ~ipo
py-torch       | 2.5.1,2.4.1,2.3.1 | python_pip | c,cxx  | onednn sleef py-numpy:lr py-sympy:r | ~caffe2 ~cuda ~cudnn +custom-protobuf ~debug +distributed +fbgemm +gloo +kineto ~magma ~metal +mkldnn ~mpi ~nccl +numa +numpy +onnx_ml +openmp ~qnnpack ~rocm +tensorpipe ~test +valgrind ~xnnpack cuda_arch:=none
py-torchvision | 0.20.1,0.19.1    | python_pip| c,cxx     | py-torch:lr py-pillow:r libpng libjpeg-turbo |
py-torchaudio  | 2.5.1,2.4.1      | python_pip| c,cxx     | py-torch:lr                       |
py-tensorboard | 2.18.0,2.17.1    | python_pip| -         | py-protobuf:r py-numpy:r py-werkzeug:r py-grpcio:r |
py-werkzeug    | 3.1.3,3.0.4      | python_pip| -         | py-markupsafe:r                   |
py-markdown    | 3.7,3.6          | python_pip| -         |                                   |
py-grpcio      | 1.66.2,1.64.0    | python_pip| c,cxx     | openssl zlib-ng py-cython:b       |
py-h5netcdf    | 1.4.1,1.3.0      | python_pip| -         | py-h5py:r py-packaging:r          |
py-tensorflow  | 2.17.1,2.16.2    | python_pip| c,cxx     | py-numpy:lr py-protobuf:r py-tensorboard:r py-h5py:r | ~android ~cuda ~dynamic_kernels ~gcp ~ios +mkl ~mpi ~nccl ~rocm +xla cuda_arch:=none
py-keras       | 3.7.0,3.6.0      | python_pip| -         | py-tensorflow:r py-torch:r py-rich:r py-namex:r | backend=tensorflow
py-rich        | 13.9.4,13.7.1    | python_pip| -         | py-pygments:r py-markdown-it-py:r |
py-pygments    | 2.18.0,2.17.2    | python_pip| -         |                                   |
py-markdown-it-py | 3.0.0         | python_pip| -         | py-mdurl:r                        |
py-mdurl       | 0.1.2            | python_pip| -         |                                   |
py-namex       | 0.0.8            | python_pip| -         |                                   |
py-jax         | 0.4.35,0.4.31    | python_pip| -         | py-jaxlib:r py-scipy:r py-ml-dtypes:r py-opt-einsum:r |
py-jaxlib      | 0.4.35,0.4.31    | python_pip| c,cxx     | py-numpy:lr py-scipy:r py-ml-dtypes:r | ~cuda ~rocm cuda_arch:=none
py-ml-dtypes   | 0.5.0,0.4.0      | python_pip| c,cxx     | py-numpy:lr                       |
py-opt-einsum  | 3.4.0,3.3.0      | python_pip| -         |                                   |
py-transformers | 4.46.3,4.42.3   | python_pip| -         | py-pyyaml:r py-tokenizers:r py-safetensors:r py-torch:r |
py-tokenizers  | 0.20.3,0.19.1    | python_pip| c         | rust:b                            |
py-safetensors | 0.4.5,0.4.3      | python_pip| c         | rust:b                            |
py-xgboost     | 2.1.3,2.1.1      | python_pip| c,cxx     | py-numpy:r py-scipy:r cmake:b     | ~dask ~pandas ~plotting ~scikit-learn
py-lightgbm    | 4.5.0,4.3.0      | python_pip| c,cxx     | py-numpy:r py-scipy:r cmake:b     | ~mpi
py-jupyterlab  | 4.3.2,4.2.5      | python_pip| -         | py-jinja2:r py-packaging:r py-tornado:r py-traitlets:r |
py-tornado     | 6.4.2,6.4        | python_pip| c         |                                   |
py-traitlets   | 5.14.3,5.14.1    | python_pip| -         |                                   |
py-dask        | 2024.12.0,2024.7.1 | python_pip | -     | py-pyyaml:r py-packaging:r py-fsspec:r | ~array ~bag ~dataframe ~delayed ~diagnostics ~distributed
py-xarray      | 2024.11.0,2024.7.0 | python_pip | -     | py-numpy:r py-pandas:r py-packaging:r |
py-netcdf4     | 1.7.2,1.6.5      | python_pip| c         | netcdf-c hdf5 py-numpy:lr py-cython:b | ~mpi
py-polars      | 1.16.0           | python_pip| c         | rust:b                            |
gromacs        | 2024.4,2024.3,2023.5 | cmake | c,cxx     | fftw openblas openmpi hwloc       | ~cp2k ~cuda ~cycle_subcounters ~double +hwloc ~intel_provided_gcc ~ipo ~itt ~lapack ~mdrun_only +mpi ~nosuffix ~opencl +openmp ~plumed ~relaxed_double_precision +shared ~sycl build_type=Release openmp_max_threads=none
lammps         | 20240829.1,20240207.1 | cmake | c,cxx  | fftw openmpi zlib-ng              | ~adios ~amoeba ~asphere ~body ~bocs ~brownian ~cg-spica ~class2 ~colloid ~colvars ~compress ~coreshell ~cuda ~cuda_mps ~dielectric ~diffraction ~dipole ~dpd-basic ~dpd-meso ~dpd-react ~dpd-smooth ~drude ~eff ~electrode ~exceptions ~extra-compute ~extra-dump ~extra-fix ~extra-molecule ~extra-pair ~fep ~ffmpeg ~granular ~h5md ~heavy ~interlayer ~ipo ~jpeg +kokkos ~kspace ~latboltz ~lepton ~machdyn +manybody ~mc ~meam ~mesont ~mgpt +molecule ~mpi ~netcdf ~openmp ~opt ~orient ~peri ~png ~poems ~python ~qeq ~qtb ~reaction ~reaxff ~replica ~rigid ~rocm ~shock ~sph ~spin ~srd ~tally ~uef ~voronoi ~yaff
quantum-espresso | 7.4,7.3.1      | cmake     | c,fortran | fftw openblas openmpi hdf5        | ~clock ~cmake ~elpa ~environ ~epw ~fox ~gipaw ~gpu-mpi ~hdf5 ~ipo ~libxc ~mpi ~nvtx ~openmp ~patch ~qmcpack ~scalapack +shared hdf5=none
wrf            | 4.6.1,4.5.2      | generic   | c,fortran | netcdf-c netcdf-fortran openmpi perl:b m4:b | ~chem ~pnetcdf build_type=dm+sm compile_type=em_real nesting=basic
julia          | 1.11.2,1.10.4    | generic   | c,cxx,fortran | curl gmp mpfr openblas patchelf:b python:b | ~precompile +openlibm
cp2k           | 2024.3,2024.1    | cmake     | c,cxx,fortran | fftw openblas openmpi     | ~cosma ~cuda ~dlaf ~elpa ~enable_regtests ~ipo ~libint ~libvori ~libxc ~lmax ~mpi_f08 ~openmp ~pexsi ~plumed ~pytorch ~quip ~rocm ~sirius ~spglib ~spla ~sycl
""".strip()

_BUILD_TOOLS = {
    "cmake": ("cmake:b",),
    "autotools": ("gmake:b",),
    "makefile": ("gmake:b",),
    "meson": ("meson:b", "ninja:b"),
    "python_pip": ("python:lr", "py-pip:b"),
}
_VARIANT_DEFAULTS: dict[str, dict[str, bool | str | list[str]]] = {
    "cmake": {"build_system": "cmake", "build_type": "Release", "generator": "make", "ipo": False},
    "meson": {"build_system": "meson", "buildtype": "release", "default_library": ["shared"]},
}
_DEPTYPES = {"": ("build", "link"), "b": ("build",), "r": ("build", "run"), "lr": ("build", "link", "run")}


@dataclass(frozen=True)
class Package:
    """One package: versions newest first, dependencies (name, deptypes), default variants."""

    name: str
    versions: tuple[str, ...]
    build_system: str
    languages: tuple[str, ...]  # subset of c, cxx, fortran
    deps: tuple[tuple[str, tuple[str, ...]], ...]
    variants: dict[str, bool | str | list[str]]


def _variants(build_system: str, text: str) -> dict[str, bool | str | list[str]]:
    out: dict[str, bool | str | list[str]] = {"build_system": build_system}
    out.update(_VARIANT_DEFAULTS.get(build_system, {}))
    for token in text.split():
        if token[0] in "+~":
            out[token[1:]] = token[0] == "+"
        elif ":=" in token:
            key, _, values = token.partition(":=")
            out[key] = values.split(",")
        else:
            key, _, value = token.partition("=")
            out[key] = value
    return out


def parse_packages(table: str = _TABLE) -> dict[str, Package]:
    """The package table as :class:`Package` records; ValueError on a cycle or unknown dep.

    Build tools implied by a build system are added unless the tool needs the package
    itself (cmake is not a build dependency of curl, which cmake links).
    """
    rows = [[p.strip() for p in line.split("|")] for line in table.splitlines()]
    explicit: dict[str, dict[str, tuple[str, ...]]] = {}
    for name, _v, _b, _l, deps, _x in rows:
        explicit[name] = {}
        for token in deps.split():
            dep, _, kind = token.partition(":")
            explicit[name][dep] = _DEPTYPES[kind]
    for name, edges in explicit.items():
        unknown = [dep for dep in edges if dep not in explicit]
        if unknown:
            raise ValueError(f"{name}: unknown dependencies {unknown}")

    def needs(start: str, target: str) -> bool:
        todo, seen = [start], set()
        while todo:
            current = todo.pop()
            if current == target:
                return True
            if current not in seen:
                seen.add(current)
                todo.extend(explicit[current])
        return False

    for name, _v, build_system, _l, _d, _x in rows:
        for implied in _BUILD_TOOLS.get(build_system, ()):
            tool, _, kind = implied.partition(":")
            if tool not in explicit[name] and not needs(tool, name):
                explicit[name][tool] = _DEPTYPES[kind]
    packages: dict[str, Package] = {}
    pending = [row[0] for row in rows]
    while pending:  # topological order: every package after its dependencies
        ready = [n for n in pending if all(d in packages for d in explicit[n])]
        if not ready:
            raise ValueError(f"dependency cycle among {sorted(pending)}")
        for name, versions, build_system, languages, _deps, variants in rows:
            if name in ready:
                packages[name] = Package(
                    name,
                    tuple(versions.split(",")),
                    build_system,
                    () if languages == "-" else tuple(languages.split(",")),
                    tuple(sorted(explicit[name].items())),
                    _variants(build_system, variants),
                )
        pending = [n for n in pending if n not in packages]
    return packages


PACKAGES = parse_packages()
