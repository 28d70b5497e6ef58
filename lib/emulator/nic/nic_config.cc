#include "lib/emulator/nic/nic_config.h"

#include <optional>
#include <string>

#include "lib/config/config_check.h"
#include "lib/config/config_section.h"
#include "lib/config/config_validate.h"
#include "lib/config/yaml_reader.h"
#include "lib/control/control_frame.h"
#include "lib/emulator/nic/nic_queues.h"
#include "lib/mechanisms/bfc/pause_counters.h"

namespace sluice {
namespace {

std::optional<NicMode> nic_mode(YamlReader& r, const Field& f) {
  return r.choice<NicMode>(
      f, {{"plain", NicMode::kPlain}, {"bfc", NicMode::kBfc}, {"floodgate", NicMode::kFloodgate}});
}

// nic: plain | bfc | floodgate, or a map with mode, queue_by, queues,
// frames, sticky, reply_queue.
void parse_nic(YamlReader& r, const Field& f, PortConfig* port) {
  NicConfig* out = &port->nic;
  out->given = true;
  out->line = YamlReader::line_of(f.node);
  if (f.node.IsScalar()) return set(nic_mode(r, f), &out->mode);
  if (!r.expect_map(f, {"mode", "queue_by", "queues", "frames", "sticky", "reply_queue"})) return;
  if (auto m = r.field(f, "mode", Need::kOptional)) set(nic_mode(r, *m), &out->mode);
  if (auto k = r.field(f, "queue_by", Need::kOptional)) {
    set(r.choice<NicQueueKey>(
            *k, {{"destination", NicQueueKey::kDestination}, {"flow", NicQueueKey::kFlow}}),
        &out->queue_by);
  }
  if (auto q = r.field(f, "queues", Need::kOptional)) {
    set(r.integer(*q, 1, NicQueues::kMaxQueues), &out->queues);
  }
  if (auto n = r.field(f, "frames", Need::kOptional)) {
    set(r.integer(*n, 1, 1u << 22), &out->frames);
  }
  if (auto t = r.field(f, "sticky", Need::kOptional)) {
    set(r.duration(*t, 1, UINT64_MAX), &out->sticky_ns);
  }
  if (auto q = r.field(f, "reply_queue", Need::kOptional)) set(r.boolean(*q), &out->reply_queue);
}

// The payload of the switch's BFC bitmaps toward a NIC of `queues`.
uint32_t bitmap_payload_to(uint32_t queues) {
  return bfc_bitmap_payload(bfc_nic_upstream_queues(queues));
}

// The emulated NIC stands for a replaying host: a capture-file port with
// a rate to pace at, role host; BFC NICs need a BFC switch to pause them,
// Floodgate NICs a Floodgate switch that sends dstPause.
void validate_nic(ConfigCheck& k, size_t s, size_t p) {
  const Config& c = k.config();
  const SwitchConfig& sw = c.switches[s];
  const PortConfig& port = sw.ports[p];
  if (!port.nic.given) return;
  const std::string key = port_key(s, p) + ".nic";
  if (!port.pcap || (port.pcap->rx_path.empty() && !is_transport_host_port(c, port))) {
    k.error(key,
            "nic: only a port that replays a capture (pcap.rx) or runs the transport has an "
            "emulated host NIC");
  } else if (port.role != PortRole::kHost) {
    k.error(key, "nic: the emulated NIC is a host's: the port's role must be host");
  } else if (port.rate_bps == 0) {
    k.error(key, "nic: the host NIC sends at the port's rate: expected a rate above 0");
  } else if (port.nic.reply_queue && port.nic.queues < 2) {
    k.error(key,
            "nic: reply_queue takes one of the NIC's queues for replies: expected queues "
            "of 2 or more");
  } else if (port.nic.mode == NicMode::kBfc && bitmap_payload_to(port.nic.queues) > port.mtu) {
    k.error(key, "nic: the switch's BFC bitmap to " + std::to_string(port.nic.queues) +
                     " queues is a " + std::to_string(bitmap_payload_to(port.nic.queues)) +
                     "-byte payload, beyond the port's mtu " + std::to_string(port.mtu) +
                     ": fewer queues or a larger mtu");
  } else if (port.nic.mode == NicMode::kBfc && !sw.bfc.enabled) {
    k.error(key, "nic: bfc needs BFC on switch \"" + sw.name +
                     "\" (bfc: {enabled: true}) to pause its queues");
  } else if (port.nic.mode == NicMode::kFloodgate &&
             !(sw.floodgate.enabled && sw.floodgate.dst_pause)) {
    k.error(key, "nic: floodgate needs dstPause on switch \"" + sw.name +
                     "\" (floodgate: {enabled: true, dst_pause: true}) to pause its "
                     "destinations");
  }
}

}  // namespace

const ConfigSections kNicSections{
    .in_port = {.key = "nic", .parse = parse_nic, .validate = validate_nic},
};

}  // namespace sluice
