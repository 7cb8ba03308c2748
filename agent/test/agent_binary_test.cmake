# roceconf-agent --control on a wildcard address without a secret: exit 2, one line naming the fix.
foreach(address 0.0.0.0:47798 [::]:47798)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=ROCECONF_AGENT_SECRET
                          ${AGENT} --control ${address}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 10)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "--control ${address} without a secret: exit ${rc}, expected 2 (${err})")
  endif()
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines lines)
  if(NOT lines EQUAL 1 OR NOT err MATCHES "^roceconf-agent: error: --control .* without a secret: give --secret-file")
    message(FATAL_ERROR "--control ${address}: expected one error line, got: ${err}")
  endif()
endforeach()
# A secret that is too short is refused the same way, before anything listens.
execute_process(COMMAND ${CMAKE_COMMAND} -E env ROCECONF_AGENT_SECRET=short
                        ${AGENT} --control 127.0.0.1:47798
                RESULT_VARIABLE rc ERROR_VARIABLE err TIMEOUT 10)
if(NOT rc EQUAL 2 OR NOT err MATCHES "at least 16")
  message(FATAL_ERROR "a short secret: exit ${rc}: ${err}")
endif()
