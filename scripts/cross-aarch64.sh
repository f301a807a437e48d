#!/usr/bin/env bash
# aarch64 as far as an x86_64 Linux machine reaches (docs/nix.md: Cross builds). Needs root (apt-get)
# the first time; run from anywhere:
#
#   bash scripts/cross-aarch64.sh
#
# 1. aarch64-unknown-linux-gnu: builds serbench with Debian's cross gcc, runs it under
#    qemu-user: every arm proves its round trip (`serbench run --profile smoke`: each arm is
#    verified before it is timed, and a failed round trip is a `failed` row), simd-json's NEON
#    code is what the binary has (on aarch64 simd-json picks NEON at compile time), and
#    `serbench sizes` is byte-identical to the x86_64 build's; its rows say they were emulated,
#    and scripts/gather-report.sh (the workflow's gathering job) reports it beside an x86_64
#    run as an emulated host, out of every ranking.
# 2. aarch64-apple-darwin: `cargo zigbuild` (cargo-zigbuild from crates.io, zig from PyPI's
#    ziglang) links a Mach-O arm64 binary; plain `cargo check` stops in zstd-sys, whose cc
#    passes `-arch` to the host gcc. Nothing here can run it.
#
# Emulated timings are not measurements: everything goes to a temporary folder, nothing into
# results/. The cross builds use the release profile without fat LTO
# (CARGO_PROFILE_RELEASE_LTO=false): the round trips are the same code, and the build takes
# minutes less. Cold, on a loaded 2-core machine: about 12 minutes (docs/nix.md: Cross builds).
set -euo pipefail
cd "$(dirname "$0")/.."
readonly ZIGLANG_VERSION=0.15.2
readonly CARGO_ZIGBUILD_VERSION=0.24.1
readonly MACOSX_DEPLOYMENT_TARGET=11.0
started=$SECONDS
elapsed() { echo "($((SECONDS - started)) s)"; }
fail() {
  echo "cross-aarch64.sh: FAIL: $*" >&2
  exit 1
}

