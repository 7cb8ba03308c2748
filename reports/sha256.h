// SHA-256 through OpenSSL's libcrypto: the catalogue digest, the profile and the evidence
// capture named in a certificate (check a capture with `sha256sum evidence.pcapng`).
#pragma once

#include <expected>
#include <string>
#include <string_view>

namespace roceconf::report {

// Incremental: add() pieces, then hex() (64 lowercase hex digits). Not reusable after hex().
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void add(std::string_view bytes);
  std::string hex();

 private:
  void* ctx_;  // EVP_MD_CTX
};

std::string sha256_hex(std::string_view bytes);

// The file's digest; the error is one line naming the path.
std::expected<std::string, std::string> sha256_file(const std::string& path);

}  // namespace roceconf::report
