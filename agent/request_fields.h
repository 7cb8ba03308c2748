// The agent reads control requests with the reference target's rules and messages.
#pragma once

#include "suite/reference_nic/control_fields.h"

namespace roceconf::agent {

using target::fail;
using target::Fields;
using target::RequestError;
using target::shown;
using target::to_hex;

}  // namespace roceconf::agent
