# The engine's remote targets: the reference daemon on a veth lab, a real device through a raw
# interface (with its profile), and the control-API client they share.
add_library(roceconf_engine_targets STATIC
  ${CMAKE_CURRENT_LIST_DIR}/control_client.cc
  ${CMAKE_CURRENT_LIST_DIR}/daemon_target.cc
  ${CMAKE_CURRENT_LIST_DIR}/profile.cc
  ${CMAKE_CURRENT_LIST_DIR}/raw_target.cc
  ${CMAKE_CURRENT_LIST_DIR}/veth_lab.cc)
target_include_directories(roceconf_engine_targets PUBLIC ${PROJECT_SOURCE_DIR})
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/daemon_target.cc PROPERTIES
  COMPILE_DEFINITIONS ROCECONF_VERSION="${PROJECT_VERSION}")
# roceconf_target for the address text forms (parse_mac, format_ipv4, ...).
target_link_libraries(roceconf_engine_targets
  PUBLIC roceconf_control roceconf_ports nlohmann_json::nlohmann_json fmt::fmt
  PRIVATE roceconf_target roceconf_warnings)
