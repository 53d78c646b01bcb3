#!/usr/bin/env bash
# Builds, on a machine without CUDA, the x86-64 binaries that the GPU checks run
# (tools/gpu/check.sh), stripped, into one folder (default .devbin, which git ignores).
#
#   tools/gpu/build.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-.devbin}
mkdir -p "$dir"

# Copies the test executables that `cargo test --no-run` reports for the named targets.
copy_tests() {
    python3 -c '
import json, shutil, sys
dest, names = sys.argv[1], dict(a.split("=") for a in sys.argv[2:])
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] in names:
        shutil.copy(m["executable"], dest + "/" + names[m["target"]["name"]])
' "$dir" "$@"
}

cargo test --release -p conformance --test cuda --test cuda_device --test cuda_buffers --no-run \
    --message-format=json 2>/dev/null \
    | copy_tests cuda=cuda cuda_device=cuda_device cuda_buffers=cuda_buffers
cargo test --release -p hw --features cuda --lib --no-run --message-format=json \
    2>/dev/null | copy_tests hw=hw-lib
cargo build --release -p tools --bin rshmem
cargo build --release -p litmus --bin litmus-gpu
cargo build --release -p conformance --example cuda_conformance --example cuda_heaps
cp target/release/rshmem target/release/litmus-gpu target/release/examples/cuda_conformance \
    target/release/examples/cuda_heaps "$dir/"
# libshmem and every C test program, built here with oshcc as runtime/capi/tests/programs.rs
# builds them: the GPU machine needs no compiler. The programs find libshmem.so through
# LD_LIBRARY_PATH there; check.sh says how each must end.
cargo build --release -p rshmem-capi
cp target/release/libshmem.so "$dir/"
rm -rf "$dir/c"
mkdir -p "$dir/c"
# The programs written like public applications (runtime/capi/tests/apps) go beside them.
for source in runtime/capi/tests/c/*.c runtime/capi/tests/apps/*.c; do
    program=$(basename "$source" .c)
    tools/osh/bin/oshcc -std=c11 -O1 -Wall -pthread -o "$dir/c/$program" "$source"
done
# The threaded programs of the simulator's tests, which run as processes too.
tools/osh/bin/oshcc -std=c11 -O1 -Wall -pthread -DLOCKED -o "$dir/c/threads_counter" \
    runtime/capi/tests/sim/threads_counter.c
tools/osh/bin/oshcc -std=c11 -O1 -Wall -pthread -o "$dir/c/threads_flag" \
    runtime/capi/tests/sim/threads_flag.c
# libfabric and the libraries it links, for a GPU machine that has none (check.sh's network
# group puts them on LD_LIBRARY_PATH only there).
rm -rf "$dir/ofi"
libfabric=$(ldconfig -p | awk '/libfabric\.so\.1 /{print $NF; exit}')
if [ -n "$libfabric" ]; then
    mkdir -p "$dir/ofi"
    cp -L "$libfabric" "$dir/ofi/"
    ldd "$libfabric" | awk '/=> \//{print $3}' | grep -vE '/(libc|libm|libpthread|libdl)\.so' \
        | xargs -r -I{} cp -L {} "$dir/ofi/"
fi
strip "$dir"/* "$dir"/c/* 2>/dev/null || true
ls -l "$dir"
