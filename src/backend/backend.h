// The narrow interface between the runtime and a backend: compile a kernel, move memory, launch.
// It sits below both: backends implement it and know nothing of the runtime; the runtime owns
// everything else (ids, caches, pools, argument checks) and picks a backend per device. A backend
// sees only IR, raw device addresses and bound arguments.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "kiln/backend/binding.h"
#include "kiln/backend/device_info.h"
#include "kiln/ir/kernel.h"

namespace kiln::backend {

// A backend's compiled form of one kernel.
class Executable {
 public:
  virtual ~Executable() = default;
  // The name the kernel has in the backend (a CUDA entry name; the IR name on the CPU).
  virtual std::string_view entry_name() const = 0;
  // Whether a launch passes the client's device error word, at the binding after the kernel's
  // parameters: its address, and its site's code (Client::register_device_error_site) in the
  // scalar. A kernel with a check (check.trips) that cannot stop the launch itself reports there;
  // the CPU's stops it.
  virtual bool takes_error_word() const { return false; }
};

// A stream of work on a device; operations on one stream run in order.
class Stream {
 public:
  virtual ~Stream() = default;
};

// A mark in a stream's work, for timing it (autotune).
class Event {
 public:
  virtual ~Event() = default;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string_view runtime_name() const = 0;
  virtual const DeviceInfo& info() const = 0;
  // What the backend compiles for: the pass pipeline runs for this target before compile().
  virtual ir::Target target() const = 0;

  // Raw device memory for the pools. allocate returns 0 when the device is out of memory.
  virtual uint64_t allocate(size_t bytes) = 0;
  virtual void deallocate(uint64_t address) = 0;

  virtual std::unique_ptr<Stream> create_stream() = 0;
  virtual void copy_to_device(Stream& s, uint64_t dst, const void* src, size_t bytes) = 0;
  virtual void copy_to_host(Stream& s, void* dst, uint64_t src, size_t bytes) = 0;
  virtual void copy_on_device(Stream& s, uint64_t dst, uint64_t src, size_t bytes) = 0;
  virtual void fill(Stream& s, uint64_t dst, unsigned char byte, size_t bytes) = 0;
  virtual void sync(Stream& s) = 0;
  // Marks the point after the work submitted to `s` so far.
  virtual std::unique_ptr<Event> record_event(Stream& s) = 0;
  // The device's seconds between two marks of one stream; waits for `end`.
  virtual double seconds_between(Event& start, Event& end) = 0;

  // Compiles a kernel that has been through the pass pipeline. Errors are kiln::Error.
  virtual std::shared_ptr<Executable> compile(const ir::Kernel& k) = 0;
  // Runs (or enqueues) a launch. A launch the backend refuses (it throws before anything runs)
  // leaves every buffer as it was; what a kernel that fails while it runs leaves differs by
  // backend: the CPU restores every buffer, a GPU's context is lost (docs/index.md, Errors).
  virtual void launch(Executable& exe, const LaunchDims& dims, std::span<const ArgBinding> args, Stream& s) = 0;
};

}  // namespace kiln::backend
