// What a Client is behind its handle: its device, stream and memory pool; and what a Handle
// points to: an Allocation that returns its slice to the pool when the last handle goes.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include "kiln/runtime/handle.h"
#include "runtime/device_state.h"
#include "runtime/memory/memory_manager.h"

namespace kiln::runtime {

class ClientState {
 public:
  explicit ClientState(std::shared_ptr<DeviceState> d);
  ~ClientState();

  uint64_t id;
  std::shared_ptr<DeviceState> device;
  std::unique_ptr<backend::Stream> stream;
  std::shared_ptr<MemoryManager> memory;
  // The device error word (Client::device_error_word) and whether a launch since the last check
  // may have written it.
  std::mutex error_mutex;
  Handle error_word;
  std::atomic<bool> error_expected{false};
};

struct Allocation {
  Allocation(std::shared_ptr<MemoryManager> m, Slice s, uint64_t client, size_t bytes);
  ~Allocation();
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;

  std::shared_ptr<MemoryManager> memory;
  Slice slice;
  uint64_t client_id;
  uint64_t id;
  size_t bytes;  // bytes asked for (the slice may be larger)
};

}  // namespace kiln::runtime
