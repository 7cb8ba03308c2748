# What the reference target and roceconf-agent share, and all the agent needs of this tree: the
# control API's request reader, the RCNF REP private data, and control-connection
# authentication (OpenSSL libcrypto). Included by suite/reference_nic/CMakeLists.txt, and by the top
# level alone in the agent-only build (ROCECONF_AGENT_ONLY), so it names its sources in full.
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
add_library(roceconf_control_common STATIC
  ${PROJECT_SOURCE_DIR}/suite/reference_nic/control_auth.cc
  ${PROJECT_SOURCE_DIR}/suite/reference_nic/control_fields.cc
  ${PROJECT_SOURCE_DIR}/suite/reference_nic/rcnf_private_data.cc)
target_include_directories(roceconf_control_common PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(roceconf_control_common
  PUBLIC nlohmann_json::nlohmann_json fmt::fmt PRIVATE OpenSSL::Crypto roceconf_warnings)
# The Python module links the reference target into a shared object.
set_target_properties(roceconf_control_common PROPERTIES POSITION_INDEPENDENT_CODE ON)
