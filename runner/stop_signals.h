// SIGINT and SIGTERM on a libuv loop (`yolo execute`'s wave loop): each calls the handler
// given with its number. The handles do not keep the loop alive; close() stops them and
// closes them (the loop's next run finishes closing), and is called before they go.
#pragma once
#include <signal.h>
#include <uv.h>

#include <functional>
#include <utility>

namespace yolo::runner {

class StopSignals {
 public:
  StopSignals() = default;
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  void start(uv_loop_t* loop, std::function<void(int)> on_signal) {
    on_ = std::move(on_signal);
    for (uv_signal_t* h : {&int_, &term_}) {
      uv_signal_init(loop, h);
      h->data = this;
    }
    auto call = [](uv_signal_t* h, int signum) { static_cast<StopSignals*>(h->data)->on_(signum); };
    uv_signal_start(&int_, call, SIGINT);
    uv_signal_start(&term_, call, SIGTERM);
    uv_unref(reinterpret_cast<uv_handle_t*>(&int_));
    uv_unref(reinterpret_cast<uv_handle_t*>(&term_));
  }
  void close() {
    for (uv_signal_t* h : {&int_, &term_}) {
      uv_signal_stop(h);
      uv_close(reinterpret_cast<uv_handle_t*>(h), nullptr);
    }
  }

 private:
  uv_signal_t int_{}, term_{};
  std::function<void(int)> on_;
};

}  // namespace yolo::runner
