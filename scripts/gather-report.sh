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
# OUT.
#
# Only regular files and folders are copied: a symbolic link, FIFO or device in an artifact is
# named on stderr and left out. An artifact that is not a results folder (a symbolic link, a
# name with a control character, no results.csv or one that is not a regular file) is named on
# stderr with the reason and skipped; the others are gathered. Exits 2 with one line, before
# anything is made, for bad arguments (OUT empty, a symbolic link, a file or a folder that is
# not empty; ARTIFACTS not a folder or a symbolic link), and when no artifact is a results
# folder. See docs/results.md#many-hosts.
set -euo pipefail
# Byte order for the folders, [[:cntrl:]] and [[:print:]] of ASCII, printf %q's escapes.
export LC_ALL=C
shopt -s nullglob dotglob

# A name as one line: as it is when it is printable ASCII, else escaped by printf %q ($'a\nb').
shown() {
  if [[ $1 == *[![:print:]]* ]]; then printf '%q' "$1"; else printf '%s' "$1"; fi
}
usage() {
  echo "usage: scripts/gather-report.sh ARTIFACTS OUT ($*)" >&2
  exit 2
}
skipped=0
skip() {
  echo "gather-report.sh: skipped $(shown "$1"): $2" >&2
  skipped=$((skipped + 1))
}

[[ $# == 2 ]] || usage "two arguments"
artifacts=$1 out=$2
serbench=${SERBENCH:-serbench}

# Every argument checked before anything is read or made.
[[ -n $artifacts ]] || usage "ARTIFACTS is empty: name the folder of artifacts"
[[ ! -L $artifacts ]] || usage "$(shown "$artifacts") is a symbolic link: name the folder itself"
[[ -d $artifacts ]] || usage "$(shown "$artifacts") is not a folder"
[[ -n $out ]] || usage "OUT is empty: name a new folder or an empty one"
while [[ $out == */ && $out != / ]]; do out=${out%/}; done
[[ ! -L $out ]] || usage "$(shown "$out") is a symbolic link: name a new folder or an empty one"
if [[ -e $out ]]; then
  [[ -d $out ]] || usage "$(shown "$out") is a file, not a folder: name a new folder or an empty one"
  empty=("$out"/*)
  [[ ${#empty[@]} == 0 ]] || usage "$(shown "$out") is not empty"
fi
parent=$(dirname -- "$out")
[[ ! -e $parent || -d $parent ]] || usage "$(shown "$parent") is not a folder"

# The artifacts that are results folders; every other one named with the reason.
folders=()
for folder in "$artifacts"/*; do
  name=${folder##*/}
  if [[ $name == *[[:cntrl:]]* ]]; then
    skip "$name" "its name holds a control character"
  elif [[ -L $folder ]]; then
    skip "$name" "a symbolic link, not followed"
  elif [[ ! -d $folder ]]; then
    skip "$name" "not a folder"
  elif [[ -L $folder/results.csv ]]; then
    skip "$name" "its results.csv is a symbolic link"
  elif [[ ! -e $folder/results.csv ]]; then
    skip "$name" "no results.csv"
  elif [[ ! -f $folder/results.csv ]]; then
    skip "$name" "its results.csv is not a regular file (a folder, FIFO or device)"
  else
    folders+=("$folder")
  fi
done
[[ ${#folders[@]} -gt 0 ]] || usage "no results folder (<artifact>/results.csv) under $(shown "$artifacts")"
# The binary too, before anything is made.
command -v -- "$serbench" >/dev/null || usage "SERBENCH=$(shown "$serbench") is not a command"

# Copies the regular files and folders under $1 into $2 (made here); anything else is named
# (by its path under ARTIFACTS) and left out.
copy_tree() {
  local from=$1 to=$2 entry
  mkdir "$to"
  [[ -r $from && -x $from ]] || {
    skip "${from#"$artifacts"/}" "a folder that cannot be read"
    return
  }
  for entry in "$from"/*; do
    if [[ -L $entry ]]; then
      skip "${entry#"$artifacts"/}" "a symbolic link, not copied"
    elif [[ -d $entry ]]; then
      copy_tree "$entry" "$to/${entry##*/}"
    elif [[ -f $entry ]]; then
      cp -P -- "$entry" "$to/${entry##*/}"
    else
      skip "${entry#"$artifacts"/}" "not a regular file (a FIFO, device or socket), not copied"
    fi
  done
}

# The binary by an absolute path: the report runs inside the staging folder.
[[ $serbench == */* ]] && serbench=$(realpath -- "$serbench")
mkdir -p -- "$parent"
stage=$(mktemp -d "$parent/.gather.XXXXXX")
trap 'rm -rf -- "$stage"' EXIT
mkdir "$stage/hosts"
names=()
for folder in "${folders[@]}"; do
  name=${folder##*/}
  copy_tree "$folder" "$stage/hosts/$name"
  names+=("hosts/$name")
  echo "host folder: $(shown "$name")"
done
(cd "$stage" && "$serbench" report "${names[@]}" --out .)
# What is published is regular files and folders only, whatever changed while copying.
odd=$(find "$stage" ! -type f ! -type d -print)
[[ -z $odd ]] || {
  echo "gather-report.sh: not a regular file in the report: $(shown "$odd")" >&2
  exit 1
}
chmod 755 "$stage"
# OUT checked again: renaming onto a link or a folder someone filled since would misplace it.
if [[ -L $out ]] || { [[ -e $out ]] && ! rmdir -- "$out" 2>/dev/null; }; then
  echo "gather-report.sh: $(shown "$out") changed while gathering (now a link or not empty)" >&2
  exit 1
fi
mv -- "$stage" "$out"
trap - EXIT
echo "gathered ${#names[@]} folders into $(shown "$out")/report.md$(
  [[ $skipped == 0 ]] || echo "; skipped $skipped (named above)"
)"
