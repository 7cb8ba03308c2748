// QP and CQ cases driven through the control API.
#include <fmt/format.h>

#include "cases/builtin.h"

namespace roceconf::cases {

void add_qp_cpp_cases(engine::Catalogue& catalogue) { (void)catalogue; }

}  // namespace roceconf::cases
