// Protection domains (IBA Vol 1 ch. 10, ibv_alloc_pd(3)): the object that ties memory regions to
// the QPs allowed to use them. A QP may only reach an MR of its own PD (R_Key and L_Key checks
// compare PDs, spec-facts §4.6), and a PD cannot be freed while MRs or QPs still point at it.
#pragma once

#include <cstdint>

namespace roceconf::target {

struct Pd {
  std::uint32_t handle = 0;
  std::uint32_t mr_count = 0;  // MRs registered in this PD
  std::uint32_t qp_count = 0;  // QPs created in this PD
  bool in_use() const { return mr_count != 0 || qp_count != 0; }
};

}  // namespace roceconf::target
