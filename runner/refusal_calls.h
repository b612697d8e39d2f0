// What a call that a confined child's seccomp filter handed to yolo's supervisor asked, as a
// person reads it: the call and its flags, the process, and for a write the path it names,
// resolved as the child sees it and judged with its policy (runner/refusals.h).
#pragma once
#include <linux/seccomp.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "protocol/run/sandbox_policy.h"

namespace yolo::runner::refusal_calls {

// "CLONE_NEWUSER|CLONE_NEWNS": the namespace flags among f, "" when none.
std::string clone_flags(unsigned long long f);
// "unshare(CLONE_NEWUSER)", "ioctl(TIOCSTI) on a terminal", "mount": an escape attempt's call.
std::string call_text(const seccomp_data& d);
// "sh (pid 12)": the process by the name it gives itself (plain characters only) and its pid.
std::string process_text(unsigned pid);
// Whether the call writes a path (the filter hands those over to be judged, not refused).
bool is_write_call(long nr);
// The attempts among the paths a write call names, each "writing .git/config by sh (pid 12)".
// What the caller's memory said is used only if `still_valid` says, after it was read, that the
// call is still the one handed over.
// Whether the call connects or sends to an address (handed over for a role allowed UNIX sockets).
bool is_socket_call(long nr);
// "connecting to /run/user/1/ssh-agent.sock by ssh-add (pid 12)" when the call names a UNIX
// socket by path that the view refuses, "" otherwise (another family, an abstract or unnamed
// address, or a caller that is no longer the one handed over).
std::string connect_attempt(const seccomp_notif& req, const sandbox::SocketView& view,
                            const std::function<bool()>& still_valid);
// Tests stand in for a path on a hung mount with this: the walk of any path whose text holds
// `marker` takes `delay` longer. Empty: none (the default).
void stall_walks_for_tests(std::string marker, std::chrono::milliseconds delay);

std::vector<std::string> write_attempts(const seccomp_notif& req, const sandbox::WriteView& view,
                                        const std::function<bool()>& still_valid);

}  // namespace yolo::runner::refusal_calls
