#pragma once
// What the transport hosts report at the end of a run: every flow's outcome
// in the completions file (docs/transports.md "Completions"), and their
// totals in the summary and its JSON.

#include <string>

#include "switch/runtime/runtime.h"

namespace sluice {

// Writes transport.completions (nothing without one); false with *error.
bool write_transport_completions(const Runtime& rt, std::string* error);
// The summary's "transport hosts" block (nothing without transport hosts).
void print_transport(const Runtime& rt);
// The summary JSON's "transport" object ("" without transport hosts).
std::string transport_json(const Runtime& rt);

}  // namespace sluice
