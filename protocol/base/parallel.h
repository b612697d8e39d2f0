// f(0) ... f(n - 1) spread over the machine's cores: the one pool of protocol/ for work
// whose items are independent (a phase's Stage 1, the overview's rows).
#pragma once
#include <cstddef>
#include <functional>

namespace yolo {

// Runs f for every index in [0, n), on up to the machine's cores (at most 8) when there are
// enough items to be worth a thread (8 a thread), else on the calling thread. Returns once
// every call has ended; the first exception thrown by f is rethrown here (the items not
// started yet are then skipped).
void parallel_for(size_t n, const std::function<void(size_t)>& f);

}  // namespace yolo
