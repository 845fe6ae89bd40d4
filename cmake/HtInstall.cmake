# install(): headers, both libraries, hoptrace.pc, and a CMake package so
# that find_package(hoptrace) gives hoptrace::hoptrace and
# hoptrace::hoptrace_static. Each rule names its component, the Debian
# package it goes into (cmake/HtPackage.cmake): runtime (the shared
# library), dev (everything a program is built with), tp (the provider,
# src/provider/layer.cmake), tool (tools/hoptrace).
include(CMakePackageConfigHelpers)

install(DIRECTORY include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev
        FILES_MATCHING PATTERN "*.h")
install(FILES ${HT_GENERATED_INCLUDE_DIR}/hoptrace/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hoptrace COMPONENT dev)
install(TARGETS hoptrace hoptrace_static EXPORT hoptraceTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime
                NAMELINK_COMPONENT dev
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)

set(HT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/hoptrace)
install(EXPORT hoptraceTargets NAMESPACE hoptrace:: DESTINATION ${HT_CMAKE_DIR}
        COMPONENT dev)
configure_package_config_file(cmake/hoptraceConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/hoptraceConfig.cmake INSTALL_DESTINATION ${HT_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/hoptraceConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/hoptraceConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/hoptraceConfigVersion.cmake
        DESTINATION ${HT_CMAKE_DIR} COMPONENT dev)

# Relocatable: the prefix is found from the .pc file's own location.
file(RELATIVE_PATH HT_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
configure_file(cmake/hoptrace.pc.in ${CMAKE_CURRENT_BINARY_DIR}/hoptrace.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/hoptrace.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
