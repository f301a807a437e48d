#!/usr/bin/env bash
# pairs.sh BIN OUT [extra vs args...]: the issue's five pairs (and EXTRA_PAIRS), RUNS (10) fresh
# invocations each.
# Writes OUT as TSV: pair, run, seconds, stdout sentence, stderr levels line.
set -u
BIN=$1; OUT=$2; shift 2
extra_args=("$@")
RUNS=${RUNS:-10}
pairs=(
  "order decode postcard/postcard protobuf/prost"
  "order decode json/simd-json json/serde_json"
  "telemetry encode bincode/bincode bitcode/bitcode[native]"
  "readings decode msgpack/rmp-serde cbor/ciborium"
  "telemetry access-partial rkyv/rkyv flatbuffers/flatbuffers"
)
# EXTRA_PAIRS: more pairs, ";"-separated, each "payload op A B" (pairs the design was not tuned on).
IFS=';' read -r -a extra <<< "${EXTRA_PAIRS:-}"
for p in "${extra[@]}"; do [[ -n $p ]] && pairs+=("$p"); done
: > "$OUT"
for run in $(seq 1 "$RUNS"); do
  for p in "${pairs[@]}"; do
    set -- $p
    start=$(date +%s.%N)
    line=$("$BIN" vs "$3" "$4" --payload "$1" --op "$2" "${extra_args[@]}" 2>/tmp/pairs.err | tr '\n' ' ')
    end=$(date +%s.%N)
    lv=$(grep '^levels' /tmp/pairs.err | tr '\n' ' ')
    err=$(grep -v '^levels' /tmp/pairs.err | tail -1)
    printf '%s %s\t%s\t%.1f\t%s\t%s\t%s\n' "$1" "$2" "$run" "$(echo "$end - $start" | bc)" "$line" "$lv" "$err" >> "$OUT"
  done
done
