// Approvals signed with a person's SSH key, that travel with the project (docs/trust.md):
// when the project commits `.yolo-planning/allowed_signers` (OpenSSH's format; the
// `namespaces="yolo-vision,yolo-wave"` option says which gate types a key may approve),
// `yolo approve` signs the approval with `ssh-keygen -Y sign` (the key from
// `git config user.signingkey`, as for signed commits; namespace yolo-<gate_type>) and every
// check verifies it with `ssh-keygen -Y verify` against a trust root an agent cannot write:
// the person's own allowed-signers file, or the project's file as a vision approval pinned
// it. The signed payload binds the gate id and type, its file, everything it covers, the
// run and the project's first commit, so it verifies in any clone and nowhere else.
#pragma once
#include <filesystem>
#include <string>

#include "protocol/base/json.h"
#include "protocol/gates/gate_run.h"
#include "protocol/ports/world.h"

namespace yolo::runner {

std::filesystem::path allowed_signers_path(const std::filesystem::path& root);

// The canonical text an approval's signature covers.
std::string signed_payload(const std::filesystem::path& root, const json& gate);

// Signs an APPROVED gate: the armored signature, or empty with err set.
std::string sign_approval(const std::filesystem::path& root, const json& gate, std::string& err);

// The person's own allowed-signers file: git's gpg.ssh.allowedSignersFile from the global
// configuration (never the repository's .git/config); empty when not set.
std::string person_signers_path(const std::filesystem::path& root);

// "" when gate["ssh_signature"] verifies for its gate type against a trust root: the person's
// allowed-signers file, and the project's .yolo-planning/allowed_signers only when
// `project_file` (its content was pinned by an approval made under another root); else why.
std::string verify_approval(const std::filesystem::path& root, const json& gate, bool project_file);

// The check protocol/ asks through World::signatures: a project requires signatures when it
// has an allowed_signers file; verify_approval says whether one verifies.
const SignatureVerifier& ssh_signatures();
// The person's SSH key signing their approval (sign_approval), when the project has
// .yolo-planning/allowed_signers.
const gates::ApprovalSigner& ssh_signer();

}  // namespace yolo::runner
