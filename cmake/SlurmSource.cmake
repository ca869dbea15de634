# SlurmSource.cmake: the configured source tree of the *installed* Slurm, for building Slurm plugins.
#
# slurmctld loads a plugin only when its plugin_version matches major.minor.micro of the running Slurm, and plugins
# need Slurm's internal headers (src/slurmctld/slurmctld.h, src/common/*.h, config.h), which no binary package ships.
# So we take the Debian source package of exactly the installed version, apply Debian's patches (they change
# headers), and run Slurm's configure (no make). No mirror is named here: the deb-src entries are derived from the
# machine's own apt sources, into a private apt folder in the build tree.
#
#   rlsched_slurm_source(<out_var>)
#     Sets <out_var> to the include directories (the configured build folder, for config.h and slurm/slurm_version.h,
#     and the source folder, for src/...), and RLSCHED_SLURM_VERSION_NUMBER (e.g. 0x160508) in the parent scope.
#
# Cache variables:
#   RLSCHED_SLURM_SOURCE_DIR  an already configured Slurm tree (source and build in one folder, or set
#                             RLSCHED_SLURM_BUILD_DIR too) to use instead of fetching, e.g. on a machine without
#                             network. Its version is checked all the same.
#   RLSCHED_SLURM_CACHE       where the fetched tree lives (default: <build>/_slurm). Re-fetched only when the
#                             installed version changes.
#
# Timings (2 cores, Debian 12, Slurm 22.05.8): apt-get update of the deb-src lists ~2 s, download ~1 s, dpkg-source
# ~1 s, configure ~15-25 s; a re-configure of the project with the cache present costs nothing.

set(RLSCHED_SLURM_VERSION_HEADER "/usr/include/slurm/slurm_version.h")
set(RLSCHED_SLURM_SOURCE_DIR "" CACHE PATH "A configured Slurm source tree to build the plugins against (skip fetching)")
set(RLSCHED_SLURM_BUILD_DIR "" CACHE PATH "Build folder of RLSCHED_SLURM_SOURCE_DIR, when configured out of tree")
set(RLSCHED_SLURM_CACHE "${CMAKE_BINARY_DIR}/_slurm" CACHE PATH "Where the Slurm source package is fetched and configured")

# Reads SLURM_VERSION_NUMBER (e.g. 0x160508) from a slurm_version.h.
function(_rlsched_slurm_version_number header out_var)
  file(STRINGS "${header}" line REGEX "^#define[ \t]+SLURM_VERSION_NUMBER[ \t]+0x[0-9a-fA-F]+")
  if(NOT line)
    message(FATAL_ERROR "rlsched: ${header} has no SLURM_VERSION_NUMBER line; is it a Slurm slurm_version.h?")
  endif()
  string(REGEX REPLACE ".*(0x[0-9a-fA-F]+).*" "\\1" number "${line}")
  string(TOLOWER "${number}" number)
  set(${out_var} "${number}" PARENT_SCOPE)
endfunction()

# "0x160508" -> "22.05.8"
function(_rlsched_slurm_version_text number out_var)
  math(EXPR major "(${number} >> 16) & 255")
  math(EXPR minor "(${number} >> 8) & 255")
  math(EXPR micro "${number} & 255")
  if(minor LESS 10)
    set(minor "0${minor}")
  endif()
  set(${out_var} "${major}.${minor}.${micro}" PARENT_SCOPE)
endfunction()

