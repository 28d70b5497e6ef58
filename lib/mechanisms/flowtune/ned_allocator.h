#pragma once
// Flowtune's rate allocator (SPEC 4.5; "Flowtune: Flowlet Control for
// Datacenter Networks", NSDI 2017, §2 NED and §3 normalisation, §5.3.2
// update threshold). Flows have a weight w_s (utility w_s·log x_s, i.e.
// weighted proportional fairness) and a path of links; links have a capacity
// c_l and a price p_l. docs/mechanisms/flowtune.md ("NED and normalisation").
//
// Decisions (each is argued in the doc):
// - Units: capacities and rates share one unit chosen by the caller, best
//   capacity-normalised (a host link = 1) or Gbit/s; never bit/s. Prices are
//   in 1/that unit, so the initial price 1 means "one unit per unit weight".
// - The optimiser works against the full capacity c_l (G_l = Σx − c_l, SPEC
//   4.5 and paper §2); the headroom (1 − threshold)·c is applied only by the
//   output normalisation, so x and p are never touched by it (paper §3:
//   normalisation is a separate step after the optimiser).
// - Prices start at 1 when a link is added and are never reset: a link left
//   without flows keeps its price (paper §2, "initialization of prices
//   happens only once"). A new flow's x is computed from current prices at
//   once, so the output is meaningful before the next iteration.
// - Zero-price fallback: when Σp over a flow's path is 0 (not merely small),
//   x_s = the smallest capacity on the path.
// - F-NORM has no floor: a flow whose most loaded link is under-used is
//   scaled up to fill it. Link ratio r_l = Σx / ((1 − threshold)·c_l).
// - Notification is relative (paper §5.3.2: "1 Gbit/s ... notified when its
//   rate changes to above 1.01 or below 0.99"): a flow is notified when
//   |new − last_sent| > threshold·last_sent, or when it was never sent.
//   With sums at most (1 − t)·c and every sent rate within a factor (1 + t)
//   of the current one, a link carries at most (1 − t²)·c.
// - Storage: fixed capacities given at construction (flows, links); flow
//   slots are reused through a free list, active flows are kept in a dense
//   list (swap-remove), so iterate() and normalise() touch only live flows
//   and nothing allocates after construction. add_flow/remove_flow are
//   O(path length): they update only the per-link sums and flow counts of
//   the links the flow crosses.
// - Per-link Σx is kept incrementally between iterations (for the output
//   after churn) and recomputed from scratch in every iterate(), so rounding
//   never accumulates. Σx²/w is only needed inside iterate().
// Single writer; no exceptions; invalid arguments are refused by return
// value.

#include <cstdint>
#include <span>
#include <vector>

#include "lib/mechanisms/flowtune/flow_path.h"

namespace sluice::flowtune {

inline constexpr double kDefaultGamma = 0.4;
inline constexpr double kDefaultThreshold = 0.01;

enum class NormMode : uint8_t { kFNorm, kUNorm };

struct NedConfig {
  uint32_t max_flows = 0;
  uint32_t max_links = 0;
  double gamma = kDefaultGamma;
  double threshold = kDefaultThreshold;  // headroom and notification threshold
};

// One flow whose normalised rate is to be sent.
struct RateNotice {
  FlowId flow = kInvalidFlow;
  double rate = 0;  // normalised, in the capacity unit
};

class NedAllocator {
 public:
  explicit NedAllocator(const NedConfig& cfg);

  // A new link at price 1; kInvalidLink when the table is full or c <= 0.
  LinkId add_link(double capacity);
  // Capacity changes keep the price (paper §6: failed or shared links can be
  // shrunk). False for an unknown link or c <= 0.
  bool set_link_capacity(LinkId l, double capacity);

  // A new flow, its rate computed from the current prices; kInvalidFlow when
  // the table is full, weight <= 0, the path is empty, too long, or names an
  // unknown link. O(path length).
  FlowId add_flow(double weight, std::span<const LinkId> path);
  // False for an unknown or already removed flow. O(path length).
  bool remove_flow(FlowId f);

  // One NED iteration: rates from prices, then prices from those rates.
  // O(total path length of live flows); no allocation.
  void iterate();

  // Normalised rates of all live flows from the current x (F-NORM or
  // U-NORM), at most (1 − threshold)·c on every link.
  void normalise(NormMode mode);
  // Writes up to out.size() flows whose normalised rate moved by more than
  // the threshold from the rate last sent (or was never sent) and records
  // the rate as sent; returns how many. Flows that did not fit stay pending
  // for the next call.
  uint32_t collect_notices(std::span<RateNotice> out);

  // Accessors (tests, statistics). Out-of-range ids give 0.
  double price(LinkId l) const { return l < links_.size() ? links_[l].price : 0; }
  double capacity(LinkId l) const { return l < links_.size() ? links_[l].capacity : 0; }
  double link_sum(LinkId l) const { return l < links_.size() ? links_[l].sum_x : 0; }
  uint32_t link_flows(LinkId l) const { return l < links_.size() ? links_[l].flows : 0; }
  bool live(FlowId f) const { return f < flows_.size() && flows_[f].live; }
  double rate(FlowId f) const { return live(f) ? flows_[f].x : 0; }
  double normalised_rate(FlowId f) const { return live(f) ? flows_[f].norm : 0; }
  double last_sent(FlowId f) const { return live(f) ? flows_[f].last_sent : 0; }
  uint32_t flow_count() const { return static_cast<uint32_t>(active_.size()); }
  uint32_t link_count() const { return static_cast<uint32_t>(links_.size()); }
  uint32_t max_flows() const { return max_flows_; }
  uint32_t max_links() const { return max_links_; }
  double threshold() const { return threshold_; }

 private:
  struct Link {
    double capacity = 0;
    double price = 1;
    double sum_x = 0;    // Σ x_s over its flows
    double sum_h = 0;    // Σ x_s² / w_s, valid inside iterate()
    uint32_t flows = 0;  // live flows crossing it
  };
  struct Flow {
    FlowPath path;
    double weight = 0;
    double x = 0;          // optimiser rate
    double norm = 0;       // normalised output rate
    double last_sent = 0;  // normalised rate last notified
    uint32_t active_index = 0;
    bool live = false;
    bool sent = false;  // last_sent is meaningful
  };

  double rate_from_prices(const Flow& s) const;

  uint32_t max_flows_;
  uint32_t max_links_;
  double gamma_;
  double threshold_;
  std::vector<Link> links_;
  std::vector<Flow> flows_;     // slots, grown up to max_flows_ (reserved)
  std::vector<FlowId> free_;    // removed slots, reused first
  std::vector<FlowId> active_;  // live flows, dense
};

}  // namespace sluice::flowtune
