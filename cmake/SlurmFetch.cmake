# SlurmFetch.cmake: fetch, unpack and configure one version of Debian's Slurm source package (slurm-wlm).
#
# No mirror is named here: the deb-src entries are derived from the machine's own apt sources into a private apt
# folder (its own source parts, lists and caches; the system's stay untouched). Besides the machine's own suites,
# every suite of RLSCHED_SLURM_SUITES gets entries (the machine's codename replaced), so one `apt-get update` finds
# the source of every Slurm version Debian ships, e.g. bookworm 22.05, trixie 24.11, sid 26.05.
#
#   rlsched_slurm_fetch(SPEC <version> CACHE <dir> APT <dir> [SUITES <suite>...] [UNPACK_ONLY]
#                       [AUTOCONF_CACHE <file>] SOURCE_DIR <var> BUILD_DIR <var> ORIGIN <var>)
#     SPEC is a source package version ("22.05.8-4+deb12u3"), an upstream one ("24.11.5") or a major.minor
#     ("24.11"), matched against what the archive serves. The tree is unpacked into <CACHE>/src with Debian's patches
#     and configured for its headers only (config.h, slurm/slurm_version.h; no make) into <CACHE>/build, unless
#     UNPACK_ONLY. Done once per CACHE: a stamp file records what is there, and a second call costs nothing.
#     AUTOCONF_CACHE: a config.cache shared by the configures of several versions (most checks are the same).
#
# Script mode (scripts/slurm-build uses it to get the same source tree):
#   cmake -DSPEC=24.11 -DCACHE=<dir> -DAPT=<dir> [-DUNPACK_ONLY=ON] -P cmake/SlurmFetch.cmake
#
# Timings (2 cores, Debian 12): apt-get update of bookworm + trixie + sid deb-src lists ~3 s, download ~1 s,
# dpkg-source ~1 s, configure 15-45 s (less with a shared AUTOCONF_CACHE).

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  cmake_minimum_required(VERSION 3.25)  # the policies of the project, e.g. IN_LIST
endif()

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

# Runs a command; on failure stops with `what`, the command line and the tail of its output.
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

# The machine's Debian codename (bookworm), or "" when /etc/os-release does not say.
function(_rlsched_codename out_var)
  set(name "")
  if(EXISTS "/etc/os-release")
    file(STRINGS "/etc/os-release" line REGEX "^VERSION_CODENAME=")
    string(REGEX REPLACE "^VERSION_CODENAME=\"?([a-z]+)\"?$" "\\1" name "${line}")
  endif()
  set(${out_var} "${name}" PARENT_SCOPE)
endfunction()

# Writes deb-src entries for every deb entry of the machine's apt sources into `parts_dir`: deb822 files
# (/etc/apt/sources.list.d/*.sources: "Types: deb" -> "Types: deb-src") and one-line files (sources.list and
# sources.list.d/*.list: "deb ..." -> "deb-src ..."). Disabled files (other suffixes) and comments are left out.
# An entry for the machine's own codename is repeated for each of `suites` (codename replaced; its -updates and
# -security entries are not: a suite's point releases are in the suite itself).
function(_rlsched_derive_deb_src parts_dir suites out_count)
  file(REMOVE_RECURSE "${parts_dir}")
  file(MAKE_DIRECTORY "${parts_dir}")
  _rlsched_codename(codename)
  if(codename)
    list(REMOVE_ITEM suites "${codename}")
  else()
    set(suites "")
  endif()
  string(ASCII 30 sep)
  set(count 0)
  file(GLOB deb822 LIST_DIRECTORIES false "/etc/apt/sources.list.d/*.sources")
  foreach(src IN LISTS deb822)
    file(READ "${src}" text)
    # Every stanza that fetches binaries gets source entries instead; stanzas with "Enabled: no" stay disabled.
    string(REGEX REPLACE "(^|\n)Types:[^\n]*" "\\1Types: deb-src" text "${text}")
    string(REGEX MATCHALL "(^|\n)Types: deb-src" found "${text}")
    list(LENGTH found n)
    if(n EQUAL 0)
      continue()
    endif()
    math(EXPR count "${count} + ${n}")
    # One stanza per list item: the blank lines between stanzas become separators.
    string(REPLACE ";" "\\;" stanzas "${text}")
    string(REGEX REPLACE "\n[ \t]*\n" "${sep}" stanzas "${stanzas}")
    string(REPLACE "${sep}" ";" stanzas "${stanzas}")
    foreach(stanza IN LISTS stanzas)
      if(NOT stanza MATCHES "(^|\n)Suites:([^\n]*)")
        continue()
      endif()
      string(REGEX MATCHALL "[^ \t]+" own "${CMAKE_MATCH_2}")
      if(NOT codename IN_LIST own)
        continue()
      endif()
      foreach(suite IN LISTS suites)
        string(REGEX REPLACE "(^|\n)Suites:[^\n]*" "\\1Suites: ${suite}" copy "${stanza}")
        string(APPEND text "\n\n${copy}\n")
        math(EXPR count "${count} + 1")
      endforeach()
    endforeach()
    get_filename_component(name "${src}" NAME)
    file(WRITE "${parts_dir}/${name}" "${text}")
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
      # deb-src [options] URI SUITE COMPONENTS...
      if(codename AND line MATCHES "^(deb-src[ \t]+(\\[[^]]*\\][ \t]+)?[^ \t]+[ \t]+)${codename}([ \t].*)$")
        foreach(suite IN LISTS suites)
          string(APPEND out "${CMAKE_MATCH_1}${suite}${CMAKE_MATCH_3}\n")
          math(EXPR count "${count} + 1")
        endforeach()
      endif()
    endforeach()
    if(out)
      get_filename_component(name "${src}" NAME)
      string(REGEX REPLACE "\\.list$" "" name "${name}")
      file(WRITE "${parts_dir}/${name}-derived.list" "${out}")
    endif()
  endforeach()
  set(${out_count} ${count} PARENT_SCOPE)
