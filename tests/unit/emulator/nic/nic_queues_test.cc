// The host NIC's send queues: which queue a key gets and keeps, FIFO order,
// capacity. Time is simulated.
#include "lib/emulator/nic/nic_queues.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

namespace sluice {
namespace {

NicFrame frame(uint32_t id) { return NicFrame{0, id, 100, 0, 0}; }

// The queues the network holds, as a set.
QueueSet held_set(uint32_t n, std::initializer_list<uint32_t> qs) {
  QueueSet s(n);
  for (uint32_t q : qs) s.set(q);
  return s;
}

std::vector<uint32_t> drain(NicQueues& q, uint32_t queue) {
  std::vector<uint32_t> ids;
  while (q.frames(queue) != 0) {
    ids.push_back(q.head(queue).id);
    q.pop(queue, 0);
  }
  return ids;
}

TEST(NicQueues, NewKeysTakeFreeQueuesFromARotatingStart) {
  NicQueues q(4, 100, 0);
  EXPECT_EQ(q.queue_of(10, 0, nullptr), 0u);
  q.push(0, frame(1), 0);
  EXPECT_EQ(q.queue_of(20, 0, nullptr), 1u);
  q.push(1, frame(2), 0);
  EXPECT_EQ(q.queue_of(10, 0, nullptr), 0u) << "a key keeps a queue that holds its frames";
  drain(q, 0);
  // Queue 0 is free again, but the search goes on from queue 2.
  EXPECT_EQ(q.queue_of(30, 0, nullptr), 2u);
  EXPECT_EQ(q.collisions.get(), 0u);
}

TEST(NicQueues, EveryQueueTakenMeansSharingByKeyModulo) {
  NicQueues q(2, 100, 0);
  q.push(q.queue_of(7, 0, nullptr), frame(1), 0);
  q.push(q.queue_of(8, 0, nullptr), frame(2), 0);
  EXPECT_EQ(q.queue_of(9, 0, nullptr), 1u);  // 9 % 2
  EXPECT_EQ(q.queue_of(12, 0, nullptr), 0u);
  EXPECT_EQ(q.collisions.get(), 2u);
}

TEST(NicQueues, StickyTimeAndHeldQueuesKeepTheirKey) {
  NicQueues q(2, 100, 1000);
  const uint32_t a = q.queue_of(1, 0, nullptr);
  q.push(a, frame(1), 0);
  q.pop(a, 500);  // empty, active at 500
  EXPECT_EQ(q.queue_of(1, 1499, nullptr), a) << "within sticky: same queue";
  const uint32_t b = q.queue_of(2, 1499, nullptr);
  EXPECT_NE(b, a) << "a sticky queue is not free for another key";
  // Past the sticky time an empty queue is free, unless the network holds it.
  const QueueSet held = held_set(2, {a});
  EXPECT_EQ(q.queue_of(1, 10'000, &held), a) << "a held queue stays its key's";
  EXPECT_NE(q.queue_of(3, 10'000, &held), a);
  EXPECT_EQ(q.queue_of(4, 20'000, nullptr), a) << "free once neither holds";
}

TEST(NicQueues, FifoPerQueueAndCapacity) {
  NicQueues q(2, 3, 0);
  q.push(0, frame(1), 0);
  q.push(1, frame(2), 0);
  q.push(0, frame(3), 0);
  EXPECT_TRUE(q.full());
  EXPECT_EQ(q.held(), 3u);
  EXPECT_EQ(q.nonempty().word(0), 0b11u);
  EXPECT_EQ(drain(q, 0), (std::vector<uint32_t>{1, 3}));
  EXPECT_FALSE(q.full());
  EXPECT_EQ(q.nonempty().word(0), 0b10u);
  // Freed nodes are reused.
  q.push(0, frame(4), 0);
  q.push(0, frame(5), 0);
  EXPECT_EQ(drain(q, 0), (std::vector<uint32_t>{4, 5}));
  EXPECT_EQ(drain(q, 1), (std::vector<uint32_t>{2}));
  EXPECT_EQ(q.held(), 0u);
}

// The rule written out with plain containers: a key's queue is the one
// last assigned to it while it still owns it and the queue holds frames, is
// held, or was active within the sticky time; else the first free one from
// a rotating start; else key % queues. On random traffic (held sets, pops
// dated ahead of now, keys that come back after their queue went free and
// was then held) queue_of() must agree on every call.
class RuleModel {
 public:
  RuleModel(uint32_t queues, uint64_t sticky)
      : n_(queues), sticky_(sticky), owner_(n_), owned_(n_), count_(n_), active_(n_) {}
  bool taken(uint32_t q, uint64_t now, const std::vector<bool>& held) const {
    if (!owned_[q]) return false;
    if (count_[q] != 0 || held[q]) return true;
    return now - active_[q] < sticky_;
  }
  uint32_t queue_of(uint64_t key, uint64_t now, const std::vector<bool>& held) {
    const auto it = last_.find(key);
    if (it != last_.end()) {
      const uint32_t q = it->second;
      if (owned_[q] && owner_[q] == key && taken(q, now, held)) return q;
    }
    for (uint32_t i = 0; i < n_; ++i) {
      const uint32_t q = (start_ + i) % n_;
      if (taken(q, now, held)) continue;
      start_ = (q + 1) % n_;
      owner_[q] = key;
      owned_[q] = true;
      active_[q] = now;
      last_[key] = q;
      return q;
    }
    return static_cast<uint32_t>(key % n_);
  }
  void push(uint32_t q, uint64_t now) {
    ++count_[q];
    active_[q] = now;
  }
  void pop(uint32_t q, uint64_t at) {
    --count_[q];
    active_[q] = at;
  }
  uint32_t count(uint32_t q) const { return count_[q]; }

 private:
  uint32_t n_;
  uint64_t sticky_;
  uint32_t start_ = 0;
  std::vector<uint64_t> owner_;
  std::vector<bool> owned_;
  std::vector<uint32_t> count_;
  std::vector<uint64_t> active_;
  std::map<uint64_t, uint32_t> last_;
};

TEST(NicQueues, AgreesWithTheRuleOnRandomTraffic) {
  for (uint32_t queues : {1u, 4u, 32u, 64u, 300u, 4096u}) {
    std::mt19937_64 rng(queues);
    NicQueues q(queues, 1000, 500);
    RuleModel model(queues, 500);
    uint64_t now = 0;
    uint32_t id = 0;
    for (int step = 0; step < 200'000; ++step) {
      now += rng() % 60;
      const uint32_t op = rng() % 10;
      if (op < 5 && !q.full()) {
        const uint64_t key = rng() % (queues + 6);
        // A held set names a few queues, used or not.
        QueueSet held(queues);
        std::vector<bool> held_bits(queues);
        if (rng() % 4 == 0) {
          for (int i = 0; i < 8; ++i) {
            const uint32_t h = static_cast<uint32_t>(rng() % queues);
            held.set(h);
            held_bits[h] = true;
          }
        }
        const uint32_t got = q.queue_of(key, now, &held);
        ASSERT_EQ(got, model.queue_of(key, now, held_bits)) << "step " << step;
        q.push(got, frame(id++), now);
        model.push(got, now);
      } else {
        // The next queue holding frames from a random one on: the visit in
        // rotation order against a step per queue.
        const uint32_t from = static_cast<uint32_t>(rng() % queues);
        uint32_t at = UINT32_MAX;
        const QueueSet& nonempty = q.nonempty();
        visit_from(
            nonempty.summary(), from, [&](uint32_t i) { return nonempty.word(i); },
            [&](uint32_t n) {
              at = n;
              return true;
            });
        uint32_t want = UINT32_MAX;
        for (uint32_t i = 0; i < queues && want == UINT32_MAX; ++i)
          if (model.count((from + i) % queues) != 0) want = (from + i) % queues;
        ASSERT_EQ(at, want) << "step " << step;
        if (at == UINT32_MAX) continue;
        // A frame's start may lie ahead of now (the wire was busy).
        const uint64_t start = now + (rng() % 3 == 0 ? rng() % 800 : 0);
        q.pop(at, start);
        model.pop(at, start);
      }
    }
    EXPECT_GT(id, 50'000u);
  }
}

// An RDMA NIC's queue per flow: 4096 flows each get a queue of their own,
// the next one shares.
TEST(NicQueues, FourThousandFlowsFourThousandQueues) {
  NicQueues q(4096, 8192, 0);
  std::vector<bool> used(4096);
  for (uint64_t key = 1; key <= 4096; ++key) {
    const uint32_t got = q.queue_of(key * 7919, 0, nullptr);
    ASSERT_LT(got, 4096u);
    ASSERT_FALSE(used[got]) << "flow " << key;
    used[got] = true;
    q.push(got, frame(static_cast<uint32_t>(key)), 0);
  }
  EXPECT_EQ(q.collisions.get(), 0u);
  EXPECT_EQ(q.nonempty().count(), 4096u);
  q.queue_of(1, 0, nullptr);
  EXPECT_EQ(q.collisions.get(), 1u);
}

TEST(NicQueues, QueueCountIsClamped) {
  EXPECT_EQ(NicQueues(0, 1, 0).num_queues(), 1u);
  EXPECT_EQ(NicQueues(5000, 1, 0).num_queues(), NicQueues::kMaxQueues);
}

}  // namespace
}  // namespace sluice
