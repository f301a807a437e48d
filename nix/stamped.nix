# serbench with the commit stamped at run time: a wrapper sets SERBENCH_COMMIT, which the binary
# prefers to the `unknown` compiled into a Nix build (src/report/host.rs). The binary itself is
# built from the sources alone (source.nix), so a commit that changes none of them rebuilds only
# this wrapper.
{
  lib,
  runCommand,
  runtimeShell,
  unwrapped,
  commit,
}:
runCommand "${unwrapped.pname}-${unwrapped.version}"
  {
    passthru = { inherit unwrapped commit; };
    inherit (unwrapped) meta;
  }
  ''
    mkdir -p "$out/bin"
    cat > "$out/bin/serbench" <<'WRAPPER'
    #!${runtimeShell}
    export SERBENCH_COMMIT=${commit}
    exec ${lib.getExe unwrapped} "$@"
    WRAPPER
    chmod +x "$out/bin/serbench"
  ''
