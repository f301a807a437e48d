# Types shared by several serbench schemas.
#
# Cap'n Proto has no map type: a map is a list of entries sorted by key (the model's BTreeMap
# iterates in that order), as the FlatBuffers schemas do.

@0xa657870bb91f979c;

using Rust = import "rust.capnp";
$Rust.parentModule("format::capnp::generated");

# One entry of a string-to-string map.
struct Attribute {
  key @0 :Text;
  value @1 :Text;
}
