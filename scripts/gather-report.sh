#!/usr/bin/env bash
# The workflow's gathering job (.github/workflows/nix.yml), runnable anywhere: every results
# folder under ARTIFACTS (one per host, as actions/download-artifact lays them out:
# ARTIFACTS/<artifact>/results.csv) into one multi-host report in OUT, by `serbench report`.
#
#   scripts/gather-report.sh ARTIFACTS OUT
#
# SERBENCH names the binary (default: serbench on PATH). OUT gets report.md, report.html and
# charts/ (hosts side by side, rank agreement and flips between hosts, sizes checked identical),
# and a copy of each host's folder under hosts/<artifact>/, so the published page carries its
# data and names its folders relative to itself. Folders are taken in name order, so the same
# artifacts give the same report. Everything is made in a folder beside OUT and renamed to OUT
# only when the report succeeded: a refused input (sizes that differ, a corrupt file) leaves no
# OUT. Exits 2 with one line when ARTIFACTS holds no results folder or OUT is not empty.
set -euo pipefail
usage() {
  echo "usage: scripts/gather-report.sh ARTIFACTS OUT ($*)" >&2
  exit 2
}
[[ $# == 2 ]] || usage "two arguments"
artifacts=$1 out=$2
serbench=${SERBENCH:-serbench}
[[ -d $artifacts ]] || usage "$artifacts is not a folder"
if [[ -e $out ]] && [[ -n $(ls -A "$out") ]]; then usage "$out is not empty"; fi

folders=()
while IFS= read -r folder; do
  [[ -f $folder/results.csv ]] && folders+=("$folder")
done < <(find "$artifacts" -mindepth 1 -maxdepth 1 -type d | LC_ALL=C sort)
[[ ${#folders[@]} -gt 0 ]] || usage "no results folder (<artifact>/results.csv) under $artifacts"

# The binary by an absolute path: the report runs inside the staging folder.
[[ $serbench == */* ]] && serbench=$(realpath "$serbench")
mkdir -p "$(dirname "$out")"
stage=$(mktemp -d "$(dirname "$out")/.gather.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/hosts"
names=()
for folder in "${folders[@]}"; do
  name=$(basename "$folder")
  cp -r "$folder" "$stage/hosts/$name"
  names+=("hosts/$name")
  echo "host folder: $name ($(($(wc -l <"$folder/results.csv") - 1)) rows)"
done
(cd "$stage" && "$serbench" report "${names[@]}" --out .)
chmod 755 "$stage"
[[ -d $out ]] && rmdir "$out"
mv "$stage" "$out"
trap - EXIT
echo "gathered ${#names[@]} folders into $out/report.md"
