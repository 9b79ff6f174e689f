// Client and Handle: allocation through the client's pool, transfers on its stream.
#include "kiln/runtime/client.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <mutex>

#include "kiln/error.h"
#include "runtime/client_state.h"
#include "runtime/deferred.h"

namespace kiln {

namespace runtime {

namespace {
std::atomic<uint64_t> g_next_client{1};
std::atomic<uint64_t> g_next_memory{1};

// The registered runners: a list that only grows, newest first, read by sync without a lock (a
// node is complete before it is published; nodes live to exit).
struct RunnerNode {
  DeferredRunner runner;
  RunnerNode* next;
};
std::atomic<RunnerNode*> g_runners{nullptr};

size_t small_page_for(const DeviceState& d) {
  // Small allocations share pages: 32 MiB on GPUs, 8 MiB on the host.
  return d.kind == DeviceKind::Cpu ? (size_t(8) << 20) : (size_t(32) << 20);
}
}  // namespace

void register_deferred_runner(DeferredRunner runner) {
  static std::mutex m;  // registrations one at a time, so that one registered twice is seen
  std::lock_guard<std::mutex> lock(m);
  RunnerNode* head = g_runners.load(std::memory_order_acquire);
  for (RunnerNode* n = head; n; n = n->next) {
    if (n->runner == runner) return;
  }
  g_runners.store(new RunnerNode{runner, head}, std::memory_order_release);
}

void run_deferred(uint64_t client_id) {
  std::exception_ptr first;
  for (RunnerNode* n = g_runners.load(std::memory_order_acquire); n; n = n->next) {
    try {
      n->runner(client_id);
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

ClientState::ClientState(std::shared_ptr<DeviceState> d)
    : id(g_next_client.fetch_add(1)),
      device(std::move(d)),
      stream(device->backend->create_stream()),
      memory(std::make_shared<MemoryManager>(device, small_page_for(*device))) {}

ClientState::~ClientState() {
  // Work still queued may use memory that handles outlive: finish it first. A kernel that failed
  // has already been reported to whoever synchronised; a destructor cannot report it again.
  try {
    device->backend->sync(*stream);
  } catch (const Error&) {
  }
}

Allocation::Allocation(std::shared_ptr<MemoryManager> m, Slice s, uint64_t client, size_t n)
    : memory(std::move(m)), slice(s), client_id(client), id(g_next_memory.fetch_add(1)), bytes(n) {}

Allocation::~Allocation() { memory->free(slice); }

}  // namespace runtime

Device Client::device() const { return Device(state_->device); }

std::string_view Client::runtime_name() const { return state_->device->backend->runtime_name(); }

uint64_t Client::id() const { return state_->id; }

double Client::device_seconds(const std::function<void()>& work) const {
  auto& b = *state_->device->backend;
  std::unique_ptr<backend::Event> start = b.record_event(*state_->stream);
  work();
  std::unique_ptr<backend::Event> end = b.record_event(*state_->stream);
  return b.seconds_between(*start, *end);
}

Handle Client::empty_bytes(size_t bytes) const {
  runtime::Slice s = state_->memory->alloc(bytes);
  auto a = std::make_shared<runtime::Allocation>(state_->memory, s, state_->id, bytes);
  return Handle(std::move(a), 0, bytes, std::nullopt);
}

Handle Client::typed(Handle h, ir::Scalar element) { return h.view_as(element); }

void Client::check_element(const Handle& h, ir::Scalar element, const char* what) {
  std::optional<ir::Scalar> held = h.element();
  if (!held || *held == element) return;
  if (*held == ir::Scalar::Bool && element == ir::Scalar::U8) return;
  throw Error("handle.type_mismatch", std::string(what) + " of " + std::string(cpp_element_name(element)) +
                                          " elements from a handle that holds " + std::string(cpp_element_name(*held)) +
                                          " elements; " + what + "<" + std::string(cpp_element_name(*held)) +
                                          "> it, or reinterpret the bytes with view_as<" +
                                          std::string(cpp_element_name(element)) + ">()");
}

Handle Client::upload(const std::vector<bool>& data) const {
  std::vector<uint8_t> bytes(data.begin(), data.end());
  return upload(bytes).view_as<bool>();
}

void Client::write(const Handle& h, const std::vector<bool>& data) const {
  write(h, std::vector<uint8_t>(data.begin(), data.end()));
}

Handle Client::upload_bytes(const void* data, size_t bytes) const {
  Handle h = empty_bytes(bytes);
  state_->device->backend->copy_to_device(*state_->stream, h.address(), data, bytes);
  return h;
}

static void check_own(const Client& c, const Handle& h, const char* what) {
  if (!h.valid()) throw Error("handle.invalid", std::string(what) + " of an empty handle");
  if (h.allocation()->client_id != c.id()) {
    throw Error("launch.foreign_handle", std::string(what) + " of a handle that belongs to another client (client " +
                                             std::to_string(h.allocation()->client_id) + ", not " +
                                             std::to_string(c.id()) + "); copy it through the host first");
  }
}

void Client::read_bytes(const Handle& h, void* out, size_t bytes) const {
  check_own(*this, h, "read");
  if (bytes > h.size_in_used()) {
    throw Error("handle.bad_offset", "read of " + std::to_string(bytes) + " bytes from a handle showing " +
                                         std::to_string(h.size_in_used()));
  }
  auto& b = *state_->device->backend;
  b.copy_to_host(*state_->stream, out, h.address(), bytes);
  b.sync(*state_->stream);
  if (state_->error_expected.load(std::memory_order_acquire)) check_device_error();
}

void Client::write_bytes(const Handle& h, const void* data, size_t bytes) const {
  check_own(*this, h, "write");
  if (bytes > h.size_in_used()) {
    throw Error("handle.bad_offset",
                "write of " + std::to_string(bytes) + " bytes to a handle showing " + std::to_string(h.size_in_used()));
  }
  state_->device->backend->copy_to_device(*state_->stream, h.address(), data, bytes);
}

void Client::sync() const {
  // Work held back above runs first; if some of it fails, what was launched is still waited for
  // (and its device errors checked) before that error is thrown.
  std::exception_ptr deferred;
  try {
    runtime::run_deferred(state_->id);
  } catch (...) {
    deferred = std::current_exception();
  }
  state_->device->backend->sync(*state_->stream);
  if (state_->error_expected.load(std::memory_order_acquire)) check_device_error();
  if (deferred) std::rethrow_exception(deferred);
}

namespace {
std::mutex& sites_mutex() {
  static std::mutex m;
  return m;
}
std::vector<Client::DeviceErrorSite>& sites() {
  static auto* s = new std::vector<Client::DeviceErrorSite>();  // lives to exit: a client may check at teardown
  return *s;
}
}  // namespace

uint32_t Client::register_device_error_site(DeviceErrorSite site) {
  std::lock_guard<std::mutex> lock(sites_mutex());
  sites().push_back(std::move(site));
  return uint32_t(sites().size());  // codes start at 1: 0 is "no error"
}

const Handle& Client::device_error_word() const {
  std::lock_guard<std::mutex> lock(state_->error_mutex);
  if (!state_->error_word.valid()) {
    std::array<uint32_t, 1 + kDeviceErrorValues> zeros{};
    state_->error_word = upload(std::span<const uint32_t>(zeros));
  }
  return state_->error_word;
}

void Client::expect_device_error() const {
  // The CPU's launches have run: its error, if any, is in the word now.
  if (runtime_name() == "cpu") return check_device_error();
  state_->error_expected.store(true, std::memory_order_release);
}

void Client::check_device_error() const {
  Handle word;
  {
    std::lock_guard<std::mutex> lock(state_->error_mutex);
    word = state_->error_word;
  }
  if (!word.valid()) return;
  std::array<uint32_t, 1 + kDeviceErrorValues> got{};
  auto& b = *state_->device->backend;
  b.copy_to_host(*state_->stream, got.data(), word.address(), sizeof got);
  b.sync(*state_->stream);
  state_->error_expected.store(false, std::memory_order_release);  // after the copy: a failed one checks again
  if (got[0] == 0) return;
  // Cleared before it is raised: the error is reported once, and later kernels run again.
  std::array<uint32_t, 1 + kDeviceErrorValues> zeros{};
  b.copy_to_device(*state_->stream, word.address(), zeros.data(), sizeof zeros);
  b.sync(*state_->stream);
  DeviceErrorSite site;
  {
    std::lock_guard<std::mutex> lock(sites_mutex());
    if (got[0] > sites().size())
      throw Error("device.error_word",
                  "a kernel recorded device error code " + std::to_string(got[0]) + ", which no site registered");
    site = sites()[got[0] - 1];
  }
  std::array<uint32_t, kDeviceErrorValues> values{};
  std::copy(got.begin() + 1, got.end(), values.begin());
  throw Error(site.kind, site.describe(values));
}

ClientStats Client::stats() const {
  ClientStats s;
  const runtime::KernelCache& cache = state_->device->cache;
  s.compilations = cache.compilations();
  s.launches = cache.launches();
  s.launches_by_kernel = cache.launches_by_kernel();
  s.memory = state_->memory->stats();
  return s;
}

}  // namespace kiln
