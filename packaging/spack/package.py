# packaging/spack/package.py - Spack recipe for Telemem: the meson build
# with its transports (+ofi, +ucx), PMIx bootstrap (+pmix) and compatibility
# layers (+armci, +gasnet, +caf) as variants.  Copy it into a Spack package
# repository as packages/telemem/package.py.
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

    homepage = "https://example.org/telemem"
    git = "https://example.org/telemem.git"

    license("BSD-3-Clause")

    version("main", branch="main")

    variant("ofi", default=True, description="libfabric transport (ofi)")
    variant("ucx", default=True, description="UCX transport (ucx)")
    variant("pmix", default=True,
            description="PMIx bootstrap: jobs started by mpirun or srun")
    variant("armci", default=True,
            description="libarmci, the ARMCI API of ARMCI-MPI over Telemem")
    variant("gasnet", default=True,
            description="libgasnet, the GASNet-1 API over Telemem")
    variant("caf", default=True,
            description="libcaf_telemem, gfortran's coarray runtime "
            "(-fcoarray=lib) over Telemem, and the caf-telemem wrapper")

    depends_on("c", type="build")
    # The coarray runtime is C; its tests and its users need gfortran.
    depends_on("fortran", type=("build", "run"), when="+caf")
    depends_on("meson@0.63:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("python@3:", type="build")  # man pages, generated
    depends_on("libfabric", when="+ofi")
    depends_on("ucx", when="+ucx")
    depends_on("pmix", when="+pmix")
    # libarmci is MPI-aware, as ARMCI-MPI is: ARMCI groups hold MPI
    # communicators and armci.h includes mpi.h.
    depends_on("mpi", when="+armci")

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

        return [
            feature("ofi"),
            feature("ucx"),
            feature("pmix"),
            boolean("armci"),
            boolean("gasnet"),
            boolean("caf"),
            # The benchmarks build (they need FFTW and PAPI only if found)
            # but are not installed.
            "-Dinstall_benchmarks=false",
            "-Dpapi=disabled",
        ]
