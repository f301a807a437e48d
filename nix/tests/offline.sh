#!/usr/bin/env bash
# Offline tests of the flake (run by .ci/run, as root, no network): what can be proven without
# fetching nixpkgs. Real nixpkgs builds are the networked check (docs/nix.md).
#
#   bash nix/tests/offline.sh
#
# 1. every .nix file parses and keeps to nixfmt's 100 columns; flake.lock is consistent with
#    flake.nix's inputs (read without --override-input, which would hide a stale lock);
# 2. the flake evaluated on nixpkgs' own semantics: a stub package set (nix/tests/stub-nixpkgs:
#    stubs for builders and tools only) on the REAL nixpkgs lib (../shared/nixpkgs-lib), with the
#    REAL rust-overlay as flake.lock pins it (../shared/rust-overlay, its narHash checked): every
#    output (packages, apps, checks, devShells, formatter) on every system (x86_64-linux,
#    aarch64-linux, aarch64-darwin), flake show and flake check --no-build; apps are `bench`,
#    `bench-native`, `matrix` plus `bench-<format>` for exactly the registry's formats, each a
#    plain app; one commit id (nix/commit.nix, git, the binary); a commit that changes no source
#    rebuilds no binary and no sizes;
# 3. builds, in Nix's sandbox where this Nix can make one (as root: a user namespace; it says
#    so when it cannot), through the stub rust-overlay (the host's rustup toolchain): every
#    output of checks and packages for x86_64-linux but packages.results (the full matrix):
#    checks.test (cargo test inside the build, on the whole tree), clippy, fmt, formatting,
#    the package, sizes (scripts/sizes-match.sh against the committed sizes.csv) and
#    results-smoke (every arm once, numbers meaningless) into one results.csv row per arm, each
#    saying it ran inside a Nix build; `nix run .#bench-postcard` (a direct run, a portable
#    build; with --typed, a generated crate built through the wrapper's toolchain and source);
#    `nix run .#bench-native` (built with -C target-cpu=native, its rows say native); a bad
#    format exits 2; `nix develop` (its rustc, valgrind and setarch; a run there is direct);
#    `nix fmt` leaves a clean checkout unchanged, and checks.formatting and checks.fmt fail on a
#    misformatted one (with the host's formatters).
# It ends by saying which parts ran on real code and which on stubs. Without ../shared (a user's
# clone) the real lib and overlay are replaced by nix/tests/stub-nixpkgs/fallback-lib.nix and
# the stub overlay, and it says what it skipped. nix/tests/remote-builder.sh (run after it) sends
# a results build to a real remote builder over SSH.
#
# SERBENCH_NIX_TARGET_DIR: the cargo target dir the stub builds share (default: ./target, so
# the dependencies `cargo test` compiled are reused; the sandbox mounts it).
# SERBENCH_NIX_SANDBOX=false: build without the sandbox.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
# Nix (installed if missing), NIX_CONFIG (no network, no build users, the sandbox where it
# works), step/fail/nixq, the host's tools and the stub inputs' setup.
source nix/tests/common.sh
nix --version
echo "sandbox = $sandbox; extra-sandbox-paths = ${sandbox_paths[*]}"
# What ran on real code and what on stubs, printed at the end.
real=()
stubbed=()
skipped=()
if [[ $sandbox == true ]]; then
  real+=("Nix's sandbox around every build (a user namespace as root; /build, no /etc/os-release, only the host paths above)")
else
  skipped+=("the sandbox: this Nix could not sandbox a build here (see above), so builds ran unsandboxed")
fi

# The flake sees only git-tracked files: an untracked flake part would be missing silently.
for file in flake.nix flake.lock treefmt.toml taplo.toml $(find nix -type f); do
  git ls-files --error-unmatch "$file" >/dev/null 2>&1 || fail "$file is not tracked by git (git add it)"
done

step "every .nix file parses"
while IFS= read -r file; do
  nix-instantiate --parse "$file" >/dev/null || fail "$file does not parse"
done < <(git ls-files '*.nix')
echo "$(git ls-files '*.nix' | wc -l) files"

