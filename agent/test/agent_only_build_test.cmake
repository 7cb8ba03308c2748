# Configures the agent-only build in WORK_DIR (configure only: it takes seconds) and checks its
# targets; then configures it with pkg-config finding nothing and expects the clear error.
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
                        -DROCECONF_AGENT_ONLY=ON
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "agent-only configure failed:\n${out}\n${err}")
endif()
if(NOT GENERATOR STREQUAL "Ninja")
  message(STATUS "target list checked with Ninja only; configure passed")
  return()
endif()
execute_process(COMMAND ninja -C ${WORK_DIR}/build -t targets all
                RESULT_VARIABLE rc OUTPUT_VARIABLE targets)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ninja -t targets failed")
endif()
# The build's products: whatever a linker rule makes.
string(REPLACE "\n" ";" lines "${targets}")
set(products)
foreach(line IN LISTS lines)
  if(line MATCHES "^([^:]+): (C|CXX)_(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY)_LINKER")
    get_filename_component(name "${CMAKE_MATCH_1}" NAME)
    list(APPEND products ${name})
  endif()
endforeach()
list(SORT products)
set(expected libroceconf_address.a libroceconf_agent.a libroceconf_control.a roceconf-agent)
if(NOT products STREQUAL expected)
  message(FATAL_ERROR "agent-only build makes [${products}], expected [${expected}]")
endif()

# Without libibverbs-dev/librdmacm-dev (pkg-config finds neither): a clear error.
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} -E env PKG_CONFIG_LIBDIR=${WORK_DIR}/none PKG_CONFIG_PATH=
                        ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
                        -DROCECONF_AGENT_ONLY=ON
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
file(REMOVE_RECURSE ${WORK_DIR})
if(rc EQUAL 0)
  message(FATAL_ERROR "agent-only configure without libibverbs succeeded")
endif()
if(NOT err MATCHES "roceconf-agent cannot be built: libibverbs-dev librdmacm-dev missing"
   OR NOT err MATCHES "apt-get install libibverbs-dev librdmacm-dev")
  message(FATAL_ERROR "agent-only configure without libibverbs: unclear error:\n${err}")
endif()
