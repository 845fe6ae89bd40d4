# Debian packages with CPack (scripts/package.sh: cpack -G DEB, then
# lintian). One package per install component (cmake/HtInstall.cmake):
#   runtime -> libhoptraceN      the shared library, N its SONAME's number
#   dev     -> libhoptrace-dev   headers, .pc, CMake package, static library, .so link
#   tp      -> libhoptrace-tpM   the provider libhoptrace-tp.so.M (lttng-ust)
#   tool    -> hoptrace          the command
# The library packages are named after their SONAMEs (Debian policy 8.1),
# so a SONAME bump renames the package and both versions can be installed.
get_target_property(HT_SOVERSION hoptrace SOVERSION)
get_target_property(HT_TP_SOVERSION hoptrace_tp SOVERSION)
set(HT_DEB_RELEASE 1)
set(HT_DEB_VERSION ${PROJECT_VERSION}-${HT_DEB_RELEASE})
set(HT_DEB_MAINTAINER
    "Seed 6eff7b7e maintainers <maintainers@users.noreply.a-seed-6eff7b7e.example>")
set(HT_DEB_LIB libhoptrace${HT_SOVERSION})
set(HT_DEB_TP libhoptrace-tp${HT_TP_SOVERSION})

# Every package carries /usr/share/doc/PKG/copyright and
# changelog.Debian.gz (gzip -n: no name or time in the header, so the
# file is the same for the same changelog). The date honours
# SOURCE_DATE_EPOCH.
string(TIMESTAMP HT_DEB_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
set(HT_DEB_DIR ${PROJECT_BINARY_DIR}/deb)
configure_file(${CMAKE_CURRENT_LIST_DIR}/deb/changelog.in ${HT_DEB_DIR}/changelog.Debian @ONLY)
execute_process(COMMAND gzip -9nf ${HT_DEB_DIR}/changelog.Debian RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip ${HT_DEB_DIR}/changelog.Debian failed: ${rc}")
endif()
foreach(pair "runtime;${HT_DEB_LIB}" "dev;libhoptrace-dev" "tp;${HT_DEB_TP}"
             "tool;hoptrace")
  list(GET pair 0 component)
  list(GET pair 1 package)
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/deb/copyright ${HT_DEB_DIR}/changelog.Debian.gz
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${package} COMPONENT ${component})
endforeach()

# hoptrace(1), made at build time from the command's own --help (so it
# never lists an option the command lacks), for the hoptrace package. Not
# in sanitizer, fuzzing or cross builds, where running the command while
# building is not wanted or not possible.
if(NOT HT_SANITIZE AND NOT HT_FUZZ AND NOT CMAKE_CROSSCOMPILING)
  set(HT_MANPAGE ${HT_DEB_DIR}/hoptrace.1.gz)
  add_custom_command(OUTPUT ${HT_MANPAGE}
    COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:hoptrace_cli>
            -DVERSION=${PROJECT_VERSION} -DOUT=${HT_DEB_DIR}/hoptrace.1
            -P ${CMAKE_CURRENT_LIST_DIR}/deb/manpage.cmake
    COMMAND gzip -9nf ${HT_DEB_DIR}/hoptrace.1
    DEPENDS hoptrace_cli ${CMAKE_CURRENT_LIST_DIR}/deb/manpage.cmake
    COMMENT "Manual page hoptrace(1) from hoptrace --help" VERBATIM)
  add_custom_target(hoptrace_manpage ALL DEPENDS ${HT_MANPAGE})
  install(FILES ${HT_MANPAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT tool)
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME hoptrace)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${HT_DEB_MAINTAINER})
set(CPACK_OUTPUT_FILE_PREFIX ${PROJECT_BINARY_DIR}/packages)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev tp tool)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${HT_DEB_RELEASE})
set(CPACK_DEBIAN_PACKAGE_SOURCE hoptrace)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${HT_DEB_MAINTAINER})
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# Depends from the ELF files' needs (dpkg-shlibdeps); a shlibs file in
# each library package, so a program built against libhoptraceN depends on
# this version or later (functions are only ever added within a SONAME).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
# The library packages rebuild the linker cache by dpkg's ldconfig trigger,
# not by maintainer scripts calling ldconfig (which CPack writes unless
# the package brings its own postinst and postrm).
set(ht_deb_ldconfig ${CMAKE_CURRENT_LIST_DIR}/deb/triggers
    ${CMAKE_CURRENT_LIST_DIR}/deb/postinst ${CMAKE_CURRENT_LIST_DIR}/deb/postrm)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA ${ht_deb_ldconfig})
set(CPACK_DEBIAN_TP_PACKAGE_CONTROL_EXTRA ${ht_deb_ldconfig})

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${HT_DEB_LIB})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
# Without the provider the library runs untraced; it must be the same
# build's (the events' fields).
set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS "${HT_DEB_TP} (= ${HT_DEB_VERSION})")
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION
"end-to-end request tracing for messengers, on LTTng (library)
hoptrace carries trace, span and parent ids in every message envelope,
carries them from hop to hop over libuv transports and records each hop
as LTTng-UST events. This package holds the shared library: the traced
messenger, the control socket, spans and samplers.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libhoptrace-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_SHLIBDEPS OFF)
# libuv: the static library's, the .pc's Requires.private and the CMake
# package's dependency.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "${HT_DEB_LIB} (= ${HT_DEB_VERSION}), libuv1-dev, pkg-config")
set(CPACK_DEBIAN_DEV_DESCRIPTION
"end-to-end request tracing for messengers, on LTTng (development files)
hoptrace carries trace, span and parent ids in every message envelope and
records each hop as LTTng-UST events. This package holds what a program is
built with: the headers, hoptrace.pc, the CMake package (find_package
hoptrace: hoptrace::hoptrace, hoptrace::hoptrace_static), the static
library and the link to the shared one.")

set(CPACK_DEBIAN_TP_PACKAGE_NAME ${HT_DEB_TP})
set(CPACK_DEBIAN_TP_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_TP_DESCRIPTION
"end-to-end request tracing for messengers, on LTTng (tracepoint provider)
The LTTng-UST provider of hoptrace's events, libhoptrace-tp.so, linked
with liblttng-ust. The hoptrace library loads it at start-up from beside
itself; without it a program runs untraced.")

set(CPACK_DEBIAN_TOOL_PACKAGE_NAME hoptrace)
set(CPACK_DEBIAN_TOOL_PACKAGE_SECTION utils)
# record starts an lttng-sessiond of its own and runs lttng commands.
set(CPACK_DEBIAN_TOOL_PACKAGE_RECOMMENDS lttng-tools)
set(CPACK_DEBIAN_TOOL_DESCRIPTION
"end-to-end request tracing for messengers, on LTTng (command)
The hoptrace command turns a recorded or live-streamed LTTng session into
Zipkin v2 JSON, OTLP/JSON, Chrome trace-event JSON, a per-hop latency
report and an HTML waterfall, or pushes the spans to a collector; it
records sessions (hoptrace record) and sets a traced process's sampling
through its control socket (hoptrace ctl).")

include(CPack)
