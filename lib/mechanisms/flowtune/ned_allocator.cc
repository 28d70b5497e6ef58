#include "lib/mechanisms/flowtune/ned_allocator.h"

#include <algorithm>
#include <cmath>

namespace sluice::flowtune {

NedAllocator::NedAllocator(const NedConfig& cfg)
    : max_flows_(cfg.max_flows),
      max_links_(cfg.max_links),
      gamma_(cfg.gamma),
      threshold_(cfg.threshold) {
  // Everything reserved here: no container grows past these sizes, so
  // neither churn nor iterate() allocates.
  links_.reserve(max_links_);
  flows_.reserve(max_flows_);
  free_.reserve(max_flows_);
  active_.reserve(max_flows_);
}

LinkId NedAllocator::add_link(double capacity) {
  if (links_.size() >= max_links_ || !(capacity > 0)) return kInvalidLink;
  Link l;
  l.capacity = capacity;
  links_.push_back(l);  // price 1, once (paper §2)
  return static_cast<LinkId>(links_.size() - 1);
}

bool NedAllocator::set_link_capacity(LinkId l, double capacity) {
  if (l >= links_.size() || !(capacity > 0)) return false;
  links_[l].capacity = capacity;
  return true;
}

double NedAllocator::rate_from_prices(const Flow& s) const {
  double sum_p = 0;
  double min_c = 0;
  for (uint32_t i = 0; i < s.path.size; ++i) {
    const Link& l = links_[s.path.links[i]];
    sum_p += l.price;
    min_c = i == 0 ? l.capacity : std::min(min_c, l.capacity);
  }
  // Utility w·log x: U'(x) = w/x = Σp. A path priced at 0 would ask for an
  // infinite rate; its smallest capacity is the most it can use (SPEC 4.5).
  return sum_p > 0 ? s.weight / sum_p : min_c;
}

FlowId NedAllocator::add_flow(double weight, std::span<const LinkId> path) {
  if (!(weight > 0) || path.empty() || path.size() > kMaxPathLinks) return kInvalidFlow;
  for (LinkId l : path) {
    if (l >= links_.size()) return kInvalidFlow;
  }
  FlowId id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else if (flows_.size() < max_flows_) {
    id = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
  } else {
    return kInvalidFlow;
  }
  Flow& s = flows_[id];
  s = Flow{};
  for (LinkId l : path) s.path.push(l);
  s.weight = weight;
  s.live = true;
  s.active_index = static_cast<uint32_t>(active_.size());
  active_.push_back(id);
  s.x = rate_from_prices(s);  // current prices, never reset (paper §2)
  s.norm = 0;
  for (LinkId l : path) {
    links_[l].sum_x += s.x;
    ++links_[l].flows;
  }
  return id;
}

bool NedAllocator::remove_flow(FlowId f) {
  if (!live(f)) return false;
  Flow& s = flows_[f];
  for (uint32_t i = 0; i < s.path.size; ++i) {
    Link& l = links_[s.path.links[i]];
    --l.flows;
    // An emptied link gets an exact 0 rather than a rounding residue.
    l.sum_x = l.flows == 0 ? 0 : std::max(0.0, l.sum_x - s.x);
  }
  const uint32_t idx = s.active_index;
  const FlowId moved = active_.back();
  active_[idx] = moved;
  flows_[moved].active_index = idx;
  active_.pop_back();
  s.live = false;
  free_.push_back(f);
  return true;
}

void NedAllocator::iterate() {
  for (Link& l : links_) {
    l.sum_x = 0;
    l.sum_h = 0;
  }
  // Rate update (paper §2, Algorithm 1), accumulating per-link G and H.
  for (FlowId f : active_) {
    Flow& s = flows_[f];
    s.x = rate_from_prices(s);
    // -dx/dp for w·log x: w/(Σp)² = x²/w.
    const double h = s.x * s.x / s.weight;
    for (uint32_t i = 0; i < s.path.size; ++i) {
      Link& l = links_[s.path.links[i]];
      l.sum_x += s.x;
      l.sum_h += h;
    }
  }
  // Price update: p ← max(0, p + γ·G/H). Links without flows keep their
  // price; H > 0 whenever a flow is present, the guard covers underflow.
  for (Link& l : links_) {
    if (l.flows == 0 || !(l.sum_h > 0)) continue;
    const double g = l.sum_x - l.capacity;
    l.price = std::max(0.0, l.price + gamma_ * g / l.sum_h);
  }
}

void NedAllocator::normalise(NormMode mode) {
  const double headroom = 1.0 - threshold_;
  if (mode == NormMode::kUNorm) {
    double r_max = 0;
    for (const Link& l : links_) {
      if (l.flows > 0) r_max = std::max(r_max, l.sum_x / (headroom * l.capacity));
    }
    for (FlowId f : active_) {
      Flow& s = flows_[f];
      s.norm = r_max > 0 ? s.x / r_max : 0;
    }
    return;
  }
  // F-NORM: each flow by its most loaded link, no floor (scales up too).
  for (FlowId f : active_) {
    Flow& s = flows_[f];
    double r = 0;
    for (uint32_t i = 0; i < s.path.size; ++i) {
      const Link& l = links_[s.path.links[i]];
      r = std::max(r, l.sum_x / (headroom * l.capacity));
    }
    s.norm = r > 0 ? s.x / r : 0;
  }
}

uint32_t NedAllocator::collect_notices(std::span<RateNotice> out) {
  uint32_t n = 0;
  for (FlowId f : active_) {
    if (n == out.size()) break;
    Flow& s = flows_[f];
    // Relative threshold (paper §5.3.2).
    if (s.sent && std::fabs(s.norm - s.last_sent) <= threshold_ * s.last_sent) continue;
    out[n++] = RateNotice{f, s.norm};
    s.last_sent = s.norm;
    s.sent = true;
  }
  return n;
}

}  // namespace sluice::flowtune
