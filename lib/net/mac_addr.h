#pragma once
// Text forms of MAC addresses, IPv4 addresses and IPv4 prefixes, as used in
// configuration files and log messages. Not on the per-packet path.

#include <cstdint>
#include <string>
#include <string_view>

#include "lib/config/config.h"

namespace sluice {

// "aa:bb:cc:dd:ee:ff" (or '-' separated, either case). Exactly six two-digit
// hex groups; anything else is rejected.
bool parse_mac(std::string_view text, MacAddr* out);

// Lower-case, colon separated: "02:00:00:00:00:01".
std::string format_mac(const MacAddr& mac);

// Dotted quad "10.0.0.1" into host byte order. Four decimal fields 0..255,
// no leading '+', no empty fields, no leading zeros beyond a single "0" (so
// "010.0.0.1" is refused rather than read as octal or decimal ambiguously).
bool parse_ipv4(std::string_view text, uint32_t* out);

// Host byte order to dotted quad.
std::string format_ipv4(uint32_t addr);

// "10.0.0.0/8"; the length is 0..32 and no host bits may be set
// ("10.0.0.1/8" is refused, since it is almost always a typo). A bare address
// without "/len" is refused too: routes must say their length.
bool parse_ipv4_prefix(std::string_view text, Ipv4Prefix* out);

// Netmask of a prefix length in host byte order (0 for /0, no UB shift).
constexpr uint32_t prefix_mask(unsigned len) { return len == 0 ? 0u : ~0u << (32 - len); }

}  // namespace sluice