step "no .nix line is wider than nixfmt's 100 columns"
# nixfmt (checks.formatting) is on none of the registries this machine reaches; its width is the
# one rule checked here, on every line (stricter than nixfmt, which leaves strings and comments).
wide=$(git ls-files '*.nix' | python3 -c 'import sys
for name in sys.stdin.read().split():
    for number, line in enumerate(open(name, encoding="utf-8").read().split("\n"), 1):
        if len(line) > 100:
            print(f"{name}:{number}: {len(line)} columns")')
[[ -z $wide ]] || fail "lines wider than 100 columns (nixfmt's width):"$'\n'"$wide"
echo "every line of $(git ls-files '*.nix' | wc -l) files within 100 columns"

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


work=$(mktemp -d /tmp/serbench-nix.XXXXXX)
trap 'rm -rf "$work"' EXIT
stub_inputs "$work"
if [[ -n $real_lib ]]; then
  real+=("nixpkgs lib ($real_lib, $(cat "$real_lib/.version" 2>/dev/null || echo "version unknown")): callPackage (makeOverridable), genAttrs, getExe, makeBinPath, systems.elaborate, in every evaluation and build below")
else
  skipped+=("the real nixpkgs lib: no ../shared/nixpkgs-lib; fallback-lib.nix stood in for it")
  stubbed+=("nixpkgs lib: nix/tests/stub-nixpkgs/fallback-lib.nix")
fi
absent_tools=$(python3 -c 'import json, sys
tools = json.load(open(sys.argv[1]))["tools"]
print(" ".join(t for t in ("treefmt", "taplo", "prettier", "nixfmt", "valgrind", "setarch") if t not in tools))' "$work/stub-nixpkgs/host.json")
lock_before=$(sha256sum flake.lock)

# Builds go through the stub rust-overlay (the real one downloads its toolchain).
stub_nixpkgs=(--override-input nixpkgs "path:$work/stub-nixpkgs")
stub_overlay=(--override-input rust-overlay "path:$work/stub-rust-overlay")
build=("${stub_nixpkgs[@]}" "${stub_overlay[@]}" --no-write-lock-file)
if [[ -n $real_overlay ]]; then
  step "the real rust-overlay is flake.lock's input"
  locked=$(python3 -c 'import json; n = json.load(open("flake.lock"))["nodes"]["rust-overlay"]["locked"]; print(n["rev"], n["narHash"])')
  read -r overlay_rev overlay_nar <<<"$locked"
  actual=$(nix hash path "$real_overlay")
  [[ $actual == "$overlay_nar" ]] ||
    fail "nix hash path $real_overlay is $actual, flake.lock's rust-overlay narHash $overlay_nar"
  # Nix looks for the store path a locked input's narHash names before it fetches, so with the
  # tree added as that path the lock's own github input resolves offline, unchanged.
  nix store add-path --name source "$real_overlay" >/dev/null
  echo "$real_overlay: $actual = flake.lock's narHash (rev $overlay_rev)"
  evaluate_inputs=("${stub_nixpkgs[@]}")
else
  skipped+=("the real rust-overlay: no ../shared/rust-overlay; the stub overlay stood in for evaluation too")
  evaluate_inputs=("${stub_nixpkgs[@]}" "${stub_overlay[@]}")
fi
evaluate=("${evaluate_inputs[@]}" --no-write-lock-file)
# The systems the flake promises (flake.nix): every output is evaluated on each.
systems=(x86_64-linux aarch64-linux aarch64-darwin)
# Nix >= 2.14 evaluates only the current system unless told; 2.8 (Debian) evaluates all.
all_systems=()
if nix flake check --help 2>/dev/null | grep -q -- --all-systems; then all_systems=(--all-systems); fi

step "the toolchain rust-toolchain.toml names, as the overlay resolves it"
for system in "${systems[@]}"; do
  toolchain=$(nixq eval --raw "${evaluate[@]}" ".#packages.$system.default" \
    --apply 'package: (builtins.head (package.unwrapped or package).nativeBuildInputs).name') || fail "$system: the toolchain does not evaluate"
  echo "$system: $toolchain"
  if [[ -n $real_overlay && $toolchain == rust-stub-* ]]; then fail "$system: the stub overlay answered, not the real one"; fi
done
[[ -n $real_overlay ]] && real+=("rust-overlay $overlay_rev (flake.lock's input, narHash checked): evaluation of every output on ${systems[*]} (flake show, flake check --no-build, apps, checks, packages, dev shells), toolchain $toolchain")

step "every output has exactly the systems ${systems[*]}"
for output in packages apps checks devShells formatter; do
  got=$(nixq eval --json "${evaluate[@]}" ".#$output" --apply 'output: builtins.attrNames output') ||
    fail "$output does not evaluate"
  want=$(printf '%s\n' "${systems[@]}" | sort | python3 -c 'import json, sys; print(json.dumps(sys.stdin.read().split(), separators=(",", ":")))')
  [[ $got == "$want" ]] || fail "$output has the systems $got, want $want"
done
echo "packages apps checks devShells formatter: ${systems[*]}"

step "nix flake show"
nixq flake show "${evaluate[@]}" "${all_systems[@]}" . | sed 's/\x1b\[[0-9;]*m//g' || fail "flake show"

step "nix flake check --no-build (${systems[*]})"
nixq flake check --no-build "${evaluate[@]}" "${all_systems[@]}" . || fail "flake check"

step "build packages.x86_64-linux.default (stub overlay)"
nixq build "${build[@]}" --out-link "$work/serbench" .#packages.x86_64-linux.default || fail "build default"
[[ -x $work/serbench/bin/serbench ]] || fail "no serbench binary"
"$work/serbench/bin/serbench" list --json >"$work/list.json"

step "apps: bench, bench-native, matrix + bench-<format> for the registry's formats, each a plain app"
for system in "${systems[@]}"; do
  nixq eval --json "${evaluate[@]}" ".#apps.$system" \
    --apply 'apps: builtins.mapAttrs (_: app: { keys = builtins.attrNames app; type = app.type or null; program = app.program or ""; }) apps' \
    >"$work/apps-$system.json" || fail "apps.$system does not evaluate"
  python3 - "$work/list.json" "$work/apps-$system.json" "$system" <<'PY'
import json, sys

registry = json.load(open(sys.argv[1]))
apps = json.load(open(sys.argv[2]))
system = sys.argv[3]
want = {"bench", "bench-native", "matrix"} | {f"bench-{format['name']}" for format in registry["formats"]}
if set(apps) != want:
    sys.exit(f"{system}: apps {sorted(apps)} != bench, bench-native, matrix + the registry's formats {sorted(want)}")
bad = {
    name: app
    for name, app in apps.items()
    if app["type"] != "app" or not app["program"].startswith("/nix/store/") or not set(app["keys"]) <= {"type", "program", "meta"}
}
if bad:
    sys.exit(f"{system}: not plain apps (type app, a store program, nothing else but meta): {bad}")
print(f"{system}: {len(apps)} apps: {' '.join(sorted(apps))}")
PY
done

step "checks: every attribute a derivation"
for system in "${systems[@]}"; do
  checks=$(nixq eval --json "${evaluate[@]}" ".#checks.$system" \
    --apply 'checks: builtins.mapAttrs (_: check: check.type or null) checks') || fail "checks.$system does not evaluate"
  python3 - "$checks" "$system" <<'PY'
import json, sys

checks, system = json.loads(sys.argv[1]), sys.argv[2]
bad = sorted(name for name, kind in checks.items() if kind != "derivation")
if bad:
    sys.exit(f"{system}: checks that are not derivations: {bad}")
missing = {"formatting", "test", "clippy", "fmt", "serbench", "sizes", "results-smoke"} - set(checks)
if missing:
    sys.exit(f"{system}: checks missing {sorted(missing)}")
print(f"{system}: {' '.join(sorted(checks))}")
PY
done

step "every package, check, dev shell and formatter evaluates to a derivation on ${systems[*]}"
# Each one's derivation path, so evaluating it goes as deep as a build would.
for output in packages checks devShells formatter; do
  case $output in
    formatter) apply='bySystem: builtins.mapAttrs (_: drv: { formatter = drv.drvPath; }) bySystem' ;;
    *) apply='bySystem: builtins.mapAttrs (_: builtins.mapAttrs (_: drv: drv.drvPath)) bySystem' ;;
  esac
  nixq eval --json "${evaluate[@]}" ".#$output" --apply "$apply" >"$work/drvs-$output.json" ||
    fail "$output does not evaluate"
