# Debian's libcaf-dev (CAF 0.17) ships no CMake config and no pkg-config file.
# Provides CAF::core (the only part kevolve uses), named as upstream CAF >= 0.18
# exports it. Never search for libcaf_openmpi: that is OpenCoarrays, not CAF.
find_path(CAF_INCLUDE_DIR NAMES caf/config.hpp)
if(CAF_INCLUDE_DIR)
  file(STRINGS "${CAF_INCLUDE_DIR}/caf/config.hpp" _caf_line REGEX "^#define CAF_VERSION [0-9]+")
  string(REGEX REPLACE "^#define CAF_VERSION ([0-9]+).*" "\\1" _caf_number "${_caf_line}")
  math(EXPR _major "${_caf_number} / 10000")
  math(EXPR _minor "(${_caf_number} / 100) % 100")
  math(EXPR _patch "${_caf_number} % 100")
  set(CAF_VERSION "${_major}.${_minor}.${_patch}")
endif()
find_library(CAF_CORE_LIBRARY NAMES caf_core)
find_package(Threads REQUIRED)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CAF REQUIRED_VARS CAF_CORE_LIBRARY CAF_INCLUDE_DIR VERSION_VAR CAF_VERSION)
if(CAF_FOUND AND NOT TARGET CAF::core)
  add_library(CAF::core UNKNOWN IMPORTED)
  set_target_properties(CAF::core PROPERTIES
    IMPORTED_LOCATION "${CAF_CORE_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES Threads::Threads)
endif()
mark_as_advanced(CAF_INCLUDE_DIR CAF_CORE_LIBRARY)
