# Sourced by the scaling runs (scripts/scale-run-*.sh): `part LIMIT ARGS...` runs the kernel
# benchmark BIN with ARGS for at most LIMIT seconds, appending its table between two marker
# lines to the one output file `out` (the lent host returns few files).
part() {
  local limit=$1
  shift
  echo "### $* (limit ${limit} s)" >> "$out"
  timeout "$limit" "$BIN" "$@" >> "$out" 2>&1
  echo "### exit $?" >> "$out"
}
