# Precompiled headers. Every translation unit parses the same large third-party headers (SystemC
# and TLM, nlohmann/json, fmt, and GoogleTest in the tests); with unity builds most targets are
# one to three translation units, so a header set precompiled per target would save little.
# Instead one object library of each kind precompiles the set and every other target reuses it
# (REUSE_FROM): scoville_pch for the libraries and executables, scoville_test_pch for the test
# binaries. GCC uses a precompiled header only where it was built with the same options and with
# no macro defined that the using file leaves undefined, so the owners are empty targets that take
# only scoville_build_flags and the dependencies' usage requirements; the definitions some targets
# add (SCOVILLE_VERSION, SCOVILLE_SOURCE_DIR, SCOVILLE_BINARY, Boost's) appear in none of the
# precompiled headers. -Winvalid-pch (an error under SCOVILLE_WERROR) reports a target that stops
# matching. -DSCOVILLE_PCH=OFF builds without them, to check that every file includes what it uses.
option(SCOVILLE_PCH "Precompile the common third-party headers (faster clean builds)" ON)

set(SCOVILLE_PCH_HEADERS
  <algorithm> <cmath> <cstdint> <map> <memory> <optional> <set> <stdexcept> <string> <vector>
  <fmt/format.h> <nlohmann/json.hpp> <systemc> <tlm>)

# scoville_pch_target(NAME [HEADERS extra...] [LIBS targets...]): the empty object library NAME
# precompiles the set (and the extra headers) with the options of scoville_build_flags, of the
# libraries the set comes from, and of LIBS (those of the extra headers).
function(scoville_pch_target name)
  cmake_parse_arguments(arg "" "" "HEADERS;LIBS" ${ARGN})
  if(SCOVILLE_PCH)
    add_library(${name} OBJECT ${PROJECT_SOURCE_DIR}/cmake/PchOwner.cpp)
    target_link_libraries(${name} PRIVATE scoville_build_flags SystemC::systemc fmt::fmt
                                          nlohmann_json::nlohmann_json ${arg_LIBS})
    target_precompile_headers(${name} PRIVATE ${SCOVILLE_PCH_HEADERS} ${arg_HEADERS})
  endif()
endfunction()

# scoville_pch_reuse(TARGET OWNER): TARGET compiles with OWNER's precompiled headers.
function(scoville_pch_reuse target owner)
  if(SCOVILLE_PCH)
    target_precompile_headers(${target} REUSE_FROM ${owner})
  endif()
endfunction()
