#!/usr/bin/env bash
# Runs C programs built with oshcc under other launchers than rshmem's: Open MPI's mpirun at
# 2 and 4 ranks, and srun --mpi=pmix and --mpi=pmi2 at 4 when SLURM_CONF names a running Slurm
# (tools/launch/slurm-one-host.sh start). Then MPI programs that initialise NVSHMEM with their
# communicator or a unique id, and OpenSHMEM before or after MPI_Init (runtime/capi/tests/mpi),
# where Open MPI's compilers are installed. Builds the C library first if it is missing.
#
#   tools/launch/mpirun-check.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

command -v mpirun >/dev/null || { echo "mpirun-check.sh: mpirun is missing: apt-get install -y openmpi-bin" >&2; exit 1; }
source tools/launch/c-programs.sh
for n in 2 4; do
    for name in "${programs[@]}"; do
        run mpirun --allow-run-as-root --oversubscribe -np "$n" "$dir/$name"
    done
done
if [ -n "${SLURM_CONF:-}" ]; then
    for mpi in pmix pmi2; do
        for name in "${programs[@]}"; do
            run srun -n 4 --mpi="$mpi" "$dir/$name"
        done
    done
else
    echo "mpirun-check.sh: SLURM_CONF is not set, so srun is not checked (tools/launch/slurm-one-host.sh start)"
fi
if command -v mpicxx >/dev/null; then
    # shellcheck disable=SC2046 # the flags are words
    tools/osh/bin/oshc++ $(mpicxx --showme:compile) runtime/capi/tests/mpi/init_attr.cpp -o "$dir/init_attr" $(mpicxx --showme:link)
    # shellcheck disable=SC2046
    tools/osh/bin/oshcc $(mpicc --showme:compile) runtime/capi/tests/mpi/shmem_and_mpi.c -o "$dir/shmem_and_mpi" $(mpicc --showme:link)
    for n in 2 4; do
        for mode in world dup reversed uid; do
            run mpirun --allow-run-as-root --oversubscribe -np "$n" "$dir/init_attr" "$mode"
        done
        run mpirun --allow-run-as-root --oversubscribe -np "$n" "$dir/shmem_and_mpi" shmem-first
        run mpirun --allow-run-as-root --oversubscribe -np "$n" -x RSHMEM_BOOTSTRAP=mpi "$dir/shmem_and_mpi" mpi-first
    done
else
    echo "mpirun-check.sh: mpicxx is missing, so the MPI programs are not checked (apt-get install -y libopenmpi-dev)"
fi
echo "mpirun-check.sh: every program passed"
