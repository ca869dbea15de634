# SlurmSource.cmake: the configured Slurm source trees the plugins are built against.
#
# slurmctld loads a plugin only when its plugin_version matches major.minor.micro of the running Slurm, and plugins
# need Slurm's internal headers (src/slurmctld/slurmctld.h, src/common/*.h, config.h), which no binary package ships.
# So we take Debian's source package of exactly that version (cmake/SlurmFetch.cmake: deb-src derived from the
# machine's own apt sources, Debian's patches applied, Slurm's configure run, no make).
#
#   rlsched_slurm_source(<out_var>)
#     The tree of the plugins installed from this build: the installed Slurm's, or RLSCHED_SLURM_SOURCE_VERSION's.
#     Sets <out_var> to the include directories (the configured build folder, for config.h and
#     slurm/slurm_version.h, and the source folder, for src/...), and in the parent scope
#     RLSCHED_SLURM_VERSION_NUMBER (e.g. 0x160508) and RLSCHED_SLURM_FOR_INSTALLED (whether that is the installed
#     version, i.e. whether this machine's slurmctld can load the plugins).
#   rlsched_slurm_extra_source(<spec> <out_var>)
#     Another version's tree (RLSCHED_SLURM_EXTRA_VERSIONS: the plugin load tests per version). Sets <out_var> to
#     its include directories and <out_var>_NUMBER to its version number.
#
# Cache variables:
#   RLSCHED_SLURM_SOURCE_VERSION  build the plugins for this Slurm instead of the installed one, e.g. 24.11 (Debian
#                             13) or 26.05 (sid): any version of slurm-wlm the archive serves, as 24.11, 24.11.5 or
#                             24.11.5-4+deb13u1. Such plugins do not load into this machine's slurmctld.
#   RLSCHED_SLURM_SOURCE_DIR  an already configured Slurm tree (source and build in one folder, or set
#                             RLSCHED_SLURM_BUILD_DIR too) to use instead of fetching, e.g. on a machine without
#                             network. Its version is checked all the same.
#   RLSCHED_SLURM_CACHE       where the fetched tree lives (default: <build>/_slurm). Re-fetched only when the
#                             version asked for changes. Other versions live beside it, in <build>/_slurm-<version>.
#   RLSCHED_SLURM_SUITES      the Debian suites whose sources are looked up (default bookworm;trixie;sid).

include(SlurmFetch)

set(RLSCHED_SLURM_VERSION_HEADER "/usr/include/slurm/slurm_version.h")
set(RLSCHED_SLURM_SOURCE_VERSION "" CACHE STRING
    "Build the plugins for this Slurm version (e.g. 24.11) instead of the installed one")
set(RLSCHED_SLURM_SOURCE_DIR "" CACHE PATH "A configured Slurm source tree to build the plugins against (skip fetching)")
set(RLSCHED_SLURM_BUILD_DIR "" CACHE PATH "Build folder of RLSCHED_SLURM_SOURCE_DIR, when configured out of tree")
set(RLSCHED_SLURM_CACHE "${CMAKE_BINARY_DIR}/_slurm" CACHE PATH "Where the Slurm source package is fetched and configured")
set(RLSCHED_SLURM_SUITES "bookworm;trixie;sid" CACHE STRING "Debian suites searched for slurm-wlm source packages")
# Shared by every version's fetch in this build tree: one apt-get update, one autoconf cache.
set(_rlsched_slurm_apt "${CMAKE_BINARY_DIR}/_slurm-apt")
set(_rlsched_autoconf_cache "${CMAKE_BINARY_DIR}/_slurm-apt/config.cache")

