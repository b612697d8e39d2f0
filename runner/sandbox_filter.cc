// The seccomp program of a confined child (runner/sandbox.h says what it refuses and why).
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "runner/sandbox.h"
#include "runner/sandbox_internal.h"

namespace yolo::runner {

namespace {


struct Bpf {
  std::vector<sock_filter> p;
  void ld_nr() { p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr))); }
  void ld_arg_lo(int i) {
    p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<unsigned>(offsetof(seccomp_data, args) + 8 * i)));
  }
  void ret(unsigned v) { p.push_back(BPF_STMT(BPF_RET | BPF_K, v)); }
  // When A == nr, the block (which always returns) runs; else it is jumped over.
  void on(long nr, const std::vector<sock_filter>& block) {
    p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(nr), 0, static_cast<unsigned char>(block.size())));
    p.insert(p.end(), block.begin(), block.end());
  }
};

constexpr unsigned kProbeMagic = 0x796f6c6f;  // getcpu's unused third argument, "yolo"
constexpr unsigned ret_errno(int e) { return SECCOMP_RET_ERRNO | (static_cast<unsigned>(e) & SECCOMP_RET_DATA); }

}  // namespace

std::vector<sock_filter> sandbox_detail::seccomp_program(bool unix_sockets, bool notify, bool watch_writes,
                                                         bool watch_sockets) {
  Bpf b;
#if defined(__x86_64__)
  constexpr unsigned arch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
  constexpr unsigned arch = AUDIT_ARCH_AARCH64;
#else
  constexpr unsigned arch = 0;
#endif
  b.p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  b.p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, arch, 1, 0));
  b.ret(ret_errno(EPERM));  // another system call table (i386 on x86-64): nothing
  b.ld_nr();
#if defined(__x86_64__)
  b.p.push_back(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));  // the x32 table
  b.ret(ret_errno(EPERM));
#endif
  const unsigned eperm = ret_errno(EPERM);
  if (notify && watch_writes) {
    // Writes go to yolo's supervisor, which lets each go on to the kernel and names those
    // the policy refuses as attempts (runner/refusals.h). An open for reading stays here.
    const unsigned intent = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC;
    auto on_open = [&](long nr, int flags_arg) {
      b.on(nr, {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<unsigned>(offsetof(seccomp_data, args) + 8 * flags_arg)),
                BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, intent, 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)});
    };
    on_open(SYS_openat, 2);
#ifdef SYS_open
    on_open(SYS_open, 1);
#endif
    const long writes[] = {SYS_openat2,  SYS_truncate, SYS_unlinkat, SYS_mkdirat, SYS_mknodat, SYS_renameat2,
                           SYS_linkat,   SYS_symlinkat,
#ifdef SYS_renameat
                           SYS_renameat,
#endif
#ifdef SYS_open
                           SYS_creat,    SYS_unlink,   SYS_rmdir,    SYS_mkdir,   SYS_mknod,   SYS_rename,
                           SYS_link,     SYS_symlink,
#endif
    };
    for (long nr : writes) b.on(nr, {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF)});
  }
  if (notify && unix_sockets && watch_sockets) {
    // A role allowed UNIX sockets reaches them by path wherever they lie (Landlock cannot scope
    // them): connections go to yolo's supervisor, which refuses and names one to the person's
    // agents or into a hidden folder, and lets every other one go on. A sendto without an
    // address (the common case, on a connected socket) stays here.
    b.on(SYS_connect, {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF)});
    b.on(SYS_sendto, {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<unsigned>(offsetof(seccomp_data, args) + 8 * 4)),
                      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3),
                      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<unsigned>(offsetof(seccomp_data, args) + 8 * 4 + 4)),
                      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF)});
  }
  // What only an escape attempt asks: handed to yolo's supervisor, which names it in the
  // plan's or review's finding and answers EPERM (runner/refusals.h); silent without one.
  const unsigned refuse = notify ? SECCOMP_RET_USER_NOTIF : eperm;
  const long attempts[] = {
      // ptrace and process_vm_* are left to Landlock, which refuses them towards any process
      // outside the child's own domain (yolo, the person's processes, other children); inside
      // it they stay (a sanitizer's leak check traces its own threads).
      SYS_unshare,      SYS_setns,       SYS_mount,         SYS_umount2,        SYS_pivot_root,    SYS_chroot,
      SYS_bpf,          SYS_init_module, SYS_finit_module,  SYS_delete_module,  SYS_kexec_load,    SYS_reboot,
      SYS_swapon,       SYS_swapoff,     SYS_open_by_handle_at, SYS_open_tree,  SYS_move_mount,    SYS_fsopen,
      SYS_fsconfig,     SYS_fsmount,     SYS_fspick,        SYS_pidfd_getfd,
#ifdef SYS_mount_setattr
      SYS_mount_setattr,
#endif
#ifdef SYS_kexec_file_load
      SYS_kexec_file_load,
#endif
  };
  // What programs probe for (libuv tries io_uring, runtimes the key rings): refused silently.
  const long probes[] = {SYS_perf_event_open, SYS_keyctl,          SYS_add_key,           SYS_request_key,
                         SYS_io_uring_setup,  SYS_io_uring_enter,  SYS_io_uring_register, SYS_userfaultfd,
                         SYS_name_to_handle_at, SYS_kcmp};
  for (long nr : attempts) b.on(nr, {BPF_STMT(BPF_RET | BPF_K, refuse)});
  for (long nr : probes) b.on(nr, {BPF_STMT(BPF_RET | BPF_K, eperm)});
  constexpr unsigned ns_flags = CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWUTS |
                                CLONE_NEWIPC | CLONE_NEWCGROUP;
  b.on(SYS_clone, {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<unsigned>(offsetof(seccomp_data, args))),
                   BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, ns_flags, 0, 1), BPF_STMT(BPF_RET | BPF_K, refuse),
                   BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)});
  // clone3's flags lie behind a pointer the filter cannot read: it answers ENOSYS, so that
  // libc falls back to clone, whose flags it reads. With a supervisor, the call is handed
  // over first, so that one asking for a namespace is named; the answer is ENOSYS all the same.
  b.on(SYS_clone3, {BPF_STMT(BPF_RET | BPF_K, notify ? SECCOMP_RET_USER_NOTIF : ret_errno(ENOSYS))});
  // ioctl's request is an unsigned int in the kernel: only the low half counts.
  b.on(SYS_ioctl, {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<unsigned>(offsetof(seccomp_data, args) + 8)),
                   BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCSTI, 2, 0),
                   BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCLINUX, 1, 0), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                   BPF_STMT(BPF_RET | BPF_K, refuse)});
  if (!unix_sockets)
    b.on(SYS_socket, {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<unsigned>(offsetof(seccomp_data, args))),
                      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1), BPF_STMT(BPF_RET | BPF_K, ret_errno(EACCES)),
                      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)});
  b.on(SYS_getcpu, {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<unsigned>(offsetof(seccomp_data, args) + 16)),
                    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kProbeMagic, 0, 1),
                    BPF_STMT(BPF_RET | BPF_K, ret_errno(ENOTRECOVERABLE)),
                    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)});
  b.ret(SECCOMP_RET_ALLOW);
  return b.p;
}

bool inside_sandbox() {
  long r = ::syscall(SYS_getcpu, nullptr, nullptr, reinterpret_cast<void*>(static_cast<uintptr_t>(kProbeMagic)));
  return r < 0 && errno == ENOTRECOVERABLE;
}

}  // namespace yolo::runner
