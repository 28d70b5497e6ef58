#pragma once
// INT's configuration: a switch's int: section (docs/configuration.md,
// "switches[].int"), whether its egress ports stamp HPCC's in-band telemetry
// (int_stamp.h). int_config.cc parses it; SwitchConfig::int_telemetry holds
// it (a flag: the section has no other key).

namespace sluice {

struct ConfigSections;
// The int: section of a switch.
extern const ConfigSections kIntSections;

}  // namespace sluice
