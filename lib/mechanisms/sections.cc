#include "lib/mechanisms/sections.h"

#include "lib/mechanisms/bfc/bfc_config.h"
#include "lib/mechanisms/dibs/dibs_config.h"
#include "lib/mechanisms/floodgate/floodgate_config.h"
#include "lib/mechanisms/flowtune/flowtune_config.h"
#include "lib/mechanisms/int/int_config.h"
#include "lib/mechanisms/pfc/pfc_config.h"
#include "lib/mechanisms/tcd/tcd_config.h"

namespace sluice {
namespace {

// Each mechanism's sections, declared in its folder's <m>_config.h. A new
// mechanism is one more line; its place sets where its keys stand in the
// "allowed keys" lists and when its errors are reported.
constexpr const ConfigSections* kMechanisms[] = {
    &kPfcSections,        // pfc: of a switch, pfc: of a port
    &kBfcSections,        // bfc:
    &kFloodgateSections,  // floodgate:
    &kTcdSections,        // tcd:
    &kDibsSections,       // dibs:
    &kFlowtuneSections,   // flowtune: of a switch, flowtune_allocator: at the top
    &kIntSections,        // int:
};

}  // namespace

std::span<const ConfigSections* const> mechanism_sections() { return kMechanisms; }

}  // namespace sluice
