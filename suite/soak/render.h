// The soak's oracle: renders operations (plan.h) as case-script lines (cases/README.md) that say
// exactly what the target must answer. It keeps a model of every connection: the next PSN and
// MSN on each side, each byte of the data area and each atomic word, the receives posted, the
// last requests (what a duplicate must get back). READs expect the model's bytes, atomics the
// model's original value, SENDs their receive completions, duplicates an ACK of the last PSN and
// no second execution, gaps one NAK. Rendering a subsequence gives a consistent script too.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "suite/soak/plan.h"

namespace roceconf::soak {

struct Rendered {
  std::string text;           // a whole case script
  std::vector<int> line_op;   // per line of `text` (line 1 at index 0): its op's index, or -1
  std::uint64_t payload = 0;  // bytes of data the operations move (for throughput)
  // Per op, as its batch starts: receives posted on the target's QPs and not yet consumed (the
  // model's count; control QPs only), and connections with a PSN gap not yet filled.
  std::vector<std::uint32_t> receives_posted, gaps_open;
};

struct Header {
  std::string title;                     // the first comment line
  std::vector<std::string> description;  // further comment lines
};

// The script for `ops` over `layout` (connection i is named c<i>).
Rendered render(const Layout& layout, const std::vector<Op>& ops, const Header& header);

// The op index of a failing step "PATH:LINE text" in `rendered`, or -1.
int op_of_step(const Rendered& rendered, const std::string& failed_step);

}  // namespace roceconf::soak
