// The pool of decoy sets (runner/sandbox_internal.h): made on first need, kept for the life of
// the yolo process, one child at a time per set.
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <mutex>

#include "runner/sandbox_internal.h"

namespace yolo::runner::sandbox_detail {

namespace {

std::mutex pool_mu;
// Every set ever made, owned here: a set lives as long as the process, whether free or held
// by a child that yolo does not wait for at its exit.
std::vector<std::unique_ptr<DecoySet>> all_sets;
std::vector<DecoySet*> free_sets;
int made_sets = 0;

DecoySet* make_set(const std::vector<std::string>& secrets, const std::string& parent) {
  auto set = std::make_unique<DecoySet>();
  {
    std::lock_guard<std::mutex> g(pool_mu);
    set->dir = parent + "/decoys-" + std::to_string(++made_sets);
  }
  set->asked = secrets;
  if (::mkdir(set->dir.c_str(), 0700) != 0) return nullptr;
  set->fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (set->fd < 0) return nullptr;
  for (size_t k = 0; k < secrets.size(); ++k) {
    const std::string decoy = set->dir + "/" + std::to_string(k);
    int fd = ::open(decoy.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0400);
    if (fd < 0) continue;
    ::close(fd);
    int wd = ::inotify_add_watch(set->fd, decoy.c_str(), IN_OPEN);
    if (wd < 0) continue;
    set->secrets.push_back(secrets[k]);
    set->decoys.push_back(decoy);
    set->wds.push_back(wd);
  }
  if (set->decoys.empty()) {
    ::close(set->fd);
    return nullptr;
  }
  std::lock_guard<std::mutex> g(pool_mu);
  all_sets.push_back(std::move(set));
  return all_sets.back().get();
}

}  // namespace

void drop_queued(const DecoySet& set) {
  alignas(struct inotify_event) char buf[4096];
  while (::read(set.fd, buf, sizeof buf) > 0) {
  }
}

DecoySet* take_decoys(const std::vector<std::string>& secrets, const std::string& parent) {
  {
    std::lock_guard<std::mutex> g(pool_mu);
    for (size_t k = 0; k < free_sets.size(); ++k) {
      DecoySet* s = free_sets[k];
      struct stat st {};
      // The same secrets, and its folder still there (a child cannot remove it: it is hidden).
      if (s->asked == secrets && s->dir.rfind(parent + "/", 0) == 0 && ::stat(s->dir.c_str(), &st) == 0) {
        free_sets.erase(free_sets.begin() + static_cast<long>(k));
        drop_queued(*s);
        return s;
      }
    }
  }
  return make_set(secrets, parent);
}

void give_back(DecoySet* set) {
  if (!set) return;
  std::lock_guard<std::mutex> g(pool_mu);
  free_sets.push_back(set);
}

}  // namespace yolo::runner::sandbox_detail
