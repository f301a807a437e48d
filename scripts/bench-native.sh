#!/usr/bin/env bash
# `serbench run` built for this machine's CPU (`-C target-cpu=native`), next to the portable
# build: the same matrix, the same arguments, another binary.
#
#   scripts/bench-native.sh [serbench run arguments...]   # e.g. --profile full
#
# It builds in its own target dir ($CARGO_TARGET_DIR/native, or target/native), so the portable
# build's artifacts are neither rebuilt nor replaced. Every results row records the build the
# binary was really compiled as (build.rs reads the flags cargo passed: `native` here), and the
# results go to results/local/<system>-native/ unless --out says otherwise, so that
#
#   cargo run --release -- run --profile full          # portable: results/local/<system>/
#   scripts/bench-native.sh --profile full             # native:   results/local/<system>-native/
#   cargo run --release -- compare results/local/x86_64-linux results/local/x86_64-linux-native
#
# puts the two builds side by side arm by arm. RUSTFLAGS already set are kept, the native flag
# added after them.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${SERBENCH_NATIVE_TARGET_DIR:-${CARGO_TARGET_DIR:-target}/native}"
export RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }-C target-cpu=native"
exec cargo run --release --locked --bin serbench -- run "$@"
