#include "switch/ops/cli_options.h"

#include <cstdlib>
#include <string_view>

namespace sluice {
namespace {

bool parse_seconds(const char* text, double* out) {
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || v < 0) return false;
  *out = v;
  return true;
}

}  // namespace

bool is_sluice_option(std::string_view arg) {
  for (const char* o : {"--config", "--check", "--duration", "--stats-interval", "--summary-json",
                        "--metrics-address", "--queue-trace", "--queue-trace-ports",
                        "--queue-trace-interval", "--queue-trace-max-rows"}) {
    if (arg == o) return true;
  }
  return false;
}

const char* cli_usage() {
  return "usage: sluice [EAL options] -- --config FILE [options]\n"
         "       sluice --version | --help\n"
         "sluice's options come after \"--\"; EAL's (e.g. --no-huge -m 1024 -l 0,1) before it.\n"
         "  --config FILE            YAML configuration (see docs/configuration.md); required\n"
         "  --check                  validate the configuration and its capture files, and exit\n"
         "                           (default: off)\n"
         "  --duration SECONDS       stop after this long: wall time, or fabric time in exact\n"
         "                           time (default 0: until SIGINT/SIGTERM, or in exact time\n"
         "                           until nothing is due, which periodic timers never allow)\n"
         "  --stats-interval SECONDS live per-port table period (default 1, 0 = off)\n"
         "  --summary-json FILE      write the final summary as JSON (default: none)\n"
         "  --metrics-address H:P    override metrics.address (default: the configuration's,\n"
         "                           127.0.0.1:9100 if it has none)\n"
         "  --queue-trace FILE       sample queue depths into a CSV (docs/metrics.md)\n"
         "                           (default: none, off)\n"
         "  --queue-trace-ports LIST sw/port,... to sample (default: every port)\n"
         "  --queue-trace-interval SECONDS  sampling period (default 0.00001)\n"
         "  --queue-trace-max-rows N rows kept per worker lcore (default 4000000)\n"
         "  --version                print the version and exit\n"
         "  --help, -h               print this and exit\n";
}

bool parse_cli(int argc, char** argv, CliOptions* out, std::string* error, bool* help) {
  *help = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&](const char** v) {
      if (i + 1 >= argc) {
        *error = std::string(a) + " needs a value";
        return false;
      }
      *v = argv[++i];
      return true;
    };
    const char* v = nullptr;
    if (a == "--help" || a == "-h") {
      *help = true;
      return true;
    } else if (a == "--version") {
      out->version = true;
      return true;
    } else if (a == "--check") {
      out->check_only = true;
    } else if (a == "--config") {
      if (!value(&v)) return false;
      out->config_file = v;
    } else if (a == "--duration" || a == "--stats-interval" || a == "--queue-trace-interval" ||
               a == "--queue-trace-max-rows") {
      if (!value(&v)) return false;
      double* target = a == "--duration"               ? &out->duration_seconds
                       : a == "--stats-interval"       ? &out->stats_interval_seconds
                       : a == "--queue-trace-interval" ? &out->queue_trace_interval_seconds
                                                       : &out->queue_trace_max_rows;
      if (!parse_seconds(v, target)) {
        *error = std::string(a) + ": expected a non-negative number" +
                 (a == "--queue-trace-max-rows" ? "" : " of seconds") + ", got \"" + v + "\"";
        return false;
      }
    } else if (a == "--summary-json") {
      if (!value(&v)) return false;
      out->summary_json = v;
    } else if (a == "--queue-trace" || a == "--queue-trace-ports") {
      if (!value(&v)) return false;
      (a == "--queue-trace" ? out->queue_trace : out->queue_trace_ports) = v;
    } else if (a == "--metrics-address") {
      if (!value(&v)) return false;
      out->metrics_address = v;
    } else {
      *error = "unknown option \"" + std::string(a) + "\"";
      return false;
    }
  }
  if (out->config_file.empty()) {
    *error = "--config FILE is required";
    return false;
  }
  return true;
}

}  // namespace sluice
