# Third-party dependencies, all from Debian packages (see scripts/install-deps).
find_package(PkgConfig REQUIRED)

# SystemC ships only pkg-config files on Debian; wrap them in one imported target.
pkg_check_modules(SYSTEMC REQUIRED IMPORTED_TARGET systemc>=2.3.3)
if(NOT TARGET SystemC::systemc)
  add_library(SystemC::systemc INTERFACE IMPORTED)
  target_link_libraries(SystemC::systemc INTERFACE PkgConfig::SYSTEMC)
endif()

find_package(yaml-cpp REQUIRED)             # target: yaml-cpp (no namespace in 0.7)
find_package(Boost 1.74 REQUIRED COMPONENTS program_options)
find_package(nlohmann_json 3.10 REQUIRED)   # target: nlohmann_json::nlohmann_json
find_package(fmt REQUIRED)                  # target: fmt::fmt
find_package(Eigen3 3.3 REQUIRED NO_MODULE) # target: Eigen3::Eigen (the thermal model's linear algebra)
