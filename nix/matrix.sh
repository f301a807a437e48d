#!/usr/bin/env bash
# `nix run .#matrix -- [--flake REF] [--package NAME] [--out DIR] SYSTEM...`: builds
# REF#packages.SYSTEM.NAME (default: `results`, the whole matrix measured inside a build) for every
# SYSTEM given, through the user's own Nix and so through the builders it is configured with
# (nix.conf's `builders`, or NIX_CONFIG), then writes one multi-host report of them all with
# `serbench report`. Nothing is scheduled here: Nix sends each build to a builder of its system
# that has the features the derivation requires (`results` requires `benchmark`), builds them at
# once where builders allow, and the report puts the hosts side by side.
#
#   nix run .#matrix -- x86_64-linux aarch64-linux aarch64-darwin
#   nix run .#matrix -- --flake github:OWNER/serbench --out /tmp/matrix x86_64-linux
#
# DIR (default results/local/matrix) gets hosts/SYSTEM (a link to each build's folder, which
# keeps it from the garbage collector), report.md and charts/. The flake's app sets SERBENCH to
# its serbench; elsewhere serbench is taken from PATH.
set -euo pipefail

usage() {
  echo "usage: nix run .#matrix -- [--flake REF] [--package NAME] [--out DIR] SYSTEM..." >&2
  exit 2
}
flake=.
package=results
out=results/local/matrix
systems=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --flake | --package | --out)
      [[ $# -ge 2 && -n $2 ]] || usage
      case $1 in
        --flake) flake=$2 ;;
        --package) package=$2 ;;
        --out) out=$2 ;;
      esac
      shift 2
      ;;
    -h | --help) usage ;;
    -*)
      echo "matrix: unknown option $1" >&2
      usage
      ;;
    *)
      systems+=("$1")
      shift
      ;;
  esac
done
[[ ${#systems[@]} -gt 0 ]] || usage
command -v nix >/dev/null || {
  echo "matrix: no nix on PATH (it builds through your Nix and its builders)" >&2
  exit 1
}
serbench=${SERBENCH:-serbench}

installables=()
for system in "${systems[@]}"; do
  installables+=("$flake#packages.$system.$package")
done
echo "matrix: building ${installables[*]} through this Nix's builders" >&2
# One invocation, so Nix runs the builds at once where its builders allow (each builder's
# max-jobs still bounds what it takes; a benchmark machine should take one at a time).
nix build --no-link --print-build-logs "${installables[@]}"

mkdir -p "$out/hosts"
folders=()
for system in "${systems[@]}"; do
  # Built above, so this only links the output (a garbage-collector root).
  nix build --out-link "$out/hosts/$system" "$flake#packages.$system.$package"
  folders+=("$out/hosts/$system")
  host=$(sed -n 's/^uname: //p' "$out/hosts/$system/host.txt" 2>/dev/null || true)
  echo "matrix: $system: $(readlink "$out/hosts/$system")${host:+ (built on: $host)}" >&2
done
"$serbench" report "${folders[@]}" --out "$out"
echo "matrix: the report of ${#systems[@]} host(s): $out/report.md" >&2
