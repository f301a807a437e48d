#!/usr/bin/env bash
# Nix's distributed builds, offline: a real remote builder on this machine takes the flake's
# `results` because only it has the `benchmark` feature (run by .ci/run after offline.sh, as root).
#
#   bash nix/tests/remote-builder.sh
#
# The builder: Debian's openssh-server on 127.0.0.1 (a free port, a host key and a client key
# made in a temporary folder; sshd started here and stopped on exit) in front of a SECOND Nix
# store, a chroot store under the same folder (`remote-store=local?root=...`), whose nix-store is
# a wrapper (`remote-program`) that gives the builder its own settings: system-features
# `benchmark`, max-jobs 1, the sandbox. It is declared in `builders` with the feature
# `benchmark`; the local Nix's system-features lack it. The build: a flake in the temporary
# folder whose packages.x86_64-linux.results is this flake's results with
# `.override { profile = "quick"; arguments = "--format postcard --payload order"; }` (four arms
# measured in seconds, still requiring `benchmark`), built through `nix run .#matrix`, which then
# writes the multi-host report. Proven from evidence: the local Nix alone refuses the build;
# with the builder it is built there (Nix's own "building ... on" line, the builder's nix-store
# invocation), the output is registered in the builder's store and lies in its real folder, the
# build log came back, and the results name a build inside Nix's sandbox.
#
# Inputs as offline.sh has them (stub nixpkgs on the real lib, the stub rust-overlay, the host's
# toolchain; SERBENCH_NIX_TARGET_DIR likewise). It needs Nix's sandbox: a chroot store builds
# only in one.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
source nix/tests/common.sh
[[ $sandbox == true ]] ||
  fail "the builder's chroot store can build only in Nix's sandbox, which this Nix cannot make here"
system=$(nix-instantiate --eval --raw -E builtins.currentSystem 2>/dev/null ||
  nix-instantiate --eval -E builtins.currentSystem | tr -d '"')
[[ $system == x86_64-linux ]] || fail "this test builds packages.x86_64-linux.results; this is $system"

if [[ ! -x /usr/sbin/sshd ]]; then
  # Installed, not started: a policy-rc.d that forbids starting services, unless one is there.
  policy=""
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod +x "$policy"
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssh-server >/dev/null
  [[ -z $policy ]] || rm -f "$policy"
fi

