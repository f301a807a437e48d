#!/usr/bin/env bash
# Is a built sizes.csv the committed one? `nix build .#sizes` (and `serbench sizes`) write the
# built-in payloads only; a committed sizes.csv from a run with `--data` also holds rows of the
# user's data (payload `data:...`). Sizes are the same on every host, so the committed rows of the
# built-in payloads, header included, must be the built file byte for byte, in the same order.
#
#   scripts/sizes-match.sh BUILT_SIZES_CSV COMMITTED_SIZES_CSV
#   scripts/sizes-match.sh result/sizes.csv results/x86_64-linux/sizes.csv
#
# Exit 0 when they match, 1 (with the rows that differ, as a diff) when not, 2 on a usage error.
# Needs bash, awk, cmp and diff: the forge's Linux and macOS runners and .ci/run have them.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 BUILT_SIZES_CSV COMMITTED_SIZES_CSV" >&2
  exit 2
fi
built=$1
committed=$2
for file in "$built" "$committed"; do
  [[ -f $file ]] || {
    echo "$0: no file $file" >&2
    exit 2
  }
done

kept=$(mktemp)
trap 'rm -f "$kept"' EXIT
# The header, then every row whose `payload` field (found by name in the header) does not start
# with `data:`. Fields are CSV: a quoted field may hold commas and doubled quotes.
if ! awk '
  function field(line, wanted,    i, n, c, quoted, value) {
    n = 1; value = ""; quoted = 0
    for (i = 1; i <= length(line); i++) {
      c = substr(line, i, 1)
      if (quoted) {
        if (c == "\"" && substr(line, i + 1, 1) == "\"") { value = value c; i++ }
        else if (c == "\"") quoted = 0
        else value = value c
      } else if (c == "\"") quoted = 1
      else if (c == ",") { if (n == wanted) return value; n++; value = "" }
      else value = value c
    }
    return n == wanted ? value : ""
  }
  NR == 1 {
    for (i = 1; i <= split($0, names, ","); i++) if (names[i] == "payload") column = i
    if (!column) { print "no payload column in the header: " $0 > "/dev/stderr"; exit 1 }
    print
    next
  }
  field($0, column) !~ /^data:/ { print }
' "$committed" >"$kept"; then
  echo "$0: cannot read $committed as a sizes.csv" >&2
  exit 2
fi

rows=$(($(wc -l <"$kept") - 1))
data_rows=$(($(wc -l <"$committed") - 1 - rows))
if cmp -s "$kept" "$built"; then
  echo "sizes match: $built is the $rows rows of built-in payloads in $committed, byte for byte" \
    "(header included; its $data_rows data: rows left aside)"
  exit 0
fi
echo "sizes differ: $built is not the rows of built-in payloads in $committed" \
  "($rows rows and the header; $data_rows data: rows left aside)." \
  "The rows that differ (- committed, + built; @@ counts lines among the header and those rows):"
diff -U0 -L "$committed (built-in payloads)" -L "$built" "$kept" "$built" || true
exit 1