endfunction()

# A private apt in `apt_dir`; its lists are fetched at most once per CMake run (the versions fetched in one configure
# share one `apt-get update`), and again in a later run that has to fetch something (the archive moves on). Sets
# `out_opts` to the apt-get/apt-cache options that use it. Call with `apt_dir`/.lock held.
function(_rlsched_private_apt apt_dir suites out_opts)
  # Downloads run as the calling user (the build folder may not be readable by _apt); no lock on the system's lists.
  set(opts -q -oDir::Etc::SourceList=/dev/null "-oDir::Etc::SourceParts=${apt_dir}/sources"
           "-oDir::State::Lists=${apt_dir}/lists" "-oDir::Cache=${apt_dir}/cache"
           "-oDir::Cache::Archives=${apt_dir}/cache/archives" -oDebug::NoLocking=1 -oAPT::Sandbox::User=root)
  set(${out_opts} "${opts}" PARENT_SCOPE)
  string(REPLACE ";" " " want "${suites}")
  get_property(updated GLOBAL PROPERTY "RLSCHED_APT_UPDATED:${apt_dir}")
  if(updated STREQUAL want)
    return()
  endif()
  _rlsched_derive_deb_src("${apt_dir}/sources" "${suites}" n_entries)
  if(n_entries EQUAL 0)
    message(FATAL_ERROR "rlsched: no deb entries in /etc/apt/sources.list or /etc/apt/sources.list.d/*.sources "
                        "to derive deb-src entries from; set RLSCHED_SLURM_SOURCE_DIR or -DRLSCHED_BUILD_PLUGINS=OFF")
  endif()
  file(MAKE_DIRECTORY "${apt_dir}/lists/partial" "${apt_dir}/cache/archives/partial")
  # Some third-party sources have no deb-src: update may report errors for them; the version lookup says whether
  # what we need was found.
  execute_process(COMMAND ${RLSCHED_APT_GET} ${opts} update
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  file(WRITE "${apt_dir}/apt-update.log" "exit ${rc}\n${out}")
  set_property(GLOBAL PROPERTY "RLSCHED_APT_UPDATED:${apt_dir}" "${want}")
endfunction()

# The source package version of slurm-wlm that `spec` names, among those the private apt lists: an exact source
# version, or the newest whose upstream version is `spec` or starts with "`spec`.".
function(_rlsched_slurm_resolve opts spec apt_dir out_var)
  find_program(RLSCHED_APT_CACHE apt-cache)
  execute_process(COMMAND ${RLSCHED_APT_CACHE} ${opts} showsrc slurm-wlm
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX MATCHALL "(^|\n)Version: [^\n]+" lines "${out}")
  string(REPLACE "." "\\." spec_re "${spec}")
  set(found "")
  set(known "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^\n?Version: " "" version "${line}")
    list(APPEND known "${version}")
    string(REGEX REPLACE "^([0-9]+:)?([^-]+)(-.*)?$" "\\2" upstream "${version}")
    if(version STREQUAL spec OR upstream STREQUAL spec OR upstream MATCHES "^${spec_re}\\.")
      if(NOT found OR version VERSION_GREATER found)
        set(found "${version}")
      endif()
    endif()
  endforeach()
  if(NOT found)
    list(REMOVE_DUPLICATES known)
    string(REPLACE ";" ", " known "${known}")
    message(FATAL_ERROR "rlsched: no slurm-wlm source package ${spec} in the archive (it has: ${known}; "
                        "apt-cache exit ${rc} ${err}). The deb-src entries derived from your apt sources are in "
                        "${apt_dir}/sources, apt-get update's output in ${apt_dir}/apt-update.log. Without the load tests "
                        "of other versions: -DRLSCHED_SLURM_EXTRA_VERSIONS=")
  endif()
  set(${out_var} "${found}" PARENT_SCOPE)
endfunction()

# Downloads slurm-wlm=`version` into `dl` and unpacks it into `src`. With Debian's patches (they touch headers too)
# when the archive serves the .dsc and the Debian tarball; when it serves only the upstream tarball (checked by apt
# against the archive's index), that tarball as it is, saying so.
function(_rlsched_slurm_download opts version dl src out_note)
  find_program(RLSCHED_DPKG_SOURCE dpkg-source)
  if(NOT RLSCHED_DPKG_SOURCE)
    message(FATAL_ERROR "rlsched: unpacking Slurm's source package needs dpkg-source (package dpkg-dev; "
                        "scripts/setup installs it), or set RLSCHED_SLURM_SOURCE_DIR to a configured Slurm tree")
  endif()
  file(REMOVE_RECURSE "${dl}" "${src}")
  file(MAKE_DIRECTORY "${dl}")
  execute_process(COMMAND ${RLSCHED_APT_GET} ${opts} source --download-only "slurm-wlm=${version}"
                  WORKING_DIRECTORY "${dl}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  file(GLOB dsc "${dl}/*.dsc")
  file(GLOB orig "${dl}/*.orig.tar.*")
  set(note "")
  if(rc EQUAL 0 AND dsc)
    _rlsched_run("dpkg-source -x of ${dsc}" COMMAND ${RLSCHED_DPKG_SOURCE} --no-check -x "${dsc}" "${src}"
                 WORKING_DIRECTORY "${dl}" LOG "${dl}/../dpkg-source.log")
  elseif(orig)
    list(GET orig 0 orig)
    file(MAKE_DIRECTORY "${src}")
    _rlsched_run("unpacking ${orig}" COMMAND tar -xf "${orig}" -C "${src}" --strip-components=1
                 WORKING_DIRECTORY "${dl}")
    set(note " (upstream tarball: the archive does not serve the .dsc and Debian's patches of ${version})")
    string(REGEX MATCHALL "(^|\n)E: [^\n]*" errors "${out}")
    string(REPLACE ";" "" errors "${errors}")
    message(STATUS "rlsched: the archive serves only the upstream tarball of slurm-wlm ${version}, not its .dsc "
                   "and Debian patches; building against the upstream source as it is. apt-get said:${errors}")
  else()
    message(FATAL_ERROR "rlsched: cannot download the source of slurm-wlm ${version} (apt-get source exit "
                        "${rc}):\n${out}\nWithout network: -DRLSCHED_SLURM_SOURCE_DIR=<configured Slurm tree>, "
                        "or -DRLSCHED_BUILD_PLUGINS=OFF; without the load tests of other versions: "
                        "-DRLSCHED_SLURM_EXTRA_VERSIONS=")
  endif()
  set(${out_note} "${note}" PARENT_SCOPE)
endfunction()

function(rlsched_slurm_fetch)
  cmake_parse_arguments(PARSE_ARGV 0 arg "UNPACK_ONLY" "SPEC;CACHE;APT;AUTOCONF_CACHE;SOURCE_DIR;BUILD_DIR;ORIGIN"
                        "SUITES")
  get_filename_component(cache "${arg_CACHE}" ABSOLUTE)
  get_filename_component(arg_APT "${arg_APT}" ABSOLUTE)
  set(src "${cache}/src")
  set(bld "${cache}/build")
  set(stamp "${cache}/configured.stamp")
  if(arg_UNPACK_ONLY)
    set(stamp "${cache}/unpacked.stamp")
  endif()
  if(NOT arg_SUITES)
    set(arg_SUITES bookworm trixie sid)
  endif()
  set(${arg_SOURCE_DIR} "${src}" PARENT_SCOPE)
  set(${arg_BUILD_DIR} "${bld}" PARENT_SCOPE)
  file(MAKE_DIRECTORY "${cache}")
  # Two configures sharing a cache take turns.
  file(LOCK "${cache}/.lock" GUARD FUNCTION TIMEOUT 900)
  set(have "")
  if(EXISTS "${stamp}")
    file(READ "${stamp}" have)
    string(STRIP "${have}" have)
  endif()
  # The stamp: "slurm-wlm <source version>[ (note)]"
  if(have MATCHES "^slurm-wlm ([^ ]+)(.*)$")
    set(have_version "${CMAKE_MATCH_1}")
    string(REGEX REPLACE "^([0-9]+:)?([^-]+)(-.*)?$" "\\2" have_upstream "${have_version}")
    string(REPLACE "." "\\." spec_re "${arg_SPEC}")
    if(have_version STREQUAL arg_SPEC OR have_upstream STREQUAL arg_SPEC OR have_upstream MATCHES "^${spec_re}\\.")
      set(${arg_ORIGIN} "Debian source package ${have}" PARENT_SCOPE)
      return()
    endif()
  endif()

  string(TIMESTAMP t0 "%s")
  find_program(RLSCHED_APT_GET apt-get)
  if(NOT RLSCHED_APT_GET)
    message(FATAL_ERROR "rlsched: fetching Slurm's source package needs apt-get")
  endif()
  file(REMOVE "${stamp}")
  file(MAKE_DIRECTORY "${arg_APT}")
  file(LOCK "${arg_APT}/.lock" TIMEOUT 900)
  _rlsched_private_apt("${arg_APT}" "${arg_SUITES}" opts)
  _rlsched_slurm_resolve("${opts}" "${arg_SPEC}" "${arg_APT}" version)
  message(STATUS "rlsched: fetching slurm-wlm ${version} (deb-src derived from this machine's apt sources)")
  _rlsched_slurm_download("${opts}" "${version}" "${cache}/dl" "${src}" note)
  file(LOCK "${arg_APT}/.lock" RELEASE)
  string(TIMESTAMP t1 "%s")
  math(EXPR fetch_s "${t1} - ${t0}")
  if(NOT arg_UNPACK_ONLY)
    file(REMOVE_RECURSE "${bld}")
    file(MAKE_DIRECTORY "${bld}")
    # Only headers are needed (config.h, slurm/slurm_version.h): no make. Options as Debian builds the daemons where
    # they matter to struct layouts (multiple slurmd); the rest are off so configure needs no -dev packages.
    set(configure "${src}/configure" -q --sysconfdir=/etc/slurm --disable-debug --enable-multiple-slurmd
                  --without-munge --without-pmix --without-hwloc --without-rrdtool --without-mysql_config)
    set(rc 1)
    if(arg_AUTOCONF_CACHE)
      # A cache another version's configure filled: most checks are answered from it. Should it not fit (autoconf
      # refuses a cache made with other compiler settings), configure again without it.
      file(LOCK "${arg_AUTOCONF_CACHE}.lock" TIMEOUT 900)
      execute_process(COMMAND ${configure} "--cache-file=${arg_AUTOCONF_CACHE}" WORKING_DIRECTORY "${bld}"
                      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
      file(LOCK "${arg_AUTOCONF_CACHE}.lock" RELEASE)
      file(WRITE "${cache}/configure.log" "${out}")
    endif()
    if(NOT rc EQUAL 0)
      _rlsched_run("Slurm ${version}'s configure (log: ${bld}/config.log)" COMMAND ${configure}
                   WORKING_DIRECTORY "${bld}" LOG "${cache}/configure.log")
    endif()
    string(TIMESTAMP t2 "%s")
    math(EXPR configure_s "${t2} - ${t1}")
    message(STATUS "rlsched: Slurm ${version} fetched and unpacked in ${fetch_s} s, configured in ${configure_s} s")
  endif()
  file(WRITE "${stamp}" "slurm-wlm ${version}${note}\n")
  set(${arg_ORIGIN} "Debian source package slurm-wlm ${version}${note}" PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  if(NOT SPEC OR NOT CACHE OR NOT APT)
    message(FATAL_ERROR "usage: cmake -DSPEC=<version> -DCACHE=<dir> -DAPT=<dir> [-DUNPACK_ONLY=ON] "
                        "-P cmake/SlurmFetch.cmake")
  endif()
  set(flags "")
  if(UNPACK_ONLY)
    set(flags UNPACK_ONLY)
  endif()
  rlsched_slurm_fetch(SPEC "${SPEC}" CACHE "${CACHE}" APT "${APT}" ${flags}
                      SOURCE_DIR src BUILD_DIR bld ORIGIN origin)
  message("${origin}: ${src}")
endif()