work=$(mktemp -d /tmp/serbench-remote.XXXXXX)
sshd_pid=""
cleanup() {
  [[ -z $sshd_pid ]] || kill "$sshd_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
stub_inputs "$work"
stub_args=(--override-input nixpkgs "path:$work/stub-nixpkgs"
  --override-input rust-overlay "path:$work/stub-rust-overlay" --no-write-lock-file)

step "an SSH server on 127.0.0.1 in front of a second Nix store"
ssh-keygen -q -t ed25519 -N '' -C serbench-builder-host -f "$work/host_key"
ssh-keygen -q -t ed25519 -N '' -C serbench-builder-client -f "$work/client_key"
cp "$work/client_key.pub" "$work/authorized_keys"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$work/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $port
HostKey $work/host_key
PidFile $work/sshd.pid
AuthorizedKeysFile $work/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
EOF
mkdir -p /run/sshd # sshd's privilege separation folder
/usr/sbin/sshd -t -f "$work/sshd_config" || fail "sshd rejects its configuration"
/usr/sbin/sshd -D -e -f "$work/sshd_config" 2>"$work/sshd.log" &
sshd_pid=$!
echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$work/host_key.pub")" >"$work/known_hosts"
# Every ssh Nix starts (the build hook, the copies) takes these options.
export NIX_SSHOPTS="-p $port -i $work/client_key -o IdentitiesOnly=yes -o UserKnownHostsFile=$work/known_hosts -o StrictHostKeyChecking=yes -o BatchMode=yes"
# shellcheck disable=SC2086 # NIX_SSHOPTS is a list of options, as Nix splits it.
for _ in $(seq 50); do
  if ssh $NIX_SSHOPTS root@127.0.0.1 true 2>/dev/null; then break; fi
  kill -0 "$sshd_pid" 2>/dev/null || fail "sshd exited: $(cat "$work/sshd.log")"
  sleep 0.2
done
# shellcheck disable=SC2086
ssh $NIX_SSHOPTS root@127.0.0.1 true || fail "no SSH login to 127.0.0.1:$port: $(tail -n 5 "$work/sshd.log")"

# The builder's side: `nix-store --serve --write --store local?root=...` through this wrapper,
# which gives it its own settings (sshd passes no environment to it). It logs each invocation.
remote_root=$work/builder-store
mkdir -p "$remote_root"
builder_features="benchmark big-parallel"
cat >"$work/builder-nix-store" <<EOF
#!/bin/sh
export NIX_CONFIG='$(nix_config "$sandbox" "system-features = $builder_features" "max-jobs = 1")'
echo "nix-store \$*" >>'$work/builder-invocations.log'
exec nix-store "\$@"
EOF
chmod +x "$work/builder-nix-store"
builder_uri="ssh://root@127.0.0.1?remote-program=$work/builder-nix-store&remote-store=local%3Froot%3D$remote_root"
echo "sshd pid $sshd_pid on 127.0.0.1:$port; builder store: local?root=$remote_root (features: $builder_features)"

step "a flake whose results is this flake's, cut to four arms (still requiring benchmark)"
mkdir -p "$work/flake"
cat >"$work/flake/flake.nix" <<EOF
{
  # The stub inputs by \`follows\`: Nix 2.8 re-locks (fetches) nested url overrides on every use.
  inputs = {
    nixpkgs.url = "path:$work/stub-nixpkgs";
    rust-overlay.url = "path:$work/stub-rust-overlay";
    rust-overlay.inputs.nixpkgs.follows = "nixpkgs";
    serbench.url = "git+file://$repo";
    serbench.inputs.nixpkgs.follows = "nixpkgs";
    serbench.inputs.rust-overlay.follows = "rust-overlay";
  };
  outputs =
    { serbench, ... }:
    {
      packages.x86_64-linux = {
        serbench = serbench.packages.x86_64-linux.default;
        results = serbench.packages.x86_64-linux.results.override {
          profile = "quick";
          arguments = "--format postcard --payload order";
        };
      };
    };
}
EOF
(cd "$work/flake" && nixq flake lock) || fail "cannot lock the test flake"
results_drv=$(nixq eval --raw "$work/flake#packages.x86_64-linux.results.drvPath")
results_out=$(nixq eval --raw "$work/flake#packages.x86_64-linux.results.outPath")
features=$(nix show-derivation "$results_drv" 2>/dev/null | python3 -c 'import json, sys
drv = next(iter(json.load(sys.stdin).values()))
print(drv["env"].get("requiredSystemFeatures", ""))')
[[ $features == benchmark ]] || fail "$results_drv requires features '$features', want benchmark"
echo "$results_drv requires system features: $features"
# A run before this one left the output in the local store: remove it, or this run proves nothing.
if [[ -e $results_out ]]; then
  nix store delete "$results_out" >/dev/null 2>&1 || fail "cannot delete the earlier $results_out from the local store"
fi
[[ ! -e $results_out ]] || fail "$results_out is still in the local store"

# Everything else the build and the app need is built here first, so only results is left.
local_features="big-parallel nixos-test"
local_only=$(nix_config "$sandbox" "system-features = $local_features" "builders =")
NIX_CONFIG=$local_only nixq build --no-link "$work/flake#packages.x86_64-linux.serbench" ||
  fail "build the test flake's serbench"
status=0
NIX_CONFIG=$local_only nixq run "${stub_args[@]}" "$repo#matrix" -- --help >/dev/null 2>&1 || status=$?
[[ $status == 2 ]] || fail "nix run .#matrix -- --help exited $status, want 2 (its usage)"

step "the local Nix alone (system-features: $local_features) refuses the build"
if NIX_CONFIG=$local_only nixq build --no-link "$work/flake#packages.x86_64-linux.results" \
  >"$work/local-only.log" 2>&1; then
  fail "the local Nix built results without the benchmark feature"
fi
refusal=$(grep -o "error: a '[^']*' with features {benchmark} is required to build.*" "$work/local-only.log") ||
  fail "the local Nix failed, but not for the feature: $(tail -n 5 "$work/local-only.log")"
echo "$refusal"

step "nix run .#matrix -- --flake TEST-FLAKE x86_64-linux, with the builder declared (benchmark)"
builders="$builder_uri x86_64-linux - 1 1 benchmark"
with_builder=$(nix_config "$sandbox" "system-features = $local_features" "builders = $builders")
started=$SECONDS
NIX_CONFIG=$with_builder nixq run "${stub_args[@]}" "$repo#matrix" -- \
  --flake "$work/flake" --out "$work/matrix" x86_64-linux >"$work/matrix.log" 2>&1 ||
  fail "nix run .#matrix: $(tail -n 20 "$work/matrix.log")"
echo "built and reported in $((SECONDS - started)) s"
on_builder=$(grep -o "building '$results_drv' on 'ssh://[^']*'" "$work/matrix.log") ||
  fail "Nix did not say it built $results_drv on the builder: $(tail -n 20 "$work/matrix.log")"
echo "$on_builder"
grep -q -- "--serve --write --store local?root=$remote_root" "$work/builder-invocations.log" ||
  fail "the builder's nix-store was not run: $(cat "$work/builder-invocations.log" 2>/dev/null)"

step "evidence: the builder's store has the output; the log and the results came back"
remote_path=$remote_root${results_out}
[[ -f $remote_path/results.csv ]] || fail "$remote_path/results.csv: not in the builder's store"
registered=$(nix path-info --store "local?root=$remote_root" "$results_out" 2>/dev/null) ||
  fail "$results_out is not registered in the builder's store"
[[ $registered == "$results_out" ]] || fail "the builder's store says $registered"
[[ $(readlink "$work/matrix/hosts/x86_64-linux") == "$results_out" ]] ||
  fail "matrix linked $(readlink "$work/matrix/hosts/x86_64-linux"), not $results_out"
cmp -s "$remote_path/results.csv" "$results_out/results.csv" ||
  fail "the local copy of results.csv differs from the builder's"
log=$(nix log "$results_out" 2>/dev/null) || fail "no build log of $results_out"
grep -q '4 arms (0 failed)' <<<"$log" || fail "the build log does not show the four arms: $log"
[[ -f $work/matrix/report.md ]] || fail "matrix wrote no report.md"
python3 - "$results_out" "$work/matrix/report.md" <<'PY' || fail "the results built on the builder"
import csv, sys

out, report = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(f"{out}/results.csv")))
if len(rows) != 4 or any(row["status"] != "ok" for row in rows):
    sys.exit(f"{len(rows)} rows: {[row['status'] for row in rows]}")
