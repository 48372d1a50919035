# Script mode (cmake -P), run once a test binary is built: writes CTEST_FILE with one ctest entry per
# GoogleTest suite of EXECUTABLE, each running the suite's tests in one process
# (--gtest_filter=SUITE.*), labelled LABEL with a timeout of TIMEOUT seconds. The ctest name is the
# suite's ("StepPlanner"), so `ctest -R StepPlanner` selects it. test/CMakeLists.txt uses it for
# the unit suite, whose tests elaborate nothing: one process per test cost more in start-up than
# the tests themselves under the sanitizers.
foreach(var EXECUTABLE CTEST_FILE LABEL TIMEOUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "GTestSuites.cmake: ${var} is not set")
  endif()
endforeach()

execute_process(COMMAND "${CMAKE_COMMAND}" -E env SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
                        "${EXECUTABLE}" --gtest_list_tests
                OUTPUT_VARIABLE listing ERROR_VARIABLE errors RESULT_VARIABLE status TIMEOUT 30)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${EXECUTABLE} --gtest_list_tests failed (${status}):\n${listing}${errors}")
endif()

# Suites are the unindented lines "Suite." or "Prefix/Suite." (parameterised), tests the indented
# ones below them.
string(REPLACE "\n" ";" lines "${listing}")
set(content "")
set(suites 0)
foreach(line IN LISTS lines)
  if(line MATCHES "^([A-Za-z0-9_/]+)\\.")
    set(suite "${CMAKE_MATCH_1}")
    string(APPEND content
           "add_test([==[${suite}]==] [==[${EXECUTABLE}]==] [==[--gtest_filter=${suite}.*]==])\n"
           "set_tests_properties([==[${suite}]==] PROPERTIES LABELS ${LABEL} TIMEOUT ${TIMEOUT}"
           " ENVIRONMENT SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1)\n")
    math(EXPR suites "${suites} + 1")
  endif()
endforeach()
if(suites EQUAL 0)
  message(FATAL_ERROR "${EXECUTABLE} lists no test suites:\n${listing}")
endif()
file(WRITE "${CTEST_FILE}" "${content}")
