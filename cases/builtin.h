// The built-in catalogue: the embedded case scripts plus the C++ cases, sorted by area.
#pragma once

#include <string>
#include <string_view>

#include "suite/engine/catalogue.h"

namespace roceconf::cases {

// The catalogue's release, named in every certificate. Raise it when cases are added, removed,
// or change what they check; the digest below changes with any edit anyway.
inline constexpr std::string_view kCatalogueVersion = "2026.12";
// The specification the clauses cite.
inline constexpr std::string_view kSpecification = "IBA Vol 1 Release 1.2.1 + Annex A17";

// SHA-256 (hex) over every case in order: its id, level, clause, title, source, and the text of
// its script when it is an embedded .rcase (C++ and Python cases: their metadata only).
std::string catalogue_digest(const engine::Catalogue& catalogue);

const engine::Catalogue& builtin_catalogue();

// C++ cases (cases/cpp/*.cc), one registration function per file.
void add_cm_cpp_cases(engine::Catalogue& catalogue);
void add_header_cpp_cases(engine::Catalogue& catalogue);
void add_psn_cpp_cases(engine::Catalogue& catalogue);
void add_qp_cpp_cases(engine::Catalogue& catalogue);
void add_verbs_cpp_cases(engine::Catalogue& catalogue);
void add_ud_cpp_cases(engine::Catalogue& catalogue);
void add_mw_cpp_cases(engine::Catalogue& catalogue);
void add_ipv6_cpp_cases(engine::Catalogue& catalogue);
void add_cc_cpp_cases(engine::Catalogue& catalogue);
void add_sec_cpp_cases(engine::Catalogue& catalogue);

}  // namespace roceconf::cases
