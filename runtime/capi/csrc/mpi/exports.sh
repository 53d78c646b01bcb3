#!/bin/sh
# Writes libmpi.so.40.exports, the names the simulator's MPI shim defines, from Open MPI's
# library: every function it exports ("function NAME"), and its predefined handle objects
# ("object NAME SIZE"), whose sizes a program's copy relocations take. Run it again after an
# Open MPI upgrade: sh exports.sh /usr/lib/x86_64-linux-gnu/libmpi.so.40
set -eu
lib=${1:-/usr/lib/x86_64-linux-gnu/libmpi.so.40}
here=$(dirname "$0")
nm -S -D --defined-only "$lib" | awk '
  $3 == "T" || $3 == "W" || $3 == "i" { print "function", $4; next }
  ($3 == "D" || $3 == "B") && NF == 4 && $4 ~ /^(ompi_mpi_|ompi_request_null$|ompi_message_null$|ompi_message_no_proc$)/ {
    size = 0
    for (i = 1; i <= length($2); i++) size = size * 16 + index("0123456789abcdef", substr($2, i, 1)) - 1
    if (size >= 256) print "object", $4, size
  }' | sort -u > "$here/libmpi.so.40.exports"
