#include "cases/builtin.h"

#include "cases/embedded.h"
#include "suite/engine/script.h"

namespace roceconf::cases {

const engine::Catalogue& builtin_catalogue() {
  static const engine::Catalogue catalogue = [] {
    engine::Catalogue c;
    for (const auto& file : embedded_scripts())
      c.add(engine::load_script(std::string(file.path), std::string(file.text)));
    add_cm_cpp_cases(c);
    add_psn_cpp_cases(c);
    add_qp_cpp_cases(c);
    c.sort();
    return c;
  }();
  return catalogue;
}

}  // namespace roceconf::cases
