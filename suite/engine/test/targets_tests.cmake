# Tests of the engine's remote targets. The daemon tests run the roceconf executable.
add_executable(engine_targets_test ${CMAKE_CURRENT_LIST_DIR}/targets_test.cc)
target_link_libraries(engine_targets_test
  PRIVATE roceconf_engine_targets roceconf_target roceconf_target_daemon GTest::gtest_main
          roceconf_warnings)
target_compile_definitions(engine_targets_test PRIVATE ROCECONF_BINARY="$<TARGET_FILE:roceconf>")
add_dependencies(engine_targets_test roceconf)
gtest_discover_tests(engine_targets_test DISCOVERY_TIMEOUT 60)
