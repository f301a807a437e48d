# The few nixpkgs lib functions the flake uses, with nixpkgs' meaning.
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
}
