# Included (not add_subdirectory'd) by the top level.
# The provider: the `hoptrace` LTTng-UST tracepoints and the event schema
# they are generated from (hoptrace_schema.h). Three users include this
# folder, each by its own include path, never through another's: the
# library's call sites (shim/recording/recorder.c), the provider library
# libhoptrace-tp.so built here, and the tool's decoder (tools/hoptrace).
pkg_check_modules(LTTNG_UST REQUIRED IMPORTED_TARGET lttng-ust)
target_include_directories(hoptrace_objects PRIVATE ${CMAKE_CURRENT_LIST_DIR})

# The provider library: probes only, the only code linked with liblttng-ust.
add_library(hoptrace_tp SHARED ${CMAKE_CURRENT_LIST_DIR}/hoptrace_tp.c)
# Its SONAME is its own (the event schema is its interface, not the
# library's API): the file, libhoptrace-tp.so.0.<project version>, starts
# with it as Debian expects.
set_target_properties(hoptrace_tp PROPERTIES OUTPUT_NAME hoptrace-tp
  VERSION 0.${PROJECT_VERSION} SOVERSION 0
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
target_include_directories(hoptrace_tp PRIVATE ${CMAKE_CURRENT_LIST_DIR}
  ${CMAKE_CURRENT_SOURCE_DIR}/include)
target_link_libraries(hoptrace_tp PRIVATE PkgConfig::LTTNG_UST ${CMAKE_DL_LIBS})
ht_target_warnings(hoptrace_tp)
# Loaded by its SONAME (shim/recording/loader.c), never linked: no .so link.
install(TARGETS hoptrace_tp LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT tp
        NAMELINK_SKIP)
# Tests and benchmarks find the provider here.
set(HT_PROVIDER_PATH $<TARGET_FILE:hoptrace_tp>)
# The schema's folder, for the tool and the tests that read events.
set(HT_PROVIDER_INCLUDE_DIR ${CMAKE_CURRENT_LIST_DIR})
