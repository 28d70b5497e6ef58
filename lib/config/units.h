#pragma once
// Text forms of rates, sizes and durations as written in configuration files.
// Each parser accepts a decimal number (fractions allowed, e.g. "2.5Gbps")
// followed by a unit, optionally separated by spaces, and returns nullopt for
// anything else: unknown or missing unit, a result that is not a whole number
// of the base unit, or overflow of uint64_t. docs/configuration.md lists the
// accepted units.

#include <cstdint>
#include <optional>
#include <string_view>

namespace sluice {

// Bits per second. Units bps, Kbps, Mbps, Gbps, Tbps (decimal, 1000), the
// prefix alone ("10G", "100M") and "bit/s" or "b/s" ("10Gbit/s"). The prefix
// letter is case-insensitive. A bare number is refused, except 0.
std::optional<uint64_t> parse_rate_bps(std::string_view text);

// Bytes. B, KB, MB, GB, TB (decimal, 1000; "kB" also accepted) and KiB, MiB,
// GiB, TiB (binary, 1024). A bare integer means bytes.
std::optional<uint64_t> parse_size_bytes(std::string_view text);

// Nanoseconds. ns, us (or µs), ms, s. A bare number is refused, except 0.
std::optional<uint64_t> parse_duration_ns(std::string_view text);

}  // namespace sluice
