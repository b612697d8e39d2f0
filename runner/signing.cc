#include "runner/signing.h"

#include <unistd.h>

#include <cstdlib>
#include <random>

#include "protocol/fs.h"
#include "protocol/text.h"
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
    fs::write_atomic(path, content);
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

std::string verify_approval(const stdfs::path& root, const json& gate) {
  std::string sig = str(gate, "ssh_signature");
  if (sig.empty()) return "it carries no SSH signature";
  stdfs::path allowed = allowed_signers_path(root);
  std::error_code ec;
  if (!stdfs::exists(allowed, ec)) return "there is no " + allowed.string() + " to verify its SSH signature against";
  TempFile sigfile(sig);
  auto who = run(root, {"ssh-keygen", "-Y", "find-principals", "-s", sigfile.path, "-f", allowed.string()});
  if (!who.ok()) return "its signing key is not in .yolo-planning/allowed_signers";
  std::string payload = signed_payload(root, gate);
  for (auto line : text::lines(who.out)) {
    std::string principal(text::trim(line));
    if (principal.empty()) continue;
    auto v = run(
        root,
        {"ssh-keygen", "-Y", "verify", "-f", allowed.string(), "-I", principal, "-n", ns_for(gate), "-s", sigfile.path},
        payload);
    if (v.ok()) return {};
  }
  return "its SSH signature does not verify for a " + str(gate, "gate_type") +
         " gate (a signer not allowed for that gate type in .yolo-planning/allowed_signers, or what it signed changed)";
}

namespace {
class SshSignatures : public SignatureVerifier {
 public:
  bool required(const stdfs::path& root) const override {
    std::error_code ec;
    return stdfs::exists(allowed_signers_path(root), ec);
  }
  std::string problem(const stdfs::path& root, const json& gate) const override { return verify_approval(root, gate); }
};
}  // namespace

const SignatureVerifier& ssh_signatures() {
  static const SshSignatures s;
  return s;
}

}  // namespace yolo::runner
