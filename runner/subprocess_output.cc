// The child's output: its stdout and stderr pipes read on the loop into capped buffers and cut
// into lines for SpawnSpec::on_line, and the drain deadline for pipes an escaped grandchild
// still holds after the child has exited. Apart from subprocess_exit.cc because output and
// exit finish independently and meet only in maybe_finish.
#include <string_view>

#include "runner/subprocess_impl.h"

namespace yolo::runner {

void Process::Impl::append_capped(std::string& buf, size_t& total, const char* data, size_t n, size_t cap) {
  total += n;
  buf.append(data, n);
  if (buf.size() > 2 * cap + 65536) buf.erase(0, buf.size() - cap);
}

// One buffer per thread for every read: libuv calls alloc, read(2) and on_read in one go,
// and on_read copies what it got before any callback runs (a fresh 64 KiB per read was an
// allocation and page faults per executor output event).
void Process::Impl::on_alloc(uv_handle_t*, size_t, uv_buf_t* buf) {
  static thread_local char space[64 * 1024];
  buf->base = space;
  buf->len = sizeof space;
}

// Hands complete lines of stream `which` to spec.on_line; at_end: the rest too.
void Process::Impl::emit_lines(int which, const char* data, size_t n, bool at_end) {
  if (!spec.on_line) return;
  constexpr size_t kMaxLine = 64 * 1024;
  auto stream = which == 0 ? SpawnSpec::Stream::Out : SpawnSpec::Stream::Err;
  std::string& buf = partial[which];
  if (n > 0) buf.append(data, n);
  size_t start = 0;
  for (size_t nl; (nl = buf.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string_view line = std::string_view(buf).substr(start, nl - start);
    for (; line.size() > kMaxLine; line.remove_prefix(kMaxLine)) spec.on_line(stream, line.substr(0, kMaxLine));
    spec.on_line(stream, line);
  }
  buf.erase(0, start);
  while (buf.size() > kMaxLine) {
    spec.on_line(stream, std::string_view(buf).substr(0, kMaxLine));
    buf.erase(0, kMaxLine);
  }
  if (at_end && !buf.empty()) {
    spec.on_line(stream, buf);
    buf.clear();
  }
}

void Process::Impl::on_read(uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
  auto* self = static_cast<Impl*>(s->data);
  bool is_out = s == reinterpret_cast<uv_stream_t*>(&self->out_pipe);
  if (n > 0) {  // copied first: on_line's callbacks may run a loop of their own on this thread
    if (is_out)
      append_capped(self->result.out, self->result.out_total, buf->base, static_cast<size_t>(n), self->spec.output_cap);
    else
      append_capped(self->result.err, self->result.err_total, buf->base, static_cast<size_t>(n), self->spec.output_cap);
  }
  if (n > 0) self->emit_lines(is_out ? 0 : 1, buf->base, static_cast<size_t>(n), false);
  if (n < 0) self->emit_lines(is_out ? 0 : 1, nullptr, 0, true);
  if (n < 0) {
    (is_out ? self->out_eof : self->err_eof) = true;
    self->close_handle(reinterpret_cast<uv_handle_t*>(s));
    self->maybe_finish();
  }
}

// The child is gone but something still holds its pipes: look for escaped orphans once
// more, then stop reading.
void Process::Impl::drain_deadline() {
  keeper::sweep();
  result.drain_cut = true;
  for (uv_pipe_t* pp : {&out_pipe, &err_pipe}) {
    bool& eof = pp == &out_pipe ? out_eof : err_eof;
    if (eof) continue;
    eof = true;
    emit_lines(pp == &out_pipe ? 0 : 1, nullptr, 0, true);
    uv_read_stop(reinterpret_cast<uv_stream_t*>(pp));
    close_handle(reinterpret_cast<uv_handle_t*>(pp));
  }
  maybe_finish();
}

}  // namespace yolo::runner
