#!/usr/bin/env bash
# Runs C programs built with oshcc under MPICH's launcher, Hydra (mpiexec.hydra), at 2 and 4
# ranks with each PMI bootstrap (auto, which takes PMI-1 under Hydra, and pmi1 and pmi2
# forced); then the MPI programs of runtime/capi/tests/mpi built with MPICH's compiler wrappers
# (mpicc.mpich, mpicxx.mpich), initialising NVSHMEM with their MPI communicator and OpenSHMEM
# over MPI_COMM_WORLD. Open MPI stays the default mpirun and mpicc: MPICH is used by its own
# names. Builds the C library first if it is missing.
#
#   tools/launch/hydra-check.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

command -v mpiexec.hydra >/dev/null || { echo "hydra-check.sh: mpiexec.hydra is missing: apt-get install -y mpich" >&2; exit 1; }
source tools/launch/c-programs.sh
for n in 2 4; do
    for bootstrap in auto pmi1 pmi2; do
        for name in "${programs[@]}"; do
            run env RSHMEM_BOOTSTRAP="$bootstrap" mpiexec.hydra -n "$n" "$dir/$name"
        done
    done
done
echo "== mpiexec.hydra -n 1 rshmem info"
timeout -k 5 60 mpiexec.hydra -n 1 target/release/rshmem info | tail -1
status=0
tools/osh/bin/oshcc runtime/capi/tests/c/global_exit.c -o "$dir/global_exit"
timeout -k 5 60 mpiexec.hydra -n 4 "$dir/global_exit" >/dev/null 2>&1 || status=$?
[ "$status" = 7 ] || { echo "hydra-check.sh: a global exit with status 7 ended the job with $status" >&2; exit 1; }
if command -v mpicxx.mpich >/dev/null; then
    # The wrappers' -compile_info and -link_info begin with the compiler's name.
    # shellcheck disable=SC2046 # the flags are words
    tools/osh/bin/oshc++ $(mpicxx.mpich -compile_info | cut -d' ' -f2-) runtime/capi/tests/mpi/init_attr.cpp -o "$dir/init_attr" $(mpicxx.mpich -link_info | cut -d' ' -f2-)
    # shellcheck disable=SC2046
    tools/osh/bin/oshcc $(mpicc.mpich -compile_info | cut -d' ' -f2-) runtime/capi/tests/mpi/shmem_and_mpi.c -o "$dir/shmem_and_mpi" $(mpicc.mpich -link_info | cut -d' ' -f2-)
    for n in 2 4; do
        for mode in world dup reversed uid; do
            run mpiexec.hydra -n "$n" "$dir/init_attr" "$mode"
        done
        run env RSHMEM_BOOTSTRAP=mpi mpiexec.hydra -n "$n" "$dir/shmem_and_mpi" mpi-first
        run mpiexec.hydra -n "$n" "$dir/shmem_and_mpi" shmem-first
    done
else
    echo "hydra-check.sh: mpicxx.mpich is missing, so the MPI programs are not checked (apt-get install -y libmpich-dev)"
fi
echo "hydra-check.sh: every program passed"
