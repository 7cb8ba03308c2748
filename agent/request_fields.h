// The agent reads control requests with the shared request reader and field lists (control/), so
// its rules, messages and fields are the reference target's.
#pragma once

#include "control/fields.h"
#include "control/ops.h"

namespace roceconf::agent {

using control::fail;
using control::Fields;
using control::RequestError;
using control::shown;
using control::to_hex;
namespace keys = control::keys;

}  // namespace roceconf::agent
