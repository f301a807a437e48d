#!/usr/bin/env bash
# Offline tests of the flake (run by .ci/run, as root, no network): what can be proven without
# fetching nixpkgs. Real nixpkgs builds are the networked check (README: Nix).
#
#   bash nix/tests/offline.sh
#
# 1. every .nix file parses;
# 2. flake.lock is consistent with flake.nix's inputs (read without --override-input, which
#    would hide a stale lock);
# 3. with the stub inputs under nix/tests/ (wiring only, see their flake.nix): flake show and
#    flake check --no-build over both systems; the app names are `bench` plus `bench-<format>`
#    for exactly the formats `serbench list --json` reports, and every app is type "app";
#    results evaluates on both systems; results-smoke (every arm once, numbers meaningless)
#    builds on x86_64-linux into one results.csv row per arm; `nix run .#bench-postcard` runs;
#    a bad format exits 2; `nix develop` works and has rust-toolchain.toml's rustc.
#
# SERBENCH_NIX_TARGET_DIR: the cargo target dir the stub build shares (default: ./target, so
# the dependencies `cargo test` compiled are reused).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD

if ! command -v nix >/dev/null; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends nix-bin >/dev/null
fi
export NIX_CONFIG='experimental-features = nix-command flakes
substituters =
sandbox = false
build-users-group ='
nix --version

