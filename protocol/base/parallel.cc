#include "protocol/base/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace yolo {

void parallel_for(size_t n, const std::function<void(size_t)>& f) {
  constexpr size_t kPerThread = 8;  // fewer items than this per thread: not worth starting one
  size_t threads = std::min<size_t>({std::max(1u, std::thread::hardware_concurrency()), 8, n / kPerThread});
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) f(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex error_m;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        f(i);
      } catch (...) {
        std::lock_guard<std::mutex> g(error_m);
        if (!error) error = std::current_exception();
        next = n;
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace yolo