# Runs a command; on failure stops the configure with `what`, the command line and its output.
function(_rlsched_run what)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "WORKING_DIRECTORY;LOG" "COMMAND")
  execute_process(COMMAND ${arg_COMMAND} WORKING_DIRECTORY "${arg_WORKING_DIRECTORY}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(arg_LOG)
    file(WRITE "${arg_LOG}" "${out}")
  endif()
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${arg_COMMAND}")
    string(LENGTH "${out}" len)
    if(len GREATER 4000)
      math(EXPR start "${len} - 4000")
      string(SUBSTRING "${out}" ${start} 4000 out)
    endif()
    message(FATAL_ERROR "rlsched: ${what} failed (exit ${rc}).\n  command: ${cmd}\n${out}\n"
                        "To build without the Slurm plugins: -DRLSCHED_BUILD_PLUGINS=OFF. To use a Slurm tree you "
                        "configured yourself: -DRLSCHED_SLURM_SOURCE_DIR=<dir>.")
  endif()
endfunction()

# Writes deb-src entries for every deb entry of the machine's apt sources into `parts_dir`: deb822 files
# (/etc/apt/sources.list.d/*.sources: "Types: deb" -> "Types: deb-src") and one-line files (sources.list and
# sources.list.d/*.list: "deb ..." -> "deb-src ..."). Disabled files (other suffixes) and comments are left out.
function(_rlsched_derive_deb_src parts_dir out_count)
  file(REMOVE_RECURSE "${parts_dir}")
  file(MAKE_DIRECTORY "${parts_dir}")
  set(count 0)
  file(GLOB deb822 LIST_DIRECTORIES false "/etc/apt/sources.list.d/*.sources")
  foreach(src IN LISTS deb822)
    file(READ "${src}" text)
    # Every stanza that fetches binaries gets source entries instead; stanzas with "Enabled: no" stay disabled.
    string(REGEX REPLACE "(^|\n)Types:[^\n]*" "\\1Types: deb-src" text "${text}")
    string(REGEX MATCHALL "(^|\n)Types: deb-src" found "${text}")
    list(LENGTH found n)
    if(n GREATER 0)
      get_filename_component(name "${src}" NAME)
      file(WRITE "${parts_dir}/${name}" "${text}")
      math(EXPR count "${count} + ${n}")
    endif()
  endforeach()
  file(GLOB one_line LIST_DIRECTORIES false "/etc/apt/sources.list.d/*.list")
  if(EXISTS "/etc/apt/sources.list")
    list(APPEND one_line "/etc/apt/sources.list")
  endif()
  foreach(src IN LISTS one_line)
    file(STRINGS "${src}" lines REGEX "^[ \t]*deb[ \t]")
    set(out "")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^[ \t]*deb[ \t]" "deb-src " line "${line}")
      string(APPEND out "${line}\n")
      math(EXPR count "${count} + 1")
    endforeach()
    if(out)
      get_filename_component(name "${src}" NAME)
      string(REGEX REPLACE "\\.list$" "" name "${name}")
      file(WRITE "${parts_dir}/${name}-derived.list" "${out}")
    endif()
  endforeach()
  set(${out_count} ${count} PARENT_SCOPE)
endfunction()

function(rlsched_slurm_source out_var)
  if(NOT EXISTS "${RLSCHED_SLURM_VERSION_HEADER}")
    message(FATAL_ERROR "rlsched: ${RLSCHED_SLURM_VERSION_HEADER} not found: install libslurm-dev (scripts/setup) "
                        "or configure with -DRLSCHED_BUILD_PLUGINS=OFF")
  endif()
  # Re-run CMake when the installed Slurm changes (a package upgrade rewrites this header).
  set_property(DIRECTORY "${PROJECT_SOURCE_DIR}" APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
               "${RLSCHED_SLURM_VERSION_HEADER}")
  _rlsched_slurm_version_number("${RLSCHED_SLURM_VERSION_HEADER}" installed)
  _rlsched_slurm_version_text(${installed} installed_text)

  if(RLSCHED_SLURM_SOURCE_DIR)
    set(src "${RLSCHED_SLURM_SOURCE_DIR}")
    set(bld "${RLSCHED_SLURM_BUILD_DIR}")
    if(NOT bld)
      set(bld "${src}")
    endif()
    set(origin "RLSCHED_SLURM_SOURCE_DIR=${src}")
  else()
    find_program(RLSCHED_DPKG_QUERY dpkg-query)
    find_program(RLSCHED_APT_GET apt-get)
    find_program(RLSCHED_DPKG_SOURCE dpkg-source)
    if(NOT RLSCHED_DPKG_QUERY OR NOT RLSCHED_APT_GET OR NOT RLSCHED_DPKG_SOURCE)
      message(FATAL_ERROR "rlsched: fetching Slurm's source package needs dpkg-query, apt-get and dpkg-source "
                          "(package dpkg-dev; scripts/setup installs it), or set RLSCHED_SLURM_SOURCE_DIR to a "
                          "configured Slurm ${installed_text} tree, or configure with -DRLSCHED_BUILD_PLUGINS=OFF")
    endif()
    # The source package and version of the package that installed the header (libslurm-dev), e.g.
    # "slurm-wlm 22.05.8-4+deb12u3". Binary and source versions can differ (binNMUs): ask for the source one.
    execute_process(COMMAND ${RLSCHED_DPKG_QUERY} -S "${RLSCHED_SLURM_VERSION_HEADER}"
                    OUTPUT_VARIABLE owner RESULT_VARIABLE rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "rlsched: no Debian package owns ${RLSCHED_SLURM_VERSION_HEADER}: a Slurm installed "
                          "from source? Set RLSCHED_SLURM_SOURCE_DIR to its configured tree.")
    endif()
    string(REGEX REPLACE "^([^:]+):.*" "\\1" owner "${owner}")
    execute_process(COMMAND ${RLSCHED_DPKG_QUERY} -W "-f=\${source:Package} \${source:Version}" "${owner}"
                    OUTPUT_VARIABLE pkg RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT rc EQUAL 0 OR NOT pkg MATCHES "^[^ ]+ [^ ]+$")
      message(FATAL_ERROR "rlsched: cannot read the source package of ${owner} with dpkg-query (got '${pkg}')")
    endif()
    string(REPLACE " " ";" pkg "${pkg}")
    list(GET pkg 0 source_package)
    list(GET pkg 1 source_version)
    # slurmctld must be the same build as the header, or the plugin is built for a version slurmctld rejects.
    execute_process(COMMAND ${RLSCHED_DPKG_QUERY} -W "-f=\${source:Version}" slurmctld
                    OUTPUT_VARIABLE ctld_version RESULT_VARIABLE rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(rc EQUAL 0 AND ctld_version AND NOT ctld_version STREQUAL source_version)
      message(FATAL_ERROR "rlsched: slurmctld ${ctld_version} and ${owner} ${source_version} are different Slurm "
                          "versions; install matching packages (apt-get install slurmctld=${source_version} ...)")
    endif()

    set(cache "${RLSCHED_SLURM_CACHE}")
    set(src "${cache}/src")
    set(bld "${cache}/build")
    set(stamp "${cache}/configured.stamp")
    set(origin "Debian source package ${source_package} ${source_version}")
    file(MAKE_DIRECTORY "${cache}")
    # Two configures sharing a cache (RLSCHED_SLURM_CACHE pointed at one folder) take turns.
    file(LOCK "${cache}/.lock" GUARD FUNCTION TIMEOUT 600)
    set(have "")
    if(EXISTS "${stamp}")
      file(READ "${stamp}" have)
      string(STRIP "${have}" have)
    endif()
    if(NOT have STREQUAL "${source_package} ${source_version}")
      message(STATUS "rlsched: fetching and configuring ${origin} (deb-src derived from this machine's apt sources)")
      string(TIMESTAMP t0 "%s")
      file(REMOVE_RECURSE "${src}" "${bld}" "${cache}/dl" "${stamp}")
      set(apt "${cache}/apt")
      _rlsched_derive_deb_src("${apt}/sources" n_entries)
      if(n_entries EQUAL 0)
        message(FATAL_ERROR "rlsched: no deb entries in /etc/apt/sources.list or /etc/apt/sources.list.d/*.sources "
                            "to derive deb-src entries from; set RLSCHED_SLURM_SOURCE_DIR or -DRLSCHED_BUILD_PLUGINS=OFF")
      endif()
      file(MAKE_DIRECTORY "${apt}/lists/partial" "${apt}/cache/archives/partial" "${cache}/dl")
      # A private apt: our own source parts, lists and caches (the system's stay untouched), no lock on the system's
      # lists, and downloads as the calling user (the build folder may not be readable by _apt).
      set(apt_opts -q -oDir::Etc::SourceList=/dev/null "-oDir::Etc::SourceParts=${apt}/sources"
                   "-oDir::State::Lists=${apt}/lists" "-oDir::Cache=${apt}/cache"
                   "-oDir::Cache::Archives=${apt}/cache/archives" -oDebug::NoLocking=1 -oAPT::Sandbox::User=root)
      # Some third-party sources have no deb-src: update may report errors for them; `source` below says whether
      # what we need was found.
      execute_process(COMMAND ${RLSCHED_APT_GET} ${apt_opts} update
                      RESULT_VARIABLE update_rc OUTPUT_VARIABLE update_out ERROR_VARIABLE update_out)
      file(WRITE "${cache}/apt-update.log" "${update_out}")
      execute_process(COMMAND ${RLSCHED_APT_GET} ${apt_opts} source --download-only
                              "${source_package}=${source_version}"
                      WORKING_DIRECTORY "${cache}/dl"
                      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR "rlsched: cannot download the source of ${source_package} ${source_version} "
                            "(apt-get source exit ${rc}):\n${out}\napt-get update (exit ${update_rc}) said:\n"
                            "${update_out}\nThe deb-src entries derived from your apt sources are in ${apt}/sources. "
                            "Without network: -DRLSCHED_SLURM_SOURCE_DIR=<configured Slurm ${installed_text} tree>, "
                            "or -DRLSCHED_BUILD_PLUGINS=OFF.")
      endif()
      file(GLOB dsc "${cache}/dl/*.dsc")
      list(LENGTH dsc n_dsc)
      if(NOT n_dsc EQUAL 1)
        message(FATAL_ERROR "rlsched: expected one .dsc in ${cache}/dl after apt-get source, found ${n_dsc}")
      endif()
      # Unpacks the upstream tarball and applies Debian's patches (they touch headers too).
      _rlsched_run("dpkg-source -x of ${dsc}" COMMAND ${RLSCHED_DPKG_SOURCE} --no-check -x "${dsc}" "${src}"
                   WORKING_DIRECTORY "${cache}/dl" LOG "${cache}/dpkg-source.log")
      file(MAKE_DIRECTORY "${bld}")
      # Only headers are needed (config.h, slurm/slurm_version.h): no make. Options as Debian builds the daemons
      # where they matter to struct layouts (multiple slurmd); the rest are off so configure needs no -dev packages.
      string(TIMESTAMP t1 "%s")
      _rlsched_run("Slurm's configure (log: ${bld}/config.log)"
                   COMMAND "${src}/configure" -q --sysconfdir=/etc/slurm --disable-debug --enable-multiple-slurmd
                           --without-munge --without-pmix --without-hwloc --without-rrdtool --without-mysql_config
                   WORKING_DIRECTORY "${bld}" LOG "${cache}/configure.log")
      string(TIMESTAMP t2 "%s")
      math(EXPR fetch_s "${t1} - ${t0}")
      math(EXPR configure_s "${t2} - ${t1}")
      message(STATUS "rlsched: Slurm source fetched and unpacked in ${fetch_s} s, configured in ${configure_s} s")
      file(WRITE "${stamp}" "${source_package} ${source_version}\n")
    endif()
  endif()

  set(configured_header "${bld}/slurm/slurm_version.h")
  if(NOT EXISTS "${configured_header}" OR NOT EXISTS "${bld}/config.h"
     OR NOT EXISTS "${src}/src/slurmctld/slurmctld.h")
    message(FATAL_ERROR "rlsched: ${origin} is not a configured Slurm tree (need ${bld}/config.h, "
                        "${configured_header} and ${src}/src/slurmctld/slurmctld.h)")
  endif()
  _rlsched_slurm_version_number("${configured_header}" configured)
  _rlsched_slurm_version_text(${configured} configured_text)
  if(NOT configured STREQUAL installed)
    message(FATAL_ERROR "rlsched: Slurm version mismatch: the installed Slurm is ${installed_text} (${installed}, "
                        "${RLSCHED_SLURM_VERSION_HEADER}) but ${origin} is ${configured_text} (${configured}). "
                        "slurmctld refuses plugins built for another major.minor.micro; build against the "
                        "installed version's source (remove ${RLSCHED_SLURM_CACHE} to re-fetch).")
  endif()
  message(STATUS "rlsched: building Slurm plugins against Slurm ${configured_text} (${origin})")
  set(RLSCHED_SLURM_VERSION_NUMBER "${configured}" PARENT_SCOPE)
  set(${out_var} "${bld}" "${src}" PARENT_SCOPE)
endfunction()