echo "== tools"
missing=()
command -v aarch64-linux-gnu-gcc >/dev/null || missing+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
command -v qemu-aarch64 >/dev/null || missing+=(qemu-user)
command -v aarch64-linux-gnu-nm >/dev/null || missing+=(binutils-aarch64-linux-gnu)
command -v file >/dev/null || missing+=(file)
if [[ ${#missing[@]} -gt 0 ]]; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
rustup target add aarch64-unknown-linux-gnu aarch64-apple-darwin
python3 -m pip install --quiet "ziglang==$ZIGLANG_VERSION"
command -v cargo-zigbuild >/dev/null && [[ $(cargo-zigbuild --version) == *" $CARGO_ZIGBUILD_VERSION" ]] ||
  cargo install --locked --quiet "cargo-zigbuild@$CARGO_ZIGBUILD_VERSION"
qemu-aarch64 --version | head -n 1
echo "tools ready $(elapsed)"

export CARGO_PROFILE_RELEASE_LTO=false
target_dir=${CARGO_TARGET_DIR:-$PWD/target}
work=$(mktemp -d /tmp/serbench-aarch64.XXXXXX)
trap 'rm -rf "$work"' EXIT

echo "== aarch64-unknown-linux-gnu: build with the cross gcc"
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
export AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar
cargo build --locked --release --target aarch64-unknown-linux-gnu --bin serbench
arm=$target_dir/aarch64-unknown-linux-gnu/release/serbench
file "$arm"
echo "built $(elapsed)"

# qemu-user runs the aarch64 binary with Debian's aarch64 libraries; a smoke run stays in one
# process (no worker processes, which would need qemu registered with binfmt_misc).
run_arm() { qemu-aarch64 -L /usr/aarch64-linux-gnu "$arm" "$@"; }

echo "== aarch64-unknown-linux-gnu under qemu-user: every arm proves its round trip"
[[ $(run_arm list --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["arms"]))') -gt 0 ]] ||
  fail "the aarch64 binary lists no arms"
run_arm run --profile smoke --out "$work/aarch64-smoke" >"$work/aarch64-smoke.log" 2>&1 ||
  fail "serbench run under qemu: $(tail -n 5 "$work/aarch64-smoke.log")"
# The arm list goes through a file: its JSON (over 150 KB) exceeds Linux's 128 KiB limit on one
# command-line argument.
run_arm list --json >"$work/arms.json"
python3 - "$work/aarch64-smoke/results.csv" "$work/arms.json" <<'PY'
import csv, json, sys

rows = list(csv.DictReader(open(sys.argv[1])))
arms = len(json.load(open(sys.argv[2]))["arms"])
failed = [f"{r['format']}/{r['backend']} {r['payload']} {r['operation']}: {r['note']}" for r in rows if r["status"] != "ok"]
systems = sorted({r["system"] for r in rows})
if systems != ["aarch64-linux"]:
    sys.exit(f"rows say system {systems}, want aarch64-linux")
if len(rows) != arms or failed:
    sys.exit(f"{len(rows)} rows for {arms} arms; failed: {failed}")
json_arms = sum(1 for r in rows if r["backend"] == "simd-json")
print(f"aarch64-linux: {len(rows)} arms, all ok (round trip verified before timing); simd-json arms: {json_arms}")
PY
neon=$(aarch64-linux-gnu-nm -C "$arm" | grep -o 'simd_json::impls::neon::.*' | sort -u | paste -sd ' ' || true)
[[ -n $neon ]] || fail "the aarch64 binary has no simd-json NEON code"
echo "simd-json NEON code in the binary: $neon (on aarch64 simd-json compiles NEON in, and only NEON) $(elapsed)"

echo "== sizes: aarch64 byte for byte x86_64"
# The host's dev build (the one `cargo test` made): sizes do not depend on the profile.
cargo build --locked --bin serbench
"$target_dir/debug/serbench" sizes --out "$work/x86_64-sizes" >/dev/null
run_arm sizes --out "$work/aarch64-sizes" >/dev/null
cmp "$work/x86_64-sizes/sizes.csv" "$work/aarch64-sizes/sizes.csv" ||
  fail "sizes.csv differs between x86_64 and aarch64"
echo "sizes.csv identical: $(($(wc -l <"$work/x86_64-sizes/sizes.csv") - 1)) rows $(elapsed)"

echo "== the aarch64 run as a host of a multi-host report, marked emulated"
# The workflow's gathering script over this machine's two hosts: the x86_64 dev build's smoke
# run of order and the aarch64 run above. The aarch64 rows must say they were emulated
# (qemu-user shows the x86_64 kernel through /proc/sys/kernel/arch), and the report must keep
# that host out of its rankings.
emulated=$(python3 -c 'import csv, sys; print(" ".join(sorted({r["environment"] for r in csv.DictReader(open(sys.argv[1]))})))' "$work/aarch64-smoke/results.csv")
[[ $emulated == *emulated-on=x86_64* ]] || fail "the aarch64 rows under qemu say environment '$emulated', not emulated-on=x86_64"
mkdir -p "$work/artifacts"
"$target_dir/debug/serbench" run --profile smoke --payload order --out "$work/artifacts/results-x86_64-linux" >/dev/null
cp -r "$work/aarch64-smoke" "$work/artifacts/results-aarch64-linux"
SERBENCH="$target_dir/debug/serbench" bash scripts/gather-report.sh "$work/artifacts" "$work/gathered" >/dev/null
# report.md writes names as escaped Markdown: x86\_64 renders as x86_64.
grep -qF 'aarch64-linux \(emulated\) (run by an emulator on x86\_64)' "$work/gathered/report.md" ||
  fail "the gathered report does not mark the aarch64 host emulated: $(grep -A3 'Across hosts' "$work/gathered/report.md")"
echo "aarch64 rows say '$emulated'; the gathered report of both hosts marks it emulated $(elapsed)"

echo "== aarch64-apple-darwin: cargo zigbuild (zig $ZIGLANG_VERSION, macOS >= $MACOSX_DEPLOYMENT_TARGET)"
export MACOSX_DEPLOYMENT_TARGET
cargo zigbuild --locked --release --target aarch64-apple-darwin --bin serbench
mac=$target_dir/aarch64-apple-darwin/release/serbench
file "$mac"
file "$mac" | grep -q 'Mach-O 64-bit arm64 executable' || fail "not a Mach-O arm64 executable: $(file "$mac")"
echo "linked a Mach-O arm64 binary (not run: no macOS here) $(elapsed)"
echo "cross-aarch64.sh: ok $(elapsed)"
