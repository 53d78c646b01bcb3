# Sourced by mpirun-check.sh and hydra-check.sh from the repository root: builds libshmem if
# it is missing and the C test programs they start into a temporary folder ($dir, removed on
# exit), and defines run, which says what it starts and gives it a minute.
[ -e target/release/libshmem.so ] || cargo build --release -p rshmem-capi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
programs=(hello rma collectives amo)
for name in "${programs[@]}"; do
    tools/osh/bin/oshcc "runtime/capi/tests/c/$name.c" -o "$dir/$name"
done

run() {
    echo "== $*"
    timeout -k 5 60 "$@"
}
