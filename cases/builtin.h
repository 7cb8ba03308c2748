// The built-in catalogue: the embedded case scripts plus the C++ cases, sorted by area.
#pragma once

#include "suite/engine/catalogue.h"

namespace roceconf::cases {

const engine::Catalogue& builtin_catalogue();

// C++ cases (cases/cpp/*.cc), one registration function per file.
void add_cm_cpp_cases(engine::Catalogue& catalogue);
void add_psn_cpp_cases(engine::Catalogue& catalogue);
void add_qp_cpp_cases(engine::Catalogue& catalogue);

}  // namespace roceconf::cases
