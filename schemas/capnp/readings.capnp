# `readings`: a batch of sensor readings.

@0xa485140dafd838c9;

using Rust = import "rust.capnp";
$Rust.parentModule("format::capnp::generated");

struct Reading {
  valid @0 :Bool;
  value @1 :Float64;
  labels @2 :List(Text);
}

struct Readings {
  readings @0 :List(Reading);
}
