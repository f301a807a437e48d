#!/usr/bin/env bash
# Builds serbench K more times with the same code in K different layouts, for
# `serbench run --profile full --layout DIR/serbench-layout-1 ...` (docs/measurement.md: "Code layout").
#
#   scripts/build-layouts.sh K [OUTDIR]     (default OUTDIR: target/layouts)
#
# Each build is the release binary relinked with lld's --shuffle-sections=*=<seed> (rustc's
# default linker on x86_64 Linux is its bundled lld; every function is its own section), so
# functions land at other addresses and in another order: what an unrelated change elsewhere
# in the binary does to the same code. Only the serbench binary is rebuilt (cargo rustc passes
# the flag to it alone), but each build redoes its fat LTO, a few minutes each.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:?usage: scripts/build-layouts.sh K [OUTDIR]}
out=${2:-target/layouts}
mkdir -p "$out"
target_dir=${CARGO_TARGET_DIR:-target}
for seed in $(seq 1 "$count"); do
  started=$(date +%s)
  cargo rustc --release --locked --bin serbench -- -C "link-arg=-Wl,--shuffle-sections=*=$seed"
  cp "$target_dir/release/serbench" "$out/serbench-layout-$seed"
  echo "layout $seed: $out/serbench-layout-$seed ($(($(date +%s) - started)) s)"
done
# The plain build again, so target/release/serbench is the unshuffled one.
cargo build --release --locked --bin serbench
