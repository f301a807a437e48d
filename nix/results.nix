# The whole matrix measured inside a build: every arm, results.csv, sizes.csv, ratios.csv and
# whatever else `serbench run` writes into its folder, plus host.txt and the printed summary.
#
# A build is cached: building it again returns the first measurement. `nix run .#bench` is the
# way to measure; docs/nix.md says how to re-measure through this derivation and how its numbers
# differ. serbench itself sees that it runs inside a build (every results.csv row says
# `nix-build ...` in its environment column); host.txt adds what the build can see of the
# daemon's context.
{
  lib,
  stdenv,
  runCommand,
  serbench,
  profile ? "full",
  # More `serbench run` arguments, e.g. "--format postcard --payload order": a part of the matrix,
  # measured like the whole (`.override`; the remote-builder test builds such a cheap one).
  arguments ? "",
}:
let
  selection = if arguments == "" then "every arm" else "the arms of ${arguments}";
in
runCommand "serbench-results-${profile}"
  {
    nativeBuildInputs = [ serbench ];
    # Timing wants a machine that is there to measure: a remote builder takes this only if it
    # advertises `benchmark` (a local Nix does by default). The smoke profile only proves that
    # every arm runs, so any builder will do.
    requiredSystemFeatures = lib.optionals (profile != "smoke") [ "benchmark" ];
    # No binary cache may stand in for a measurement of this host.
    allowSubstitutes = false;
    passthru = { inherit profile arguments; };
    meta.description = "serbench run --profile ${profile}: ${selection}, measured on the builder";
  }
  ''
    set -o pipefail
    ${lib.optionalString stdenv.hostPlatform.isDarwin ''
      # The CPU model (sysctl), macOS version (sw_vers) and the process list (ps) come from the
      # host's own tools.
      export PATH="$PATH:/usr/sbin:/usr/bin:/bin"
    ''}
    mkdir -p "$out"
    serbench run --profile ${profile} ${arguments} --out "$out" | tee "$out/summary.txt"

    # The processes above this build, as far as it can see them (the Linux sandbox's own process
    # namespace ends at the builder; macOS shows nix-daemon, which launchd runs with the default
    # process type, throttled for CPU and I/O unlike an interactive shell).
    ancestors() {
      local pid=$$ name parent chain=""
      while [ "$pid" -gt 1 ] 2>/dev/null; do
        if [ -r "/proc/$pid/stat" ]; then
          name=$(cat "/proc/$pid/comm")
          parent=$(sed 's/.*) [A-Za-z] \([0-9]*\) .*/\1/' "/proc/$pid/stat")
        elif command -v ps >/dev/null; then
          name=$(ps -o comm= -p "$pid" 2>/dev/null) || break
          parent=$(ps -o ppid= -p "$pid" 2>/dev/null | tr -d ' ') || break
        else
          break
        fi
        chain="$chain''${chain:+ < }$name"
        pid=$parent
      done
      echo "''${chain:-not visible}"
    }
    {
      echo "uname: $(uname -a)"
      echo "nix system: ${stdenv.hostPlatform.system}"
      echo "profile: ${profile}"
      echo "arguments: serbench run --profile ${profile} ${arguments}"
      echo "measured: inside a Nix build (nix build .#results), not by a user's run" \
        "(nix run .#bench); results.csv's environment column says so on every row"
      echo "build dir: $NIX_BUILD_TOP"
      echo "build cores (nix.conf cores, 0 = all): ''${NIX_BUILD_CORES:-not set}"
      echo "build user: uid $(id -u)"
      if [ -e /etc/os-release ]; then
        echo "/etc/os-release: visible"
      else
        echo "/etc/os-release: not visible" \
          "(the sandbox hides it: the os column has the kernel only)"
      fi
      echo "processes: $(ancestors)"
      echo "not visible from inside a build: max-jobs, the daemon's other builds and its scheduling"
    } > "$out/host.txt"
  ''
