# packaging/spack/package.py - Spack recipe for Telemem: the meson build
# with its transports (+ofi, +ucx), launcher interfaces (+pmix, +pmi2) and
# compatibility layers (+armci, +gasnet, +caf) as variants, the options of
# meson_options.txt.  Copy it into a Spack package repository as
# packages/telemem/package.py.
#
# The project has no public address yet: https://example.org/telemem
# below is a placeholder (example.org is reserved for examples, RFC 2606),
# as in debian/; nothing can be fetched from it.  The project's real
# address goes, in one change, into homepage, git (the address + ".git")
# and url here, and into debian/control (Homepage, the Maintainer's
# mail), debian/copyright (Source) and debian/changelog (its mails):
# packaging/README.md lists them, and tests/lint (packaging) fails while
# homepage, Homepage and Source differ.  url is where a release tarball
# lies: the file `meson dist` makes, telemem-<version>.tar.xz (project
# name and version of meson.build), in the project's release directory.
# Once one is published, add its line with `spack checksum telemem
# <version>`.  0.1.0 (CHANGELOG.md) was never published as a tarball: it
# is fetched from git by its commit.
try:  # Spack 1.0 and later: build systems live in the builtin repository
    from spack_repo.builtin.build_systems.meson import MesonPackage
except ImportError:  # Spack 0.x exports them from spack.package
    pass
from spack.package import *  # noqa: F401,F403


class Telemem(MesonPackage):
    """One-sided communication (put, get, strided and vector transfers,
    accumulate, atomics, mutexes, quiet, barrier, collectives, active
    messages) carried out by polling over two-sided active messages, with a
    direct (RDMA-style) path where it is faster, ARMCI and GASNet-1 layers,
    a Coarray Fortran runtime for gfortran, and its own launcher,
    telemem-run."""

    # Placeholders: the project's real address goes here (above).
    homepage = "https://example.org/telemem"
    git = "https://example.org/telemem.git"
    url = "https://example.org/telemem/releases/telemem-0.1.0.tar.xz"

    license("BSD-3-Clause")

    version("main", branch="main")
    version("0.1.0", commit="8db95ff8e95dc0bb97d00dcec1a2f4d8fac5f189")

    variant("ofi", default=True, description="libfabric transport (ofi)")
    variant("ucx", default=True, description="UCX transport (ucx)")
    variant("pmix", default=True,
            description="PMIx bootstrap: jobs started by mpirun or srun")
    # Options that came after 0.1.0, which always built both layers and
    # joined Slurm jobs over PMIx only.
    variant("pmi2", default=False, when="@0.1.1:",
            description="PMI-2 bootstrap through Slurm's libpmi2 "
                        "(srun --mpi=pmi2; without it, PMI-1)")
    variant("armci", default=True, when="@0.1.1:",
            description="libarmci, the ARMCI API of ARMCI-MPI over Telemem")
    variant("gasnet", default=True, when="@0.1.1:",
            description="libgasnet, the GASNet-1 API over Telemem")
    variant("caf", default=True, when="@0.1.1:",
            description="libcaf_telemem, gfortran's coarray runtime "
            "(-fcoarray=lib) over Telemem, and the caf-telemem wrapper")

    # Versions: the least that meson.build asks for (meson), else those of
    # Debian 12, where Telemem is built and tested.
    depends_on("c", type="build")
    # The coarray runtime is C; its tests and its users need gfortran.
    depends_on("fortran", type=("build", "run"), when="+caf")
    depends_on("meson@0.63:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("python@3:", type="build")  # man pages, generated
    depends_on("libfabric@1.17:", when="+ofi")
    depends_on("ucx@1.13:", when="+ucx")
    depends_on("pmix@4.2:", when="+pmix")
    # slurm/pmi2.h and libpmi2; a site's Slurm is usually an external.
    depends_on("slurm", when="+pmi2")
    # libarmci is MPI-aware, as ARMCI-MPI is: ARMCI groups hold MPI
    # communicators and armci.h includes mpi.h.  Debian 12: Open MPI 4.1.
    depends_on("mpi@3:", when="+armci")
    depends_on("mpi@3:", when="@0.1.0")

    # Shared memory through /dev/shm, futexes and process_vm_writev.
    conflicts("platform=darwin", msg="Telemem runs on Linux only")
    conflicts("platform=windows", msg="Telemem runs on Linux only")

    def meson_args(self):
        spec = self.spec

        def feature(name):
            on = spec.satisfies("+" + name)
            return "-D{0}={1}".format(name, "enabled" if on else "disabled")

        def boolean(name):
            on = spec.satisfies("+" + name)
            return "-D{0}={1}".format(name, "true" if on else "false")

        args = [
            feature("ofi"),
            feature("ucx"),
            feature("pmix"),
            # The benchmarks build (with FFTW if found) but are not
            # installed: no PAPI, no MPI two-sided comparison.
            "-Dpapi=disabled",
            "-Dopenmpi_compare=disabled",
        ]
        if spec.satisfies("@0.1.1:"):
            args += [
                feature("pmi2"),
                boolean("armci"),
                boolean("gasnet"),
                boolean("caf"),
                "-Dinstall_benchmarks=false",
            ]
        return args