# The installed Slurm: its version number, and the source package and version of the package that installed the
# header (libslurm-dev), e.g. "slurm-wlm" "22.05.8-4+deb12u3". Binary and source versions can differ (binNMUs).
function(_rlsched_installed_slurm out_number out_source_version)
  if(NOT EXISTS "${RLSCHED_SLURM_VERSION_HEADER}")
    message(FATAL_ERROR "rlsched: ${RLSCHED_SLURM_VERSION_HEADER} not found: install libslurm-dev (scripts/setup) "
                        "or configure with -DRLSCHED_BUILD_PLUGINS=OFF")
  endif()
  # Re-run CMake when the installed Slurm changes (a package upgrade rewrites this header).
  set_property(DIRECTORY "${PROJECT_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
               "${RLSCHED_SLURM_VERSION_HEADER}")
  _rlsched_slurm_version_number("${RLSCHED_SLURM_VERSION_HEADER}" installed)
  set(${out_number} ${installed} PARENT_SCOPE)
  set(${out_source_version} "" PARENT_SCOPE)
  find_program(RLSCHED_DPKG_QUERY dpkg-query)
  if(NOT RLSCHED_DPKG_QUERY)
    return()
  endif()
  execute_process(COMMAND ${RLSCHED_DPKG_QUERY} -S "${RLSCHED_SLURM_VERSION_HEADER}"
                  OUTPUT_VARIABLE owner RESULT_VARIABLE rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    return()
  endif()
  string(REGEX REPLACE "^([^:]+):.*" "\\1" owner "${owner}")
  execute_process(COMMAND ${RLSCHED_DPKG_QUERY} -W "-f=\${source:Package} \${source:Version}" "${owner}"
                  OUTPUT_VARIABLE pkg RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0 OR NOT pkg MATCHES "^slurm-wlm [^ ]+$")
    message(FATAL_ERROR "rlsched: cannot read the source package of ${owner} with dpkg-query (got '${pkg}')")
  endif()
  string(REPLACE "slurm-wlm " "" source_version "${pkg}")
  # slurmctld must be the same build as the header, or the plugin is built for a version slurmctld rejects.
  execute_process(COMMAND ${RLSCHED_DPKG_QUERY} -W "-f=\${source:Version}" slurmctld
                  OUTPUT_VARIABLE ctld_version RESULT_VARIABLE rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(rc EQUAL 0 AND ctld_version AND NOT ctld_version STREQUAL source_version)
    message(FATAL_ERROR "rlsched: slurmctld ${ctld_version} and ${owner} ${source_version} are different Slurm "
                        "versions; install matching packages (apt-get install slurmctld=${source_version} ...)")
  endif()
  set(${out_source_version} "${source_version}" PARENT_SCOPE)
endfunction()

# Checks that `bld`/`src` is a configured tree; sets `out_number` to its version number.
function(_rlsched_check_tree src bld origin out_number)
  set(configured_header "${bld}/slurm/slurm_version.h")
  if(NOT EXISTS "${configured_header}" OR NOT EXISTS "${bld}/config.h"
     OR NOT EXISTS "${src}/src/slurmctld/slurmctld.h")
    message(FATAL_ERROR "rlsched: ${origin} is not a configured Slurm tree (need ${bld}/config.h, "
                        "${configured_header} and ${src}/src/slurmctld/slurmctld.h)")
  endif()
  _rlsched_slurm_version_number("${configured_header}" configured)
  set(${out_number} ${configured} PARENT_SCOPE)
endfunction()

function(rlsched_slurm_source out_var)
  _rlsched_installed_slurm(installed source_version)
  _rlsched_slurm_version_text(${installed} installed_text)
  if(RLSCHED_SLURM_SOURCE_DIR)
    set(src "${RLSCHED_SLURM_SOURCE_DIR}")
    set(bld "${RLSCHED_SLURM_BUILD_DIR}")
    if(NOT bld)
      set(bld "${src}")
    endif()
    set(origin "RLSCHED_SLURM_SOURCE_DIR=${src}")
  else()
    set(spec "${RLSCHED_SLURM_SOURCE_VERSION}")
    if(NOT spec)
      if(NOT source_version)
        message(FATAL_ERROR "rlsched: no Debian package owns ${RLSCHED_SLURM_VERSION_HEADER} (or dpkg-query is "
                            "missing): a Slurm installed from source? Set RLSCHED_SLURM_SOURCE_DIR to its "
                            "configured tree.")
      endif()
      set(spec "${source_version}")
    endif()
    rlsched_slurm_fetch(SPEC "${spec}" CACHE "${RLSCHED_SLURM_CACHE}" APT "${_rlsched_slurm_apt}"
                        SUITES ${RLSCHED_SLURM_SUITES} AUTOCONF_CACHE "${_rlsched_autoconf_cache}"
                        SOURCE_DIR src BUILD_DIR bld ORIGIN origin)
  endif()
  _rlsched_check_tree("${src}" "${bld}" "${origin}" configured)
  _rlsched_slurm_version_text(${configured} configured_text)
  set(for_installed ON)
  if(NOT configured STREQUAL installed)
    if(NOT RLSCHED_SLURM_SOURCE_VERSION)
      message(FATAL_ERROR "rlsched: Slurm version mismatch: the installed Slurm is ${installed_text} (${installed}, "
                          "${RLSCHED_SLURM_VERSION_HEADER}) but ${origin} is ${configured_text} (${configured}). "
                          "slurmctld refuses plugins built for another major.minor.micro; build against the "
                          "installed version's source (remove ${RLSCHED_SLURM_CACHE} to re-fetch), or ask for "
                          "another version on purpose with -DRLSCHED_SLURM_SOURCE_VERSION=${configured_text}.")
    endif()
    message(WARNING "rlsched: building the Slurm plugins for Slurm ${configured_text} "
                    "(RLSCHED_SLURM_SOURCE_VERSION=${RLSCHED_SLURM_SOURCE_VERSION}), but the installed Slurm is "
                    "${installed_text}: this machine's slurmctld will refuse them (plugin_version). Install them on "
                    "a ${configured_text} controller, or point RLSCHED_SLURM_PREFIX at a Slurm ${configured_text} "
                    "built by scripts/slurm-build for the end-to-end tests.")
    set(for_installed OFF)
  endif()
  message(STATUS "rlsched: building Slurm plugins against Slurm ${configured_text} (${origin})")
  set(RLSCHED_SLURM_VERSION_NUMBER "${configured}" PARENT_SCOPE)
  set(RLSCHED_SLURM_FOR_INSTALLED ${for_installed} PARENT_SCOPE)
  set(${out_var} "${bld}" "${src}" PARENT_SCOPE)
endfunction()

function(rlsched_slurm_extra_source spec out_var)
  rlsched_slurm_fetch(SPEC "${spec}" CACHE "${CMAKE_BINARY_DIR}/_slurm-${spec}" APT "${_rlsched_slurm_apt}"
                      SUITES ${RLSCHED_SLURM_SUITES} AUTOCONF_CACHE "${_rlsched_autoconf_cache}"
                      SOURCE_DIR src BUILD_DIR bld ORIGIN origin)
  _rlsched_check_tree("${src}" "${bld}" "${origin}" configured)
  _rlsched_slurm_version_text(${configured} configured_text)
  string(REPLACE "." "\\." spec_re "${spec}")
  if(NOT configured_text STREQUAL spec AND NOT configured_text MATCHES "^${spec_re}\\.")
    message(FATAL_ERROR "rlsched: ${origin} is Slurm ${configured_text}, not ${spec}")
  endif()
  message(STATUS "rlsched: plugin load tests also against Slurm ${configured_text} (${origin})")
  set(${out_var} "${bld}" "${src}" PARENT_SCOPE)
  set(${out_var}_NUMBER "${configured}" PARENT_SCOPE)
endfunction()
