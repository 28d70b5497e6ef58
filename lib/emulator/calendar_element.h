#pragma once
// One element of the emulator's calendar (docs/emulator.md): a port, a
// mechanism's timer, a host's transports. Each says when it is next due and
// does what is due; the loop (switch/emulator/fabric_loop.h) handles the
// earliest, then asks it, and whatever it touched, again. Time is an
// argument; nothing here reads a clock.

#include <cstdint>

namespace sluice {

class CalendarElement {
 public:
  static constexpr uint64_t kNever = UINT64_MAX;
  // Which of an element's parts something changed; an element with one
  // part ignores them. kAllParts: everything.
  static constexpr uint8_t kAllParts = 0xFF;

  virtual ~CalendarElement() = default;
  // When the element is next due, at or after now (kNever: nothing to do
  // until something touches it), asking again only the parts in `parts`
  // and keeping what it knew of the others.
  virtual uint64_t due(uint64_t now, uint8_t parts) = 0;
  // Every part asked afresh, nothing kept (the calendar's audit).
  virtual uint64_t due_fresh(uint64_t now) { return due(now, kAllParts); }
  // Does what is due at now; returns the parts to ask again.
  virtual uint8_t run(uint64_t now) = 0;
  // The element is likely handled next: it may ask for the memory it will
  // touch first (a hint; it changes nothing the element does).
  virtual void prefetch() const {}
  // For diagnostics: a port's name, or what kind of timer.
  virtual const char* name() const = 0;
  // For diagnostics when time stops moving: what it knew of its parts.
  virtual void describe(char* out, unsigned size) const {
    if (size > 0) out[0] = '\0';
  }
};

}  // namespace sluice