done
python3 - "$work" "${systems[@]}" <<'PY'
import json, sys

work, systems = sys.argv[1], sys.argv[2:]
for system in systems:
    line = []
    for output in ("packages", "checks", "devShells", "formatter"):
        drvs = json.load(open(f"{work}/drvs-{output}.json"))[system]
        bad = sorted(name for name, path in drvs.items() if not path.endswith(".drv"))
        if bad:
            sys.exit(f"{output}.{system}: not derivations: {bad}")
        line.append(f"{output} {' '.join(sorted(drvs))}")
    print(f"{system}: " + "; ".join(line))
PY
for system in "${systems[@]}"; do
  features=$(nixq eval --json "${evaluate[@]}" ".#packages.$system.results.requiredSystemFeatures")
  [[ $features == '["benchmark"]' ]] || fail "$system results: requiredSystemFeatures $features"
done
echo "results requires [\"benchmark\"] on ${systems[*]}"

step "one commit id: nix/commit.nix as build.rs (12 hex digits, -dirty)"
rev=0123456789abcdef0123456789abcdef01234567
for case in "{ rev = \"$rev\"; }=0123456789ab" "{ dirtyRev = \"$rev-dirty\"; }=0123456789ab-dirty" "{ }=unknown"; do
  self=${case%=*} want=${case##*=}
  got=$(nix-instantiate --eval --json -E "import ./nix/commit.nix $self" 2>/dev/null | tr -d '"')
  [[ $got == "$want" ]] || fail "nix/commit.nix $self gives $got, want $want"
  echo "self $self -> $got"
done
# With --override-input Nix treats the flake as dirty (it has no self.rev), so the commit is
# checked in a clone that locks the stub inputs into its own flake.lock and commits that: a clean
# checkout whose inputs need no override. Its flake's commit, git's and the binary's agree (and
# a cargo build's: tests/commit.rs).
git clone -q "$repo" "$work/clone"
commit_all() { git -C "$work/clone" -c user.name=offline -c user.email=offline@test commit -qam "$1"; }
(cd "$work/clone" && nixq flake lock "${stub_nixpkgs[@]}" "${stub_overlay[@]}") || fail "cannot lock the clone's inputs"
commit_all "offline test: the stub inputs locked"
head12() { git -C "$work/clone" rev-parse HEAD | cut -c1-12; }
flake_commit() { nixq eval --raw "$work/clone#packages.x86_64-linux.default.commit"; }
[[ $(flake_commit) == "$(head12)" ]] || fail "the flake's commit of a clean checkout is $(flake_commit), git HEAD is $(head12)"
nixq build --out-link "$work/clone-serbench" "$work/clone#packages.x86_64-linux.default" || fail "build the clone's package"
"$work/clone-serbench/bin/serbench" run --profile smoke --payload order --format postcard --out "$work/clone-run" >/dev/null 2>&1
binary_commits=$(python3 -c 'import csv, sys; print(" ".join(sorted({r["commit"] for r in csv.DictReader(open(sys.argv[1]))})))' "$work/clone-run/results.csv")
[[ $binary_commits == "$(head12)" ]] || fail "the stamped binary says commit $binary_commits, git HEAD is $(head12)"
echo "clean checkout: flake commit = the binary's rows = git rev-parse HEAD, 12 hex: $(head12)"
echo "tracked change" >>"$work/clone/README.md"
dirty=$(flake_commit)
# Nix < 2.16 gives a dirty tree no commit (no dirtyRev): `unknown`, never another id.
[[ $dirty == "$(head12)-dirty" || $dirty == unknown ]] || fail "the flake's commit of a dirty checkout is $dirty"
echo "dirty checkout: flake commit $dirty"
git -C "$work/clone" checkout -q README.md

step "a fresh store substitutes serbench from a signed binary cache instead of building it"
# What the workflow's push does (sign, nix copy to the cache), into a file cache; then a new
# store that may build nothing (--max-jobs 0) realises the clone's package from the cache alone,
# and neither without the cache nor with another key can it.
nixq key generate-secret --key-name serbench-offline-1 >"$work/cache.secret"
nixq key convert-secret-to-public <"$work/cache.secret" >"$work/cache.public"
served=$(readlink -f "$work/clone-serbench")
nixq store sign --key-file "$work/cache.secret" --recursive "$served" || fail "cannot sign $served"
nixq copy --to "file://$work/binary-cache" "$served" || fail "cannot copy $served to a file cache"
fresh_build() {
  local store=$1
  shift
  nix build -L --store "$work/$store" --max-jobs 0 --no-link "$@" "$work/clone#packages.x86_64-linux.default"
}
fresh_build fresh-store --substituters "file://$work/binary-cache" \
  --trusted-public-keys "$(cat "$work/cache.public")" >"$work/fresh-store.log" 2>&1 ||
  fail "a fresh store did not substitute the package: $(tail -n 5 "$work/fresh-store.log")"
grep -q "copying path '$served' from 'file://$work/binary-cache'" "$work/fresh-store.log" ||
  fail "the fresh store has the package, but not from the cache: $(tail -n 5 "$work/fresh-store.log")"
nixq path-info --store "$work/fresh-store" --sigs "$served" | grep -q 'serbench-offline-1:' ||
  fail "the substituted package does not carry the cache's signature"
nixq key generate-secret --key-name another-1 | nixq key convert-secret-to-public >"$work/other.public"
for refused in empty-store other-key-store; do
  trust=()
  if [[ $refused == other-key-store ]]; then
    trust=(--substituters "file://$work/binary-cache" --trusted-public-keys "$(cat "$work/other.public")")
  fi
  if fresh_build "$refused" "${trust[@]}" >"$work/$refused.log" 2>&1; then
    fail "$refused: a fresh store realised the package with no cache it trusts"
  fi
  grep -q 'unable to start any build' "$work/$refused.log" ||
    fail "$refused failed, but not for want of a substitute: $(tail -n 5 "$work/$refused.log")"
done
echo "a new store, no builds allowed: substituted $(basename "$served") from the signed file cache;" \
  "refused without the cache and with another key"
real+=("a binary cache: the clone's package signed, copied to a file cache and substituted into a fresh store that may not build")

step "a commit that changes no source rebuilds no binary (the wrapper stamps the commit)"
# The binary's, the size report's and the stamped package's derivations, one line.
derivations() {
  local attr paths=()
  for attr in default.unwrapped sizes default; do
    paths+=("$(nixq eval --raw "$work/clone#packages.x86_64-linux.$attr.drvPath")") ||
      fail "packages.x86_64-linux.$attr does not evaluate in the clone"
  done
  echo "${paths[*]}"
}
read -r unwrapped_a sizes_a wrapper_a <<<"$(derivations)"
echo "README edit" >>"$work/clone/README.md"
commit_all "README only"
read -r unwrapped_b sizes_b wrapper_b <<<"$(derivations)"
[[ -n $unwrapped_a && $unwrapped_a == "$unwrapped_b" && $sizes_a == "$sizes_b" ]] ||
  fail "a README-only commit changed the binary or sizes derivation"
[[ $wrapper_a != "$wrapper_b" ]] || fail "a new commit left the stamped package unchanged"
[[ $(flake_commit) == "$(head12)" ]] || fail "the wrapper does not carry the new commit"
echo "// offline test" >>"$work/clone/src/lib.rs"
commit_all "a source edit"
read -r unwrapped_c _ <<<"$(derivations)"
[[ $unwrapped_c != "$unwrapped_b" ]] || fail "a source edit did not change the binary's derivation (the check above would prove nothing)"
echo "README-only commit: same binary and sizes derivations, new wrapper; a source commit: new binary"

step "build results-smoke on x86_64-linux: one results.csv row per arm, each measured inside a Nix build"
nixq build "${build[@]}" --out-link "$work/results" .#packages.x86_64-linux.results-smoke ||
  fail "build results-smoke"
[[ -f $work/results/results.csv ]] || fail "results-smoke has no results.csv"
commit=$(nixq eval --raw "${build[@]}" .#packages.x86_64-linux.default.commit)
python3 - "$work/list.json" "$work/results" "$commit" <<'PY'
import csv, json, os, sys

registry = json.load(open(sys.argv[1]))
out, commit = sys.argv[2], sys.argv[3]
rows = list(csv.DictReader(open(os.path.join(out, "results.csv"))))
arms = len(registry["arms"])
if len(rows) != arms:
    sys.exit(f"results.csv has {len(rows)} rows, the registry {arms} arms")
for name in ("sizes.csv", "host.txt", "summary.txt"):
    if not os.path.isfile(os.path.join(out, name)):
        sys.exit(f"results has no {name}")
environments = sorted({row["environment"] for row in rows})
if not all(environment.startswith("nix-build ") for environment in environments):
    sys.exit(f"rows measured in a Nix build say environment {environments}")
commits = sorted({row["commit"] for row in rows})
if commits != [commit]:
    sys.exit(f"rows say commit {commits}, the flake's commit is {commit}")
host = open(os.path.join(out, "host.txt")).read()
if "measured: inside a Nix build" not in host:
    sys.exit(f"host.txt does not say it was measured inside a Nix build:\n{host}")
statuses = sorted({row["status"] for row in rows})
print(f"{len(rows)} rows = {arms} arms; statuses {statuses}; environment {environments}; commit {commits}")
print(host.strip())
PY

step "build every check and package of x86_64-linux (packages.results, the full matrix, excepted)"
# On the real filtered sources (source.nix for the binaries and sizes, the whole tree for the
# tests), through the stub builders: checks.test runs cargo test inside the build, clippy,
# fmt and formatting run their tools, sizes and results-smoke run the binary. packages.results
# is the whole matrix measured (20 minutes and more); results-smoke runs every arm once instead.
mkdir -p "$work/built"
outputs=$(nixq eval --json "${evaluate[@]}" .#checks.x86_64-linux --apply builtins.attrNames | python3 -c 'import json, sys
print(" ".join(f"checks.{name}" for name in json.load(sys.stdin)))')
outputs+=" $(nixq eval --json "${evaluate[@]}" .#packages.x86_64-linux --apply builtins.attrNames | python3 -c 'import json, sys
print(" ".join(f"packages.{name}" for name in json.load(sys.stdin) if name != "results"))')"
for output in $outputs; do
  started=$SECONDS
  log="$work/built/$output.log"
  nixq build -L "${build[@]}" --out-link "$work/built/$output" ".#${output%%.*}.x86_64-linux.${output#*.}" \
    >"$log" 2>&1 || fail "build $output.x86_64-linux: $(tail -n 40 "$log")"
  echo "$output: built in $((SECONDS - started)) s"
done
echo "not built: packages.results (the full matrix; evaluated above, and its features are checked)"
python3 - "$work/built/checks.test.log" <<'PY' || fail "checks.test ran no test"
import re, sys

# Nix keeps a pseudo-terminal's leftovers of libtest's colours: "test result: ok(B. 3 passed; ..."
text = open(sys.argv[1]).read()
results = re.findall(r"test result: (\w+)[^.\n]*\. (\d+) passed; (\d+) failed; (\d+) ignored", text)
passed, failed, ignored = (sum(int(result[i]) for result in results) for i in (1, 2, 3))
if not results or passed == 0 or failed:
    sys.exit(f"checks.test: {len(results)} test binaries, {passed} passed, {failed} failed")
print(f"checks.test: cargo test inside the build: {len(results)} test binaries and doc tests,"
      f" {passed} tests passed, {ignored} ignored")
PY
real+=("the flake's checks.test, clippy, fmt, formatting, serbench, sizes, results-smoke and every package but results, built on the real filtered sources (cargo test, cargo clippy, cargo fmt and treefmt ran inside the builds)")

step "the built sizes.csv is the committed one (scripts/sizes-match.sh, as the workflow runs it)"
bash scripts/sizes-match.sh "$work/built/packages.sizes/sizes.csv" results/x86_64-linux/sizes.csv ||
  fail "nix build .#sizes differs from results/x86_64-linux/sizes.csv"

step "nix run .#bench-postcard -- --payload order: a direct run"
nixq run "${build[@]}" .#bench-postcard -- --payload order --out "$work/bench-postcard" \
  >"$work/bench-postcard.log" 2>&1 || fail "bench-postcard: $(tail -n 5 "$work/bench-postcard.log")"
grep ' arms (' "$work/bench-postcard.log"
environment_of() { python3 -c 'import csv, sys; print(" ".join(sorted({r["environment"] for r in csv.DictReader(open(sys.argv[1]))})))' "$1"; }
[[ $(environment_of "$work/bench-postcard/results.csv") == direct ]] ||
  fail "nix run wrote environment $(environment_of "$work/bench-postcard/results.csv"), want direct"

build_of() { python3 -c 'import csv, sys; print(" ".join(sorted({r["build"] for r in csv.DictReader(open(sys.argv[1]))})))' "$1"; }
[[ $(build_of "$work/bench-postcard/results.csv") == portable ]] ||
  fail "nix run .#bench-postcard wrote build $(build_of "$work/bench-postcard/results.csv"), want portable"
echo "its rows: environment direct, build portable"

step "nix run .#bench-postcard -- run --typed: the app builds the data's types with the flake's toolchain"
# The binary sits in the store, not in a target folder, so the typed crate builds in the cache's
# own target folder (private, made by serbench: a link there is refused), with cargo's build-dir
# the stub build's target, so the dependencies cargo test compiled serve.
printf '{"id": 1, "name": "a"}\n{"id": 2, "name": "b"}\n' >"$work/typed.ndjson"
CARGO_BUILD_BUILD_DIR="${SERBENCH_NIX_TARGET_DIR:-$repo/target}" SERBENCH_CACHE="$work/typed-cache" \
  nixq run "${build[@]}" .#bench-postcard -- \
  --profile smoke --typed --data "$work/typed.ndjson" --out "$work/bench-typed" \
  >"$work/bench-typed.log" 2>&1 || fail "bench-postcard --typed: $(tail -n 5 "$work/bench-typed.log")"
grep -q 'building the typed crate' "$work/bench-typed.log" || fail "no typed build in $work/bench-typed.log"
python3 - "$work/bench-typed/results.csv" <<'PY' || fail "the typed run's rows"
import csv, sys
rows = [row for row in csv.DictReader(open(sys.argv[1])) if row["mode"] == "typed"]
if not rows or any(row["status"] != "ok" or row["payload"] != "data:typed" for row in rows):
    sys.exit(f"typed rows: {rows}")
print(f"{len(rows)} typed postcard rows of data:typed, all ok, built against the store's source")
PY
real+=("--typed from nix run: the wrapper's SERBENCH_SOURCE (the store's filtered source), CARGO and PATH built and ran a generated crate")

step "nix run .#bench-native: compiled with -C target-cpu=native, its rows say so, in their own default folder"
native_flags=$(nixq eval --raw "${evaluate[@]}" .#packages.x86_64-linux.serbench-native.unwrapped.RUSTFLAGS) ||
  fail "packages.serbench-native has no RUSTFLAGS"
[[ $native_flags == "-C target-cpu=native" ]] || fail "serbench-native is built with RUSTFLAGS $native_flags"
mkdir -p "$work/native-cwd"
(cd "$work/native-cwd" && nixq run "${build[@]}" "$repo#bench-native" -- --profile smoke --payload order --format postcard) \
  >"$work/bench-native.log" 2>&1 || fail "bench-native: $(tail -n 5 "$work/bench-native.log")"
native_csv="$work/native-cwd/results/local/x86_64-linux-native/results.csv"
[[ -f $native_csv ]] || fail "bench-native wrote no $native_csv: $(tail -n 3 "$work/bench-native.log")"
[[ $(build_of "$native_csv") == native ]] || fail "nix run .#bench-native wrote build $(build_of "$native_csv"), want native"
echo "RUSTFLAGS $native_flags; rows build native in results/local/x86_64-linux-native/"

step "nix run .#bench -- --format nope exits 2"
status=0
nixq run "${build[@]}" .#bench -- --format nope --out "$work/nope" >"$work/nope.log" 2>&1 || status=$?
head -n 2 "$work/nope.log"
[[ $status == 2 ]] || fail "bench --format nope exited $status, want 2"

step "nix develop: rust-toolchain.toml's rustc, valgrind and setarch; a run there is direct"
nixq develop "${build[@]}" -c true || fail "nix develop"
shell_rustc=$(nixq develop "${build[@]}" -c rustc --version 2>/dev/null)
echo "dev shell rustc: $shell_rustc"
channel=$(python3 -c 'import tomllib; print(tomllib.load(open("rust-toolchain.toml", "rb"))["toolchain"]["channel"])')
[[ $shell_rustc == "rustc $channel"* ]] || fail "dev shell rustc is not rust-toolchain.toml's $channel"
nixq develop "${build[@]}" -c "$work/serbench/bin/serbench" run --profile smoke --payload order --format postcard \
  --out "$work/develop-run" >/dev/null 2>&1 || fail "serbench in nix develop"
[[ $(environment_of "$work/develop-run/results.csv") == direct ]] ||
  fail "a run in nix develop says environment $(environment_of "$work/develop-run/results.csv"), want direct"
echo "a run in nix develop: environment direct"

step "nix fmt and nix develop have treefmt and every formatter treefmt.toml names"
commands=$(python3 -c 'import tomllib
print(" ".join(sorted({f["command"] for f in tomllib.load(open("treefmt.toml", "rb"))["formatter"].values()})))')
nixq build "${build[@]}" --out-link "$work/formatter" .#formatter.x86_64-linux || fail "build formatter"
formatter_path=$(sed -n 's/^export PATH=\(.*\):\$PATH$/\1/p' "$work/formatter/bin/serbench-fmt")
# The tools must come from the flake (the store), not from whatever the host has.
in_store() { [[ $(PATH=$1 command -v "$2") == /nix/store/* ]]; }
for command in treefmt $commands; do
  in_store "$formatter_path" "$command" || fail "nix fmt: no $command from the flake on its PATH"
done
shell_path=$(nixq develop "${build[@]}" -c bash -c 'echo "$PATH"' 2>/dev/null)
for command in treefmt cargo-nextest valgrind setarch $commands; do
  in_store "$shell_path" "$command" || fail "nix develop: no $command from the flake on its PATH"
done
echo "treefmt cargo-nextest valgrind setarch $commands"

step "nix fmt leaves a clean checkout unchanged; checks.formatting fails on a misformatted one"
if [[ " $absent_tools " == *" treefmt "* || " $absent_tools " == *" taplo "* || " $absent_tools " == *" prettier "* ]]; then
  skipped+=("nix fmt and checks.formatting: the host lacks one of treefmt, taplo, prettier (.ci/run installs them)")
  echo "skipped: the host lacks one of treefmt, taplo, prettier"
else
  git clone -q "$repo" "$work/fmt"
  (cd "$work/fmt" && nixq fmt "${build[@]}") >"$work/fmt.log" 2>&1 || fail "nix fmt: $(tail -n 5 "$work/fmt.log")"
  changed=$(git -C "$work/fmt" status --porcelain)
  [[ -z $changed ]] || fail "nix fmt changed a clean checkout: $changed ($(git -C "$work/fmt" diff --stat | tail -n 1))"
  echo "nix fmt: a clean checkout of HEAD stays unchanged"
  nixq build "${build[@]}" --no-link "$work/fmt#checks.x86_64-linux.formatting" || fail "checks.formatting on a clean checkout"
  sed -i 's/^default = \[\(.*\)\]$/default = [ \1 ]/' "$work/fmt/Cargo.toml"
  if nixq build -L "${build[@]}" --no-link "$work/fmt#checks.x86_64-linux.formatting" >"$work/misformatted.log" 2>&1; then
    fail "checks.formatting passed a misformatted Cargo.toml"
  fi
  grep -q 'file has changed path=Cargo.toml' "$work/misformatted.log" ||
    fail "checks.formatting failed on a misformatted Cargo.toml, but not for its format: $(tail -n 5 "$work/misformatted.log")"
  echo "checks.formatting: passes on HEAD, fails on a misformatted Cargo.toml (treefmt: file has changed path=Cargo.toml)"
  # checks.fmt (cargo fmt --check) passed above on HEAD; a misformatted Rust line fails it.
  echo 'pub fn  misformatted( ) {}' >>"$work/fmt/src/lib.rs"
  if nixq build -L "${build[@]}" --no-link "$work/fmt#checks.x86_64-linux.fmt" >"$work/misformatted-rs.log" 2>&1; then
    fail "checks.fmt passed a misformatted src/lib.rs"
  fi
  grep -q 'Diff in .*src/lib.rs' "$work/misformatted-rs.log" ||
    fail "checks.fmt failed on a misformatted src/lib.rs, but not for its format: $(tail -n 5 "$work/misformatted-rs.log")"
  echo "checks.fmt: passes on HEAD, fails on a misformatted src/lib.rs (rustfmt: Diff in src/lib.rs)"
  real+=("the host's formatters (treefmt, taplo, prettier) in nix fmt and checks.formatting")
fi
if [[ -n $absent_tools ]]; then
  stubbed+=("tools the host lacks, stand-ins that check nothing: $absent_tools")
fi

[[ $(sha256sum flake.lock) == "$lock_before" ]] || fail "the stub overrides rewrote flake.lock"

echo "== what ran on real code"
for line in "${real[@]}"; do echo "  real: $line"; done
echo "== what ran on stubs"
for line in "${stubbed[@]}" \
  "builders (runCommand, mkDerivation, buildRustPackage over the host's cargo, mkShell, fetchurl, symlinkJoin) on /bin/bash: nix/tests/stub-nixpkgs/pkgs.nix" \
  "builds (every check, every package but results, nix run, nix develop, nix fmt): the stub rust-overlay, the host's rustup toolchain, a dev build without --target" \
  "nixpkgs' packages the flake only names (cargo-nextest, flatbuffers, the toolchain's parts): placeholders"; do
  echo "  stub: $line"
done
if [[ ${#skipped[@]} -gt 0 ]]; then
  echo "== skipped"
  for line in "${skipped[@]}"; do echo "  skipped: $line"; done
fi
echo "offline.sh: ok"
