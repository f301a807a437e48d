# The whole matrix measured inside a build: every arm, results.csv, sizes.csv, ratios.csv and
# whatever else `serbench run` writes into its folder, plus host.txt and the printed summary.
#
# A build is cached: building it again returns the first measurement. `nix run .#bench` is the
# way to measure; README (Nix) says how to re-measure through this derivation.
{
  lib,
  stdenv,
  runCommand,
  serbench,
  profile ? "full",
}:
runCommand "serbench-results-${profile}"
  {
    nativeBuildInputs = [ serbench ];
    # Timing wants a machine that is there to measure: a remote builder takes this only if it
    # advertises `benchmark` (a local Nix does by default). The smoke profile only proves that
    # every arm runs, so any builder will do.
    requiredSystemFeatures = lib.optionals (profile != "smoke") [ "benchmark" ];
    # No binary cache may stand in for a measurement of this host.
    allowSubstitutes = false;
    passthru = { inherit profile; };
    meta.description = "serbench run --profile ${profile}: every arm, measured on the build host";
  }
  ''
    set -o pipefail
    ${lib.optionalString stdenv.hostPlatform.isDarwin ''
      # The CPU model (sysctl) and macOS version (sw_vers) come from the host's own tools.
      export PATH="$PATH:/usr/sbin:/usr/bin"
    ''}
    mkdir -p "$out"
    serbench run --profile ${profile} --out "$out" | tee "$out/summary.txt"
    {
      echo "uname: $(uname -a)"
      echo "nix system: ${stdenv.hostPlatform.system}"
      echo "profile: ${profile}"
    } > "$out/host.txt"
  ''
