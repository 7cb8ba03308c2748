# Fails when cases/TRACEABILITY.md is not what the built catalogue generates.
# cmake -DROCECONF=<roceconf binary> -DTABLE=<cases/TRACEABILITY.md> -P check_traceability.cmake
execute_process(COMMAND ${ROCECONF} run --list --format md OUTPUT_VARIABLE generated
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "roceconf run --list --format md exited ${rc}")
endif()
file(READ ${TABLE} committed)
if(NOT generated STREQUAL committed)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/TRACEABILITY.generated.md "${generated}")
  message(FATAL_ERROR
    "cases/TRACEABILITY.md differs from the catalogue (the generated table is in "
    "${CMAKE_CURRENT_BINARY_DIR}/TRACEABILITY.generated.md): regenerate it with "
    "'build/roceconf run --list --format md > cases/TRACEABILITY.md'")
endif()
