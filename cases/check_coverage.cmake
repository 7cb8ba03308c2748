# Fails when the compliance coverage table in cases/COVERAGE.md (between the coverage:begin and
# coverage:end markers) is not what the built catalogue generates, or when a case cites a
# statement ID the registry (reports/statements.cc) does not know.
# cmake -DROCECONF=<roceconf binary> -DREADME=<cases/COVERAGE.md> -P check_coverage.cmake
execute_process(COMMAND ${ROCECONF} run --list --format coverage OUTPUT_VARIABLE generated
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "roceconf run --list --format coverage exited ${rc}")
endif()
string(FIND "${generated}" "Cited IDs the registry does not know" unknown)
if(NOT unknown EQUAL -1)
  message(FATAL_ERROR "a case cites a statement ID that reports/statements.cc does not list:\n"
                      "${generated}")
endif()
file(READ ${README} readme)
set(begin_marker "<!-- coverage:begin -->\n")
set(end_marker "<!-- coverage:end -->")
string(FIND "${readme}" "${begin_marker}" b)
string(FIND "${readme}" "${end_marker}" e)
if(b EQUAL -1 OR e EQUAL -1)
  message(FATAL_ERROR "cases/COVERAGE.md has no coverage:begin / coverage:end markers")
endif()
string(LENGTH "${begin_marker}" blen)
math(EXPR start "${b} + ${blen}")
math(EXPR len "${e} - ${start}")
string(SUBSTRING "${readme}" ${start} ${len} committed)
if(NOT generated STREQUAL committed)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/COVERAGE.generated.md "${generated}")
  message(FATAL_ERROR
    "cases/COVERAGE.md's coverage table differs from the catalogue (the generated table is in "
    "${CMAKE_CURRENT_BINARY_DIR}/COVERAGE.generated.md): replace the lines between the "
    "coverage markers with 'build/roceconf run --list --format coverage' (scripts/update_coverage.sh)")
endif()