step() { echo "-- $*"; }
# nix without the noise every stub command repeats: the dirty-tree warning (uncommitted
# flake), the "not writing modified lock file" block (the overrides, by design) and Nix 2.8's
# "evaluating ..." progress lines.
nixq() {
  nix "$@" 2> >(awk '
    /^warning: Git tree .* is dirty$/ || /^evaluating / { next }
    /^warning: not writing modified lock file/ { lockblock = 1; next }
    lockblock && /^(• |    |  → )/ { next }
    { lockblock = 0; print }' >&2)
}
fail() {
  echo "offline.sh: FAIL: $*" >&2
  exit 1
}

# The flake sees only git-tracked files: an untracked flake part would be missing silently.
for file in flake.nix flake.lock treefmt.toml $(find nix -type f); do
  git ls-files --error-unmatch "$file" >/dev/null 2>&1 || fail "$file is not tracked by git (git add it)"
done

step "every .nix file parses"
while IFS= read -r file; do
  nix-instantiate --parse "$file" >/dev/null || fail "$file does not parse"
done < <(git ls-files '*.nix')
echo "$(git ls-files '*.nix' | wc -l) files"

step "flake.lock locks flake.nix's inputs"
inputs_json=$(nix-instantiate --eval --strict --json -E '(import ./flake.nix).inputs')
python3 - "$inputs_json" <<'PY'
import base64, json, re, sys

inputs = json.loads(sys.argv[1])
lock = json.load(open("flake.lock"))
errors = []
if lock.get("version") != 7:
    errors.append(f"lock version {lock.get('version')}, want 7")
nodes = lock["nodes"]
root = nodes[lock["root"]]


def parse_url(url):
    # github:OWNER/REPO[/REF] is the only kind the flake uses.
    match = re.fullmatch(r"github:([^/]+)/([^/?]+)(?:/([^?]+))?", url)
    if not match:
        errors.append(f"unsupported input url {url}")
        return {}
    owner, repo, ref = match.groups()
    original = {"type": "github", "owner": owner, "repo": repo}
    if ref:
        original["ref"] = ref
    return original


if set(root.get("inputs", {})) != set(inputs):
    errors.append(f"root locks {sorted(root.get('inputs', {}))}, flake.nix declares {sorted(inputs)}")
for name, spec in inputs.items():
    node_name = root.get("inputs", {}).get(name)
    if not isinstance(node_name, str) or node_name not in nodes:
        errors.append(f"{name}: no lock node")
        continue
    node = nodes[node_name]
    locked, original = node.get("locked", {}), node.get("original", {})
    if original != parse_url(spec["url"]):
        errors.append(f"{name}: lock original {original} is not flake.nix's {spec['url']}")
    for key in ("type", "owner", "repo"):
        if locked.get(key) != original.get(key):
            errors.append(f"{name}: locked {key} {locked.get(key)} != original {original.get(key)}")
    if not re.fullmatch(r"[0-9a-f]{40}", locked.get("rev", "")):
        errors.append(f"{name}: rev {locked.get('rev')!r} is not 40 hex digits")
    nar = locked.get("narHash", "")
    try:
        ok = nar.startswith("sha256-") and len(base64.b64decode(nar[7:], validate=True)) == 32
    except ValueError:
        ok = False
    if not ok:
        errors.append(f"{name}: narHash {nar!r} is not a sha256 SRI hash")
    if not isinstance(locked.get("lastModified"), int):
        errors.append(f"{name}: lastModified missing")
    # follows: flake.nix's `inputs.X.follows = "Y"` is the path ["Y"] in the lock.
    declared = {sub: val["follows"].split("/") for sub, val in spec.get("inputs", {}).items() if "follows" in val}
    for sub, path in declared.items():
        if node.get("inputs", {}).get(sub) != path:
            errors.append(f"{name}: input {sub} locked as {node.get('inputs', {}).get(sub)}, flake.nix follows {path}")
    for sub, target in node.get("inputs", {}).items():
        if isinstance(target, list) and sub not in declared:
            errors.append(f"{name}: lock follows {sub} -> {target}, flake.nix does not")
        if isinstance(target, str):
            errors.append(f"{name}: its input {sub} is locked separately, not followed")
for error in errors:
    print("flake.lock:", error, file=sys.stderr)
if errors:
    sys.exit(1)
for name in sorted(inputs):
    locked = nodes[root["inputs"][name]]["locked"]
    print(f"{name}: {locked['owner']}/{locked['repo']} {locked['rev']} {locked['narHash']}")
PY

# Nix's own reading: with --no-update-lock-file it fails rather than re-lock a changed input
# (offline, a re-lock is a fetch, which fails at once); an up-to-date lock needs no fetch.
nixq flake metadata --offline --no-update-lock-file . >/dev/null ||
  fail "flake.lock does not match flake.nix: run \`nix flake lock\` on a networked machine"

# The stubs get the host's paths in a temporary copy, so nothing is written into the repo.
work=$(mktemp -d /tmp/serbench-nix.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -r nix/tests/stub-nixpkgs nix/tests/stub-rust-overlay "$work/"
python3 - "$work/stub-nixpkgs/host.json" <<PY
import json, sys
json.dump({
    "cargoHome": "${CARGO_HOME:-$HOME/.cargo}",
    "rustupHome": "${RUSTUP_HOME:-$HOME/.rustup}",
    "targetDir": "${SERBENCH_NIX_TARGET_DIR:-$repo/target}",
}, open(sys.argv[1], "w"))
PY
lock_before=$(sha256sum flake.lock)
stub=(--override-input nixpkgs "path:$work/stub-nixpkgs"
  --override-input rust-overlay "path:$work/stub-rust-overlay"
  --no-write-lock-file)
systems=(x86_64-linux aarch64-darwin)
# Nix >= 2.14 evaluates only the current system unless told; 2.8 (Debian) evaluates all.
all_systems=()
if nix flake check --help 2>/dev/null | grep -q -- --all-systems; then all_systems=(--all-systems); fi

step "nix flake show (stub inputs)"
nixq flake show "${stub[@]}" "${all_systems[@]}" . | sed 's/\x1b\[[0-9;]*m//g' || fail "flake show"

step "nix flake check --no-build (stub inputs, ${systems[*]})"
nixq flake check --no-build "${stub[@]}" "${all_systems[@]}" . || fail "flake check"

step "build packages.x86_64-linux.default through the stub"
nixq build "${stub[@]}" --out-link "$work/serbench" .#packages.x86_64-linux.default || fail "build default"
[[ -x $work/serbench/bin/serbench ]] || fail "no serbench binary"
"$work/serbench/bin/serbench" list --json >"$work/list.json"

step "apps: bench + bench-<format> for the registry's formats, each type = app"
for system in "${systems[@]}"; do
  nixq eval --json "${stub[@]}" ".#apps.$system" \
    --apply 'apps: builtins.mapAttrs (_: app: { inherit (app) type program; }) apps' \
    >"$work/apps-$system.json" || fail "apps.$system does not evaluate"
  python3 - "$work/list.json" "$work/apps-$system.json" "$system" <<'PY'
import json, sys

registry = json.load(open(sys.argv[1]))
apps = json.load(open(sys.argv[2]))
system = sys.argv[3]
want = {"bench"} | {f"bench-{format['name']}" for format in registry["formats"]}
if set(apps) != want:
    sys.exit(f"{system}: apps {sorted(apps)} != bench + the registry's formats {sorted(want)}")
bad = {name: app["type"] for name, app in apps.items() if app["type"] != "app" or not app["program"].startswith("/nix/store/")}
if bad:
    sys.exit(f"{system}: apps not of type app with a store program: {bad}")
print(f"{system}: {len(apps)} apps: {' '.join(sorted(apps))}")
PY
done

step "results evaluates on ${systems[*]}"
for system in "${systems[@]}"; do
  for package in results results-smoke sizes; do
    nixq eval --raw "${stub[@]}" ".#packages.$system.$package.drvPath" >/dev/null ||
      fail "packages.$system.$package does not evaluate"
  done
  features=$(nixq eval --json "${stub[@]}" ".#packages.$system.results.requiredSystemFeatures")
  [[ $features == '["benchmark"]' ]] || fail "$system results: requiredSystemFeatures $features"
  echo "$system: results, results-smoke, sizes evaluate; results requires $features"
done

step "build results-smoke on x86_64-linux through the stub: one results.csv row per arm"
nixq build "${stub[@]}" --out-link "$work/results" .#packages.x86_64-linux.results-smoke ||
  fail "build results-smoke"
[[ -f $work/results/results.csv ]] || fail "results-smoke has no results.csv"
python3 - "$work/list.json" "$work/results" <<'PY'
import csv, json, os, sys

registry = json.load(open(sys.argv[1]))
out = sys.argv[2]
rows = list(csv.DictReader(open(os.path.join(out, "results.csv"))))
arms = len(registry["arms"])
if len(rows) != arms:
    sys.exit(f"results.csv has {len(rows)} rows, the registry {arms} arms")
for name in ("sizes.csv", "host.txt", "summary.txt"):
    if not os.path.isfile(os.path.join(out, name)):
        sys.exit(f"results has no {name}")
statuses = sorted({row["status"] for row in rows})
print(f"{len(rows)} rows = {arms} arms; statuses {statuses}; files {sorted(os.listdir(out))}")
print(open(os.path.join(out, "host.txt")).read().strip())
PY

step "nix run .#bench-postcard -- --payload order"
nixq run "${stub[@]}" .#bench-postcard -- --payload order --out "$work/bench-postcard" \
  >"$work/bench-postcard.log" 2>&1 || fail "bench-postcard: $(tail -n 5 "$work/bench-postcard.log")"
grep ' arms (' "$work/bench-postcard.log"
[[ -f $work/bench-postcard/results.csv ]] || fail "bench-postcard wrote no results.csv"

step "nix run .#bench -- --format nope exits 2"
status=0
nixq run "${stub[@]}" .#bench -- --format nope --out "$work/nope" >"$work/nope.log" 2>&1 || status=$?
head -n 2 "$work/nope.log"
[[ $status == 2 ]] || fail "bench --format nope exited $status, want 2"

step "nix develop -c true"
nixq develop "${stub[@]}" -c true || fail "nix develop"
shell_rustc=$(nixq develop "${stub[@]}" -c rustc --version 2>/dev/null)
echo "dev shell rustc: $shell_rustc"
channel=$(python3 -c 'import tomllib; print(tomllib.load(open("rust-toolchain.toml", "rb"))["toolchain"]["channel"])')
[[ $shell_rustc == "rustc $channel"* ]] || fail "dev shell rustc is not rust-toolchain.toml's $channel"

step "nix fmt and nix develop have treefmt and every formatter treefmt.toml names"
commands=$(python3 -c 'import tomllib
print(" ".join(sorted({f["command"] for f in tomllib.load(open("treefmt.toml", "rb"))["formatter"].values()})))')
nixq build "${stub[@]}" --out-link "$work/formatter" .#formatter.x86_64-linux || fail "build formatter"
formatter_path=$(sed -n 's/^export PATH=\(.*\):\$PATH$/\1/p' "$work/formatter/bin/serbench-fmt")
# The tools must come from the flake (the store), not from whatever the host has.
in_store() { [[ $(PATH=$1 command -v "$2") == /nix/store/* ]]; }
for command in treefmt $commands; do
  in_store "$formatter_path" "$command" || fail "nix fmt: no $command from the flake on its PATH"
done
shell_path=$(nixq develop "${stub[@]}" -c bash -c 'echo "$PATH"' 2>/dev/null)
for command in treefmt cargo-nextest $commands; do
  in_store "$shell_path" "$command" || fail "nix develop: no $command from the flake on its PATH"
done
echo "treefmt cargo-nextest $commands"

[[ $(sha256sum flake.lock) == "$lock_before" ]] || fail "the stub overrides rewrote flake.lock"
echo "offline.sh: ok"
