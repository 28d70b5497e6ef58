#pragma once
// sluice's own command line, the part after EAL's "--".

#include <string>
#include <string_view>

namespace sluice {

struct CliOptions {
  std::string config_file;
  bool check_only = false;
  bool version = false;               // --version: print the version and exit
  double duration_seconds = 0;        // 0: until a signal
  double stats_interval_seconds = 1;  // 0: no live table
  std::string summary_json;
  std::string metrics_address;    // overrides the configuration when set
  std::string queue_trace;        // CSV of queue depths over time (empty: off)
  std::string queue_trace_ports;  // "sw/port,..." (empty: every port)
  double queue_trace_interval_seconds = 10e-6;
  double queue_trace_max_rows = 4e6;
};

// Parses argv[0..argc) (argv[0] is the program name). On error returns false
// and sets *error; --help sets *help, --version out->version (neither needs
// --config).
bool parse_cli(int argc, char** argv, CliOptions* out, std::string* error, bool* help);

const char* cli_usage();
// Whether arg is one of sluice's own options (which go after "--").
bool is_sluice_option(std::string_view arg);

}  // namespace sluice
