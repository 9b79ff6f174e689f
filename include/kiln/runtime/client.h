// Client: the per-device handle through which a program allocates, moves data, launches and
// waits. Cheap to copy (copies share one stream and one memory pool) and safe to use from
// several threads.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/runtime/device.h"
#include "kiln/runtime/handle.h"

namespace kiln {

namespace runtime {
class ClientState;
}

struct MemoryStats {
  uint64_t reserved_bytes = 0;  // memory taken from the device in pages
  uint64_t in_use_bytes = 0;    // bytes held by live allocations (rounded up to the pool's granularity)
  uint64_t pages = 0;
  uint64_t allocations = 0;     // allocations served, in all
  uint64_t reused = 0;          // allocations served from memory already reserved
  uint64_t frees = 0;
};

struct ClientStats {
  uint64_t compilations = 0;  // kernels compiled by the device's kernel cache
  uint64_t launches = 0;      // launches through the device's cache, all kernels
  std::vector<std::pair<std::string, uint64_t>> launches_by_kernel;  // sorted by name
  MemoryStats memory;         // this client's pool
};

class Client {
 public:
  Device device() const;
  // "cpu" or "cuda".
  std::string_view runtime_name() const;

  // Uninitialised memory of `bytes` bytes.
  Handle empty(size_t bytes) const;
  Handle upload_bytes(const void* data, size_t bytes) const;
  template <class T>
  Handle upload(std::span<const T> data) const {
    static_assert(std::is_trivially_copyable_v<T>);
    return upload_bytes(data.data(), data.size_bytes());
  }
  template <class T>
  Handle upload(const std::vector<T>& data) const {
    return upload(std::span<const T>(data));
  }

  // Waits for the work that writes `h`, then copies what it shows to the host.
  void read_bytes(const Handle& h, void* out, size_t bytes) const;
  template <class T>
  std::vector<T> read(const Handle& h) const {
    static_assert(std::is_trivially_copyable_v<T>);
    std::vector<T> out(h.size_in_used() / sizeof(T));
    read_bytes(h, out.data(), out.size() * sizeof(T));
    return out;
  }
  void write_bytes(const Handle& h, const void* data, size_t bytes) const;
  template <class T>
  void write(const Handle& h, std::span<const T> data) const {
    write_bytes(h, data.data(), data.size_bytes());
  }
  template <class T>
  void write(const Handle& h, const std::vector<T>& data) const {
    write(h, std::span<const T>(data));
  }

  // Waits for all work submitted through this client.
  void sync() const;
  ClientStats stats() const;
  uint64_t id() const;

  const std::shared_ptr<runtime::ClientState>& state() const { return state_; }
  explicit Client(std::shared_ptr<runtime::ClientState> s) : state_(std::move(s)) {}

 private:
  std::shared_ptr<runtime::ClientState> state_;
};

}  // namespace kiln
