# `telemetry`: one telemetry event. A list of structs is always laid out inline in Cap'n Proto
# (fixed-size elements behind one tag word, no pointer per element), so the samples need no
# second layout as FlatBuffers' struct-samples variant does, and a sample can still gain fields
# later.

@0xfbbe92abe0939d5d;

using Rust = import "rust.capnp";
$Rust.parentModule("format::capnp::generated");

using Common = import "common.capnp";

struct ServiceInfo {
  name @0 :Text;
  version @1 :Text;
  instanceId @2 :Text;
  region @3 :Text;
}

struct MetricSample {
  timestampMs @0 :Int64;
  value @1 :Float64;
  count @2 :Int64;
}

struct TelemetryEvent {
  eventId @0 :Text;
  timestampMs @1 :Int64;
  service @2 :ServiceInfo;
  metric @3 :Text;
  unit @4 :Text;
  tags @5 :List(Text);
  # Sorted by key.
  attributes @6 :List(Common.Attribute);
  samples @7 :List(MetricSample);
}