environments = sorted({row["environment"] for row in rows})
if not all(environment.startswith("nix-build sandbox") for environment in environments):
    sys.exit(f"environment {environments}, want a build inside Nix's sandbox")
host = open(f"{out}/host.txt").read()
for line in ("profile: quick", "arguments: serbench run --profile quick --format postcard --payload order"):
    if line not in host:
        sys.exit(f"host.txt lacks {line!r}:\n{host}")
print(f"results.csv: {len(rows)} rows, all ok, environment {environments}, commit {sorted({row['commit'] for row in rows})}")
print(f"report: {report} ({sum(1 for _ in open(report))} lines)")
PY

echo "== remote builder log"
echo "  local Nix: store /nix/store, system-features: $local_features (no benchmark), sandbox $sandbox"
echo "  builder:   ssh://root@127.0.0.1:$port (sshd pid $sshd_pid) -> store local?root=$remote_root," \
  "system-features: $builder_features, max-jobs 1, sandbox $sandbox"
echo "  derivation $results_drv: requiredSystemFeatures = $features"
echo "  local alone: $refusal"
echo "  with builders = '... x86_64-linux - 1 1 benchmark': Nix said: $on_builder"
echo "  builder ran: $(sort -u "$work/builder-invocations.log" | paste -sd ';')"
echo "  output $results_out: in the builder's real folder $remote_path, registered in its store," \
  "copied back with its log; report $work/matrix/report.md"
echo "remote-builder.sh: ok"
