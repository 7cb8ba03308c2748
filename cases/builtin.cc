#include "cases/builtin.h"

#include <fmt/format.h>

#include "cases/embedded.h"
#include "reports/sha256.h"
#include "suite/engine/script.h"

namespace roceconf::cases {

const engine::Catalogue& builtin_catalogue() {
  static const engine::Catalogue catalogue = [] {
    engine::Catalogue c;
    for (const auto& file : embedded_scripts())
      c.add(engine::load_script(std::string(file.path), std::string(file.text)));
    add_cm_cpp_cases(c);
    add_header_cpp_cases(c);
    add_psn_cpp_cases(c);
    add_qp_cpp_cases(c);
    add_verbs_cpp_cases(c);
    add_ud_cpp_cases(c);
    add_mw_cpp_cases(c);
    add_ipv6_cpp_cases(c);
    add_cc_cpp_cases(c);
    add_sec_cpp_cases(c);
    c.sort();
    return c;
  }();
  return catalogue;
}

std::string catalogue_digest(const engine::Catalogue& catalogue) {
  report::Sha256 h;
  // Each field length-prefixed, so no two catalogues hash the same bytes.
  const auto field = [&](std::string_view text) {
    h.add(fmt::format("{}:", text.size()));
    h.add(text);
  };
  for (const auto& c : catalogue.cases()) {
    std::string_view text;
    for (const auto& file : embedded_scripts())
      if (file.path == c.source) text = file.text;
    for (std::string_view f :
         {std::string_view(c.id), std::string_view(c.requirement), std::string_view(c.clause),
          std::string_view(c.title), std::string_view(c.source), text})
      field(f);
  }
  return h.hex();
}

}  // namespace roceconf::cases
