// A fixed pool of host threads for running cubes in parallel. The calling thread takes part, so a
// launch of one cube never crosses threads.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::cpu {

class ThreadPool {
 public:
  explicit ThreadPool(unsigned workers);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return unsigned(threads_.size()) + 1; }

  // A borrowed callable: unlike std::function, making one from a capturing lambda allocates
  // nothing (launches go through here).
  struct Body {
    void* object;
    void (*call)(void* object, unsigned worker);
    void operator()(unsigned worker) const { call(object, worker); }
  };
  template <class F>
  static Body body_of(F& f) {
    return Body{&f, [](void* o, unsigned w) { (*static_cast<F*>(o))(w); }};
  }

  // Runs body(worker) on up to `parallelism` threads (the caller is worker 0) and returns when
  // all have returned. One parallel region at a time; concurrent callers wait their turn.
  void run(unsigned parallelism, Body body);

 private:
  void loop(unsigned index);

  std::vector<std::thread> threads_;
  std::mutex run_mutex_;  // one parallel region at a time
  std::mutex m_;
  std::condition_variable wake_, done_;
  Body body_{nullptr, nullptr};
  uint64_t generation_ = 0;
  unsigned wanted_ = 0;   // workers (excluding the caller) asked to take part in this generation
  unsigned started_ = 0;  // workers that picked the generation up
  unsigned finished_ = 0;
  bool stop_ = false;
};

}  // namespace kiln::cpu
