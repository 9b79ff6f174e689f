// Client: the per-device handle through which a program allocates, moves data, launches and
// waits. Cheap to copy (copies share one stream and one memory pool) and safe to use from
// several threads.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/runtime/buffer.h"
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
  uint64_t allocations = 0;  // allocations served, in all
  uint64_t reused = 0;       // allocations served from memory already reserved
  uint64_t frees = 0;
};

struct ClientStats {
  uint64_t compilations = 0;                                         // kernels compiled by the device's kernel cache
  uint64_t launches = 0;                                             // launches through the device's cache, all kernels
  std::vector<std::pair<std::string, uint64_t>> launches_by_kernel;  // sorted by name
  MemoryStats memory;                                                // this client's pool
};

class Client {
 public:
  Device device() const;
  // "cpu" or "cuda".
  std::string_view runtime_name() const;

  // Uninitialised memory for `count` elements of T. (There is no untyped empty(n): a count of
  // elements and a count of bytes must not share a spelling; bytes are empty_bytes.)
  template <Element T>
  Handle empty(size_t count) const {
    return typed(empty_bytes(count * sizeof(T)), scalar_of<T>());
  }
  // Uninitialised raw memory of `bytes` bytes (no element type: view_as<T> before a launch).
  Handle empty_bytes(size_t bytes) const;
  // Raw bytes (no element type).
  Handle upload_bytes(const void* data, size_t bytes) const;
  // A copy of `data` on the device. The handle's element type is T's (element_of: a kiln element
  // type, or another integer type of the same width); other types upload as raw bytes.
  template <class T>
  Handle upload(std::span<const T> data) const {
    static_assert(std::is_trivially_copyable_v<T>);
    Handle h = upload_bytes(data.data(), data.size_bytes());
    if constexpr (constexpr auto e = element_of<T>(); e.has_value()) h = typed(std::move(h), *e);
    return h;
  }
  template <class T>
  Handle upload(const std::vector<T>& data) const {
    return upload(std::span<const T>(data));
  }
  // std::vector<bool> packs bits: it uploads as a bool handle of one byte (0 or 1) per element.
  Handle upload(const std::vector<bool>& data) const;

  // The same as empty<T> and upload, as a Buffer<T>: a handle whose element type the compiler
  // knows, which typed fronts (a tile entry's launch) take (runtime/buffer.h).
  template <Element T>
  Buffer<T> buffer(size_t count) const {
    return Buffer<T>::of(empty<T>(count));
  }
  template <Element T>
  Buffer<T> upload_buffer(std::span<const T> data) const {
    return Buffer<T>::of(upload(data));
  }
  template <Element T>
  Buffer<T> upload_buffer(const std::vector<T>& data) const {
    return upload_buffer(std::span<const T>(data));
  }
  Buffer<bool> upload_buffer(const std::vector<bool>& data) const { return Buffer<bool>::of(upload(data)); }

  // Waits for the work that writes `h`, then copies what it shows to the host.
  void read_bytes(const Handle& h, void* out, size_t bytes) const;
  // Reads `h` as elements of T. When T is a kiln element type it must be h's (Error
  // {handle.type_mismatch}; view_as reinterprets); a bool handle also reads as uint8_t, since
  // std::vector<bool> holds no bools.
  template <class T>
  std::vector<T> read(const Handle& h) const {
    static_assert(std::is_trivially_copyable_v<T>);
    if constexpr (constexpr auto e = element_of<T>(); e.has_value()) check_element(h, *e, "read");
    if constexpr (std::is_same_v<T, bool>) {
      std::vector<uint8_t> bytes(h.size_in_used());
      read_bytes(h, bytes.data(), bytes.size());
      return std::vector<bool>(bytes.begin(), bytes.end());  // any non-zero byte is true, as in kernels
    } else {
      std::vector<T> out(h.size_in_used() / sizeof(T));
      read_bytes(h, out.data(), out.size() * sizeof(T));
      return out;
    }
  }
  void write_bytes(const Handle& h, const void* data, size_t bytes) const;
  template <class T>
  void write(const Handle& h, std::span<const T> data) const {
    if constexpr (constexpr auto e = element_of<T>(); e.has_value()) check_element(h, *e, "write");
    write_bytes(h, data.data(), data.size_bytes());
  }
  template <class T>
  void write(const Handle& h, const std::vector<T>& data) const {
    write(h, std::span<const T>(data));
  }
  // One byte (0 or 1) per bool, as upload(std::vector<bool>) makes them.
  void write(const Handle& h, const std::vector<bool>& data) const;

  // Runs work held back for this client by a layer above (the tensor library's pending chains),
  // then waits for all work submitted through this client; raises an error a kernel recorded in
  // the device error word (below).
  void sync() const;

  // Errors that kernels find on the device, such as an index out of range in data the host has
  // not seen. A kernel given device_error_word() records the first one there: the code of a site
  // registered here, then up to kDeviceErrorValues numbers. After a launch that may record one,
  // expect_device_error() has the next read or sync check the word (one small copy) and raise the
  // error, which clears it; on the CPU, whose launches have run when they return, it checks at
  // once. check_device_error() checks at once on any device.
  static constexpr uint32_t kDeviceErrorValues = 7;
  struct DeviceErrorSite {
    std::string kind;                                                                      // the Error kind raised
    std::function<std::string(const std::array<uint32_t, kDeviceErrorValues>&)> describe;  // the message
  };
  static uint32_t register_device_error_site(DeviceErrorSite site);
  // u32 x (1 + kDeviceErrorValues), zero while no error is recorded. Made on first use.
  const Handle& device_error_word() const;
  void expect_device_error() const;
  void check_device_error() const;
  ClientStats stats() const;
  uint64_t id() const;
  // The device's seconds for the work `work` submits through this client, from one mark before
  // it to one after (device events on a GPU, the host clock on the CPU, whose launches run as
  // they are made); waits for that work. What autotune measures candidates with.
  double device_seconds(const std::function<void()>& work) const;

  const std::shared_ptr<runtime::ClientState>& state() const { return state_; }
  explicit Client(std::shared_ptr<runtime::ClientState> s) : state_(std::move(s)) {}

 private:
  static Handle typed(Handle h, ir::Scalar element);
  // Error{handle.type_mismatch} when h holds elements of another type than `element`.
  static void check_element(const Handle& h, ir::Scalar element, const char* what);
  std::shared_ptr<runtime::ClientState> state_;
};

}  // namespace kiln
