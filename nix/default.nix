# Everything the flake offers for one system. flake.nix maps this over its systems.
{
  nixpkgs,
  rust-overlay,
  system,
  cargoToml,
  commit,
}:
let
  pkgs = import nixpkgs {
    inherit system;
    overlays = [ rust-overlay.overlays.default ];
  };
  inherit (pkgs) lib callPackage;

  # The rustc rustup users get: one rust-toolchain.toml for both.
  toolchain = pkgs.rust-bin.fromRustupToolchainFile ../rust-toolchain.toml;
  # nixpkgs' own buildRustPackage on that toolchain rather than crane: no extra flake input,
  # and `cargoLock` vendors every crate straight from Cargo.lock (no git dependencies, so no
  # outputHashes to keep). crane's separate dependency derivation would pay off for frequent
  # incremental CI builds; a benchmark built a few times per commit does not need it.
  rustPlatform = pkgs.makeRustPlatform {
    cargo = toolchain;
    rustc = toolchain;
  };

  # One format list: Cargo.toml's default features are the formats the registry is built with;
  # a name with no module in src/format/ is one backend's feature (build.rs reads it so too).
  formats = builtins.filter (
    name:
    builtins.pathExists (../src/format + "/${name}.rs")
    || builtins.pathExists (../src/format + "/${name}/mod.rs")
  ) cargoToml.features.default;
  # The flatc the committed FlatBuffers code was generated with is the runtime crate's pinned
  # version (`flatbuffers = "=X"` in Cargo.toml).
  flatcVersion = lib.removePrefix "=" cargoToml.dependencies.flatbuffers.version;
  source = import ./source.nix { inherit cargoToml; };

  # The binary depends on the sources only; the wrapper stamps the commit on it.
  unwrapped = callPackage ./package.nix { inherit rustPlatform source; };
  serbench = callPackage ./stamped.nix {
    inherit
      unwrapped
      commit
      toolchain
      flatcVersion
      ;
  };
  # The same binary compiled for the build machine's CPU (`nix run .#bench-native`).
  serbench-native = callPackage ./stamped.nix {
    unwrapped = callPackage ./package.nix {
      inherit rustPlatform source;
      native = true;
    };
    inherit commit toolchain flatcVersion;
  };
  # sizes.csv records no commit, so it is not rebuilt for a commit that changes no source.
  sizes = callPackage ./sizes.nix { serbench = unwrapped; };
  # Every arm run once through the real build, in seconds: a wiring check whose numbers mean
  # nothing (`nix flake check`, CI, the offline test).
  results-smoke = callPackage ./results.nix {
    inherit serbench;
    profile = "smoke";
  };
  # The formatters `nix fmt` and the dev shell's plain `treefmt` run (treefmt.toml names them).
  formatters = [
    toolchain # rustfmt
    pkgs.nixfmt
    pkgs.taplo
    pkgs.prettier
  ];
in
{
  packages = {
    default = serbench;
    inherit serbench serbench-native sizes results-smoke;
    # The whole matrix, full profile, measured on the build host.
    results = callPackage ./results.nix { inherit serbench; };
  };
  # apps and checks are plain attribute sets of outputs, so not made with callPackage: its
  # makeOverridable would add `override` and `overrideDerivation`, which `nix flake check` and
  # `nix flake show` reject as an app and as a check.
  apps = import ./apps.nix {
    inherit (pkgs) lib runtimeShell writeShellScript;
    inherit serbench serbench-native formats;
  };
  devShells.default = callPackage ./shell.nix { inherit toolchain formatters flatcVersion; };
  formatter = callPackage ./formatter.nix { inherit formatters; };
  checks = import ./checks.nix {
    inherit (pkgs)
      lib
      runCommand
      flatbuffers
      treefmt
      ;
    inherit
      rustPlatform
      toolchain
      source
      serbench
      sizes
      results-smoke
      flatcVersion
      formatters
      ;
  };
}
