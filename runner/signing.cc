#include "runner/signing.h"

#include <unistd.h>

#include <cstdlib>
#include <random>

#include "protocol/ports/fs.h"
#include "protocol/base/text.h"
#include "runner/subprocess.h"

namespace yolo::runner {

namespace stdfs = std::filesystem;

namespace {

std::string str(const json& j, const char* k) {
  auto it = j.find(k);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

SpawnResult run(const stdfs::path& cwd, std::vector<std::string> argv, const std::string& input = {}) {
  SpawnSpec s;
  s.argv = std::move(argv);
  s.cwd = cwd;
  s.stdin_data = input;
  s.timeout_ms = 20000;
  s.output_cap = 1 << 16;
  return run_process(s);
}

// The project's first commit: the same in every clone, different in another project.
std::string origin(const stdfs::path& root) {
  auto r = run(root, {"git", "rev-list", "--max-parents=0", "HEAD"});
  if (!r.ok()) return {};
  std::string first(text::trim(r.out));
  if (auto nl = first.find('\n'); nl != std::string::npos) first.resize(nl);  // several roots: git lists them in order
  return first;
}

std::string ns_for(const json& gate) { return "yolo-" + str(gate, "gate_type"); }

// A private temp file holding `content`; removed on destruction.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& content) {
    std::string dir = stdfs::temp_directory_path().string();
    path = dir + "/yolo-sig-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}());
    (void)fs::write_atomic(path, content);
  }
  ~TempFile() { ::unlink(path.c_str()); }
};

std::string signing_key(const stdfs::path& root) {
  if (const char* k = std::getenv("YOLO_SIGNING_KEY"); k && *k) return k;
  auto r = run(root, {"git", "config", "user.signingkey"});
  return r.ok() ? std::string(text::trim(r.out)) : std::string();
}

}  // namespace

stdfs::path allowed_signers_path(const stdfs::path& root) { return root / ".yolo-planning" / "allowed_signers"; }

std::string signed_payload(const stdfs::path& root, const json& gate) {
  json p = {{"v", 1},
            {"gate_id", gate.value("id", json(nullptr))},
            {"gate_type", gate.value("gate_type", json(nullptr))},
            {"plan_path", gate.value("plan_path", json(nullptr))},
            {"covers", gate.value("covers", json(nullptr))},
            {"run", gate.value("run", json(nullptr))},
            {"approved_by", gate.value("approved_by", json(nullptr))},
            {"resolved_at", gate.value("resolved_at", json(nullptr))},
            {"origin", origin(root)}};
  return "yolo-approval\n" + p.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string sign_approval(const stdfs::path& root, const json& gate, std::string& err) {
  std::string key = signing_key(root);
  if (key.empty()) {
    err = "no signing key: set git's user.signingkey to your SSH key (as for signed commits)";
    return {};
  }
  if (key.rfind("key::", 0) == 0) {
    err = "user.signingkey holds a literal key; give the path of the key file";
    return {};
  }
  if (key.rfind("~/", 0) == 0)
    if (const char* h = std::getenv("HOME")) key = std::string(h) + key.substr(1);
  auto r = run(root, {"ssh-keygen", "-Y", "sign", "-q", "-f", key, "-n", ns_for(gate)}, signed_payload(root, gate));
  if (!r.ok() || r.out.find("BEGIN SSH SIGNATURE") == std::string::npos) {
    err = "ssh-keygen -Y sign with " + key + " failed: " + r.describe() + " " + std::string(text::trim(r.err));
    return {};
  }
  return r.out;
}

namespace {
class SshSigner : public gates::ApprovalSigner {
 public:
  bool wanted(const stdfs::path& root) const override {
    std::error_code ec;
    return stdfs::exists(allowed_signers_path(root), ec);
  }
  yolo::Result<std::string> sign(const stdfs::path& root, const json& gate) const override {
    std::string err;
    std::string sig = sign_approval(root, gate, err);
    if (sig.empty()) return yolo::Status::fail(err);
    return sig;
  }
};
}  // namespace

const gates::ApprovalSigner& ssh_signer() {
  static const SshSigner s;
  return s;
}

std::string person_signers_path(const stdfs::path& root) {
  // The person's global configuration only: the repository's own .git/config is a file an
  // agent with the working tree may write. git reads $GIT_CONFIG_GLOBAL, else ~/.gitconfig
  // and the XDG file.
  auto r = run(root, {"git", "config", "--global", "--get", "gpg.ssh.allowedSignersFile"});
  if (!r.ok()) return {};
  std::string p(text::trim(r.out));
  if (p.rfind("~/", 0) == 0)
    if (const char* h = std::getenv("HOME")) p = std::string(h) + p.substr(1);
  return p;
}

namespace {
// "" when the signature verifies for a principal of `allowed`; else why not.
std::string verify_with(const stdfs::path& root, const json& gate, const std::string& allowed, const TempFile& sigfile,
                        const std::string& payload, bool& listed) {
  auto who = run(root, {"ssh-keygen", "-Y", "find-principals", "-s", sigfile.path, "-f", allowed});
  if (!who.ok()) return "not listed";
  listed = true;
  for (auto line : text::lines(who.out)) {
    std::string principal(text::trim(line));
    if (principal.empty()) continue;
    auto v = run(root,
                 {"ssh-keygen", "-Y", "verify", "-f", allowed, "-I", principal, "-n", ns_for(gate), "-s", sigfile.path},
                 payload);
    if (v.ok()) return {};
  }
  return "does not verify";
}
}  // namespace

std::string verify_approval(const stdfs::path& root, const json& gate, bool project_file) {
  std::string sig = str(gate, "ssh_signature");
  if (sig.empty()) return "it carries no SSH signature";
  std::vector<std::string> roots;
  std::error_code ec;
  if (std::string mine = person_signers_path(root); !mine.empty() && stdfs::is_regular_file(mine, ec))
    roots.push_back(mine);
  if (project_file && stdfs::is_regular_file(allowed_signers_path(root), ec))
    roots.push_back(allowed_signers_path(root).string());
  if (roots.empty())
    return "there is nothing trusted to verify its SSH signature against: .yolo-planning/allowed_signers as it is "
           "now was not pinned by a vision approval made under another root (your seal or your own signers), and "
           "git's gpg.ssh.allowedSignersFile is not set in your global git config";
  TempFile sigfile(sig);
  std::string payload = signed_payload(root, gate);
  bool listed = false;
  for (const auto& allowed : roots)
    if (verify_with(root, gate, allowed, sigfile, payload, listed).empty()) return {};
  std::string where = project_file ? "your gpg.ssh.allowedSignersFile or the pinned .yolo-planning/allowed_signers"
                                   : "your gpg.ssh.allowedSignersFile (.yolo-planning/allowed_signers as it is now was "
                                     "not pinned by a vision approval made without it, so it is not trusted)";
  if (!listed) return "its signing key is not in " + where;
  return "its SSH signature does not verify for a " + str(gate, "gate_type") + " gate (a signer not allowed for " +
         "that gate type in " + where + ", or what it signed changed)";
}

namespace {
class SshSignatures : public SignatureVerifier {
 public:
  bool required(const stdfs::path& root) const override {
    std::error_code ec;
    return stdfs::exists(allowed_signers_path(root), ec);
  }
  Status verify(const stdfs::path& root, const json& gate, bool project_file) const override {
    return Status{verify_approval(root, gate, project_file)};
  }
};
}  // namespace

const SignatureVerifier& ssh_signatures() {
  static const SshSignatures s;
  return s;
}

}  // namespace yolo::runner
