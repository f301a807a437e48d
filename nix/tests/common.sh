# Sourced by nix/tests/offline.sh and nix/tests/remote-builder.sh (bash, from the repository's
# root): Debian's Nix as root with no daemon and no network, a sandbox that sees the host paths
# the stub builders run, and the stub inputs in a temporary folder.

name=${0##*/}
step() { echo "-- $*"; }
fail() {
  echo "$name: FAIL: $*" >&2
  exit 1
}
# nix without the noise every stub command repeats: the dirty-tree warning (uncommitted
# flake), the "not writing modified lock file" block (the overrides, by design), Nix 2.8's
# "evaluating ..." progress lines and the missing nixbld group (build-users-group is empty).
nixq() {
  nix "$@" 2> >(awk '
    /^warning: Git tree .* is dirty$/ || /^evaluating / || /group .nixbld. specified/ { next }
    /^warning: not writing modified lock file/ { lockblock = 1; next }
    lockblock && /^(• |    |  → )/ { next }
    { lockblock = 0; print }' >&2)
}

if ! command -v nix >/dev/null; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends nix-bin >/dev/null
fi

# The host's own tools where it has them (the formatters, valgrind, setarch, cc, capnp): the real
# programs run inside `nix fmt`, checks.formatting and the dev shell.
host_tool() {
  local path
  path=$(command -v "$1") || return 0
  # A pyenv shim needs pyenv's environment; the program it stands for does not.
  if [[ $path == */shims/* ]] && command -v pyenv >/dev/null; then path=$(pyenv which "$1"); fi
  readlink -f "$path"
}
cargo_home=${CARGO_HOME:-$HOME/.cargo}
rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
target_dir=${SERBENCH_NIX_TARGET_DIR:-$PWD/target}
tools_json=$(for tool in treefmt taplo prettier nixfmt valgrind setarch cc capnp; do
  printf '%s\t%s\n' "$tool" "$(host_tool "$tool")"
done | python3 -c 'import json, sys
print(json.dumps({name: path for name, path in (line.rstrip("\n").split("\t") for line in sys.stdin) if path}))')

# What a sandboxed stub build needs of the host: the shell, compilers and libraries (/bin, /usr,
# /lib, /lib64, and /etc/alternatives, where Debian's cc points), the rustup toolchain and the
# cargo registry, the shared target dir, and each host tool that lives elsewhere (pip's).
sandbox_paths=()
for path in /bin /usr /lib /lib64 /etc/alternatives "$rustup_home" "$cargo_home" "$target_dir"; do
  if [[ -e $path ]]; then sandbox_paths+=("$path"); fi
done
while IFS= read -r path; do
  case $path in /usr/* | /bin/* | /lib/* | /lib64/*) ;; *) sandbox_paths+=("$path") ;; esac
done < <(python3 -c 'import json, sys; print("\n".join(json.loads(sys.argv[1]).values()))' "$tools_json")

# Nix's settings for this machine: no substituters (no network), no build users (root, no
# daemon), and the sandbox on where it works. $1: the sandbox setting; the rest: more lines.
nix_config() {
  local sandbox=$1
  shift
  printf '%s\n' "experimental-features = nix-command flakes" "substituters =" \
    "build-users-group =" "sandbox = $sandbox" "extra-sandbox-paths = ${sandbox_paths[*]}" "$@"
}
mkdir -p "$target_dir"
# Can this Nix sandbox its builds here (root, a user namespace, the host paths bind-mounted)?
# A derivation that differs on every call, so it really builds.
sandbox_probe() {
  local probe
  probe=$(mktemp -d /tmp/serbench-sandbox.XXXXXX)
  cat >"$probe/probe.nix" <<'NIX'
derivation {
  name = "serbench-sandbox-probe";
  system = builtins.currentSystem;
  builder = "/bin/sh";
  nonce = toString builtins.currentTime;
  args = [ "-c" "test -d /build && test ! -e /etc/os-release && echo sandboxed > $out" ];
}
NIX
  NIX_CONFIG=$(nix_config true) nix-build --no-out-link "$probe/probe.nix" >"$probe/log" 2>&1
  local status=$?
  [[ $status == 0 ]] || sed 's/^/  /' "$probe/log" >&2
  rm -rf "$probe"
  return $status
}
if [[ ${SERBENCH_NIX_SANDBOX:-true} == true ]] && sandbox_probe; then
  sandbox=true
else
  echo "$name: the Nix sandbox does not work here (output above; or SERBENCH_NIX_SANDBOX=false):" \
    "builds run unsandboxed" >&2
  sandbox=false
fi
NIX_CONFIG=$(nix_config "$sandbox")
export NIX_CONFIG

# The stub inputs in a temporary copy ($1), with the host's paths in host.json, so nothing is
# written into the repository. The real nixpkgs lib from ../shared (a developer's machine and CI
# have it; a user's clone does not) is read where it is, never copied into the project.
shared=$(cd .. && pwd)/shared
real_lib=$shared/nixpkgs-lib/lib
real_overlay=$shared/rust-overlay
[[ -f $real_lib/default.nix ]] || real_lib=""
[[ -f $real_overlay/flake.nix ]] || real_overlay=""
stub_inputs() {
  local work=$1
  cp -r nix/tests/stub-nixpkgs nix/tests/stub-rust-overlay "$work/"
  if [[ -n $real_lib ]]; then
    # lib.nix takes the real lib when it finds it here (a pure evaluation reads only its flake).
    cp -r "$real_lib" "$work/stub-nixpkgs/nixpkgs-lib"
    chmod -R u+w "$work/stub-nixpkgs/nixpkgs-lib"
  fi
  python3 - "$work/stub-nixpkgs/host.json" "$tools_json" "$cargo_home" "$rustup_home" "$target_dir" <<'PY'
import json, sys
path, tools, cargo_home, rustup_home, target_dir = sys.argv[1:]
json.dump({"cargoHome": cargo_home, "rustupHome": rustup_home, "targetDir": target_dir,
           "tools": json.loads(tools)}, open(path, "w"))
PY
}
