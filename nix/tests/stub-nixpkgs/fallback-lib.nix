# Without ../shared/nixpkgs-lib (a user's clone): the few nixpkgs lib functions the flake and
# the stub use, with nixpkgs' meaning as far as the flake can tell. The real lib is preferred
# (lib.nix): this copy can only be as right as its author.
rec {
  genAttrs =
    names: f:
    builtins.listToAttrs (
      map (name: {
        inherit name;
        value = f name;
      }) names
    );
  makeBinPath = packages: builtins.concatStringsSep ":" (map (package: "${package}/bin") packages);
  optionals = condition: list: if condition then list else [ ];
  optionalString = condition: string: if condition then string else "";
  optionalAttrs = condition: attrs: if condition then attrs else { };
  removePrefix =
    prefix: string:
    let
      length = builtins.stringLength prefix;
    in
    if builtins.substring 0 length string == prefix then
      builtins.substring length (-1) string
    else
      string;
  getExe = package: "${package}/bin/${package.meta.mainProgram}";
  # callPackage as nixpkgs makes it: the result of a called function that is an attribute set
  # gains `override` and `overrideDerivation` (lib.makeOverridable), which is why the flake's
  # apps and checks must not come from callPackage.
  callPackageWith =
    autoArgs: fn: args:
    let
      function = if builtins.isFunction fn then fn else import fn;
      result = function (builtins.intersectAttrs (builtins.functionArgs function) autoArgs // args);
    in
    if builtins.isAttrs result then
      result
      // {
        override = newArgs: callPackageWith autoArgs fn (args // newArgs);
        overrideDerivation = _: throw "fallback-lib: overrideDerivation is not modelled";
      }
    else
      result;
  systems.elaborate = system: {
    inherit system;
    isDarwin = builtins.match ".*-darwin" system != null;
    isLinux = builtins.match ".*-linux" system != null;
  };
}
