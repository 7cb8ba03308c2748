# The pcapng evidence writer: the result model (reports/) written through the capture library's
# pcapng writer, with the frame comment of dissector/evidence_comment.h. Included from
# suite/engine/CMakeLists.txt.
add_library(roceconf_evidence STATIC ${CMAKE_CURRENT_LIST_DIR}/evidence.cc)
target_include_directories(roceconf_evidence PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(roceconf_evidence PUBLIC roceconf_reports roceconf_ports
                      PRIVATE roceconf_dissector fmt::fmt roceconf_warnings)
set_target_properties(roceconf_evidence PROPERTIES POSITION_INDEPENDENT_CODE ON)
