// The CPU backend's thread pool.
#include "backends/cpu/thread_pool.h"

#include <exception>

namespace kiln::cpu {

ThreadPool::ThreadPool(unsigned workers) {
  for (unsigned i = 0; i < workers; ++i) threads_.emplace_back([this, i] { loop(i + 1); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(m_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ThreadPool::loop(unsigned index) {
  uint64_t seen = 0;
  while (true) {
    Body body;
    {
      std::unique_lock lock(m_);
      wake_.wait(lock, [&] { return stop_ || (generation_ != seen && index <= wanted_); });
      if (stop_) return;
      seen = generation_;
      body = body_;
      ++started_;
    }
    body(index);
    {
      std::lock_guard lock(m_);
      ++finished_;
    }
    done_.notify_one();
  }
}

void ThreadPool::run(unsigned parallelism, Body body) {
  unsigned helpers = parallelism > 1 ? std::min<unsigned>(parallelism - 1, unsigned(threads_.size())) : 0;
  if (helpers == 0) {
    body(0);
    return;
  }
  std::lock_guard region(run_mutex_);
  {
    std::lock_guard lock(m_);
    body_ = body;
    wanted_ = helpers;
    started_ = 0;
    finished_ = 0;
    ++generation_;
  }
  wake_.notify_all();
  std::exception_ptr caller_error;
  try {
    body(0);
  } catch (...) {
    caller_error = std::current_exception();  // rethrown once the workers that started are done
  }
  // Workers that have not picked the work up by now are not waited for: on a loaded machine a
  // descheduled worker would otherwise hold the launch for a whole time slice. The body hands
  // out work through its own counter, so the caller has done whatever they did not.
  std::unique_lock lock(m_);
  wanted_ = started_;
  done_.wait(lock, [&] { return finished_ == started_; });
  wanted_ = 0;
  if (caller_error) std::rethrow_exception(caller_error);
}

}  // namespace kiln::cpu
