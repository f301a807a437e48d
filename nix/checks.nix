# `nix flake check`: the same checks as .ci/run (fmt, clippy, cargo test, treefmt), the package,
# the pure sizes report, and every arm run once (smoke profile) through the real build.
#
# A plain attribute set of derivations (nix/default.nix imports it without callPackage).
{
  lib,
  runCommand,
  flatbuffers,
  treefmt,
  formatters,
  rustPlatform,
  toolchain,
  source,
  serbench,
  sizes,
  results-smoke,
  flatcVersion,
}:
let
  # A cargo command over the vendored Cargo.lock; success is the output.
  cargoCheck =
    name: command: extra:
    rustPlatform.buildRustPackage (
      source
      // {
        pname = "serbench-${name}";
        dontCargoBuild = true;
        buildPhase = ''
          runHook preBuild
          ${command}
          runHook postBuild
        '';
        doCheck = false;
        dontCargoInstall = true;
        installPhase = ''
          runHook preInstall
          touch "$out"
          runHook postInstall
        '';
      }
      // extra
    );
  flatcMatches = flatbuffers.version == flatcVersion;
  # The whole tree as the flake sees it (git-tracked files), for the formatters and the tests.
  tree = builtins.path {
    name = "serbench-tree";
    path = ../.;
  };
  formattingInputs = [ treefmt ] ++ formatters;
in
{
  inherit serbench sizes results-smoke;
  # The tests read more than cargo builds from: README.md and docs/ (the generated tables),
  # results/ (the committed run), nix/ (the flake's source filter), proptest-regressions/. So
  # they run on the whole tree: a README-only commit runs them again, but rebuilds no binary
  # and no size report (those build from source.nix's files only).
  test = cargoCheck "test" "cargo test --frozen" (
    { src = tree; }
    # With the matching flatc, the FlatBuffers test that regenerates the committed code runs
    # instead of skipping.
    // lib.optionalAttrs flatcMatches {
      nativeBuildInputs = [ flatbuffers ];
      env.SERBENCH_REQUIRE_FLATC = "1";
      postPatch = "patchShebangs scripts";
    }
  );
  clippy = cargoCheck "clippy" "cargo clippy --frozen --all-targets -- -D warnings" { };
  # rustfmt reads no dependency, so no vendoring either.
  fmt = runCommand "serbench-fmt-check" { nativeBuildInputs = [ toolchain ]; } ''
    cp -r ${source.src} source
    chmod -R u+w source
    cd source
    cargo fmt --all -- --check
    touch "$out"
  '';
  # `nix fmt` leaves the committed tree as it is: every formatter treefmt.toml names, in CI mode
  # (no cache, fail on any change).
  formatting = runCommand "serbench-formatting-check" { nativeBuildInputs = formattingInputs; } ''
    cp -r ${tree} tree
    chmod -R u+w tree
    cd tree
    HOME=$TMPDIR treefmt --ci
    touch "$out"
  '';
}
