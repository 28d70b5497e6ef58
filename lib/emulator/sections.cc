#include "lib/emulator/sections.h"

#include "lib/emulator/nic/nic_config.h"
#include "lib/emulator/transport/transport_config.h"

namespace sluice {
namespace {

// Each emulator folder's sections, declared in its <x>_config.h.
constexpr const ConfigSections* kEmulator[] = {
    &kNicSections,        // nic: of a port
    &kTransportSections,  // transport: at the top
};

}  // namespace

std::span<const ConfigSections* const> emulator_sections() { return kEmulator; }

}  // namespace sluice
