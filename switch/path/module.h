#pragma once
// A module is what plugs into the path (docs/architecture.md, "Modules"):
// each mechanism (PFC, BFC, Floodgate, TCD, DIBS, INT, Flowtune) is one,
// and so is the queue trace. A module lives in its folder under
// switch/mechanisms/ (or switch/ops/) and is listed once in
// switch/mechanisms/registry.h. The stages, the worker's loop, exact time,
// the exporter and the report visit the registry's modules in its order and
// know none by name.
//
// A module is a class with:
//   - a process part, built once on the main lcore before the workers start
//     (`static std::string build(Runtime&)`, optional), whose state the
//     module keeps in the runtime's slot for it (Runtime::module_state,
//     SwitchRuntime::module, PortRuntime::module);
//   - a lcore part: one object per worker lcore, `M(Worker&)`, whose member
//     functions are the steps it takes in the path (the hooks below);
//   - which steps it takes for packets leaving each egress port
//     (`static void plan(const SwitchConfig&, const PortConfig&, StagePlan&)`),
//     so that a port pays only for the steps it enables: each step the
//     stages call through is gated by one bit of the port's StagePlan;
//   - its calendar elements in exact fabric time (`void elements(Calendar&)`),
//     its metrics (`static void collect(const Runtime&, Families&)`) and its
//     part of the summary (`static void summarise(...)`).
// Every hook is optional: a stage calls it only for modules that define it
// (checked at compile time), so a module costs nothing where it has no step.
//
// The hooks, by stage (docs/architecture.md, "A packet's path"), in the
// order a packet meets them:
//   arrival(in, m, pp)            forward, before the metadata is written
//   forward(sw, in, m, pp, x, now) forward, after it; false: the module kept
//                                 the packet (held or dropped)
//   gate(out, m, meta, now)       admission 1; false: held (a VOQ) or dropped
//   QueueChoice                   admission 2, the queue a packet takes
//   before_enqueue / account      admission 3-4, around the traffic manager
//   refuse(out, m, why, now)      admission 3: a refused packet (detour)
//   dropped(out, m, gated, now)   a data packet dropped past forward
//   before_schedule(port, now)    transmit, before the traffic manager dequeues
//   depart(port, p, now)          departure
//   release(port, p, now)         departure, last: its bytes leave the ingress
// A module whose before_schedule and depart steps give the same result for
// a packet that cuts through an idle port (run at that instant, before it
// joins the port's next burst) as for one dequeued alone says so with
// `static constexpr bool kStepsAtPass = true` (StagePlan::cuts_through);
// if its depart step reads the packet's metadata from the mbuf, also
// `kDepartReadsMeta = true` (StagePlan::pass_meta). A module that chooses
// the queue (QueueChoice) and whose on_enqueued and depart steps, taken at
// one instant for a packet into an empty queue, are what its
// `QueueChoice::passed(w, out, q, bytes, now)` does, says so with
// `kChoiceAtPass = true`: such a packet may then cut through, taking
// passed() in place of both. A module whose forward step changes nothing
// another packet's routing or admission reads (it writes its own packet's
// fields, and state only a control frame's step reads) says so with
// `kForwardInBurst = true`: a burst's data frames between two other frames
// are then all routed before the first is admitted (forward_burst). Such a
// module may also define
//   forward_run(in, pkts, pps, outs, n, now)
// its forward step over a routed stretch (outs[i] == nullptr: dropped by
// routing), which forward_burst then takes once in place of forward per
// packet. Likewise
//   depart_run(port, pkts, n, now)
// its depart step for n data packets leaving `port` at one instant, in
// order, the same as depart for each: taken where its depart step is the
// port's only departure step, or where packets cut through
// (Worker::depart_run).

#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

namespace sluice {

// Slots in the runtime's per-module arrays; the registry holds fewer.
inline constexpr unsigned kMaxModules = 8;

// The steps of an egress port's StagePlan a module may take.
enum class Step : uint8_t {
  kGate,      // admission 1
  kAccount,   // admission 4 (and before_enqueue)
  kRefuse,    // admission 3, a refused packet
  kDropped,   // a data packet dropped past forward
  kSchedule,  // before the traffic manager dequeues
  kDepart,    // departure
  kRelease,   // departure, last
  kCount
};

// A module object's id (M::kId).
template <class M>
constexpr unsigned module_id(const M&) {
  return M::kId;
}

// The modules of the path, in the order every stage visits them.
template <class... Ms>
struct ModuleList {
  static constexpr unsigned kCount = sizeof...(Ms);
  static_assert(kCount <= kMaxModules);
  // Position of M in the list: the module's id.
  template <class M>
  static constexpr unsigned index_of() {
    unsigned i = 0, found = kCount;
    ((std::is_same_v<M, Ms> ? (found = i, ++i) : ++i), ...);
    return found;
  }
  // f.template operator()<M>() for each module type, in order.
  template <class F>
  static void each_type(F&& f) {
    (f.template operator()<Ms>(), ...);
  }
  // One object of each module per worker lcore, each made from the
  // worker (M(W&)).
  struct Instances {
    template <class W>
    explicit Instances(W& w) : all(pass<Ms>(w)...) {}
    std::tuple<Ms...> all;

   private:
    template <class M, class W>
    static W& pass(W& w) {
      return w;
    }
  };
};

}  // namespace sluice
