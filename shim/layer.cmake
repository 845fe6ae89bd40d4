# Included (not add_subdirectory'd) by the top level.
# Shim layer, above the transport: messenger_new.c (the plain-or-traced
# choice), messenger/ (the traced messenger), control/ (the control
# socket), recording/ (the LTTng backend: tracepoint call sites with
# dynamic linkage + USDT twins, the start-up loader). The provider they
# call, libhoptrace-tp.so, is src/provider/. libhoptrace itself never
# links liblttng-ust.
include(CheckIncludeFile)
set(CMAKE_REQUIRED_QUIET ON)
check_include_file(sys/sdt.h HT_HAVE_SYS_SDT_H)
unset(CMAKE_REQUIRED_QUIET)

target_sources(hoptrace_objects PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/messenger_new.c
  ${CMAKE_CURRENT_LIST_DIR}/messenger/traced_messenger.c
  ${CMAKE_CURRENT_LIST_DIR}/messenger/traced_hooks.c
  ${CMAKE_CURRENT_LIST_DIR}/messenger/traced_spread.c
  ${CMAKE_CURRENT_LIST_DIR}/messenger/traced_stats.c
  ${CMAKE_CURRENT_LIST_DIR}/messenger/traced_adaptive.c
  ${CMAKE_CURRENT_LIST_DIR}/messenger/traced_capture.c
  ${CMAKE_CURRENT_LIST_DIR}/messenger/traced_crumbs.c
  ${CMAKE_CURRENT_LIST_DIR}/messenger/traced_kv.c
  ${CMAKE_CURRENT_LIST_DIR}/messenger/traced_names.c
  ${CMAKE_CURRENT_LIST_DIR}/control/control_cmd.c
  ${CMAKE_CURRENT_LIST_DIR}/control/control_conn.c
  ${CMAKE_CURRENT_LIST_DIR}/control/control_env.c
  ${CMAKE_CURRENT_LIST_DIR}/control/control_reader.c
  ${CMAKE_CURRENT_LIST_DIR}/control/control_socket.c
  ${CMAKE_CURRENT_LIST_DIR}/recording/flight_memory.c
  ${CMAKE_CURRENT_LIST_DIR}/recording/flight_ring.c
  ${CMAKE_CURRENT_LIST_DIR}/recording/intern.c
  ${CMAKE_CURRENT_LIST_DIR}/recording/join_kvs.c
  ${CMAKE_CURRENT_LIST_DIR}/recording/loader.c
  ${CMAKE_CURRENT_LIST_DIR}/recording/recorder.c)
# Headers only (tracepoint.h, no library): the call sites find lttng-ust
# at run time through dlopen.
target_include_directories(hoptrace_objects PRIVATE ${CMAKE_CURRENT_LIST_DIR}
  ${LTTNG_UST_INCLUDE_DIRS})
if(HT_HAVE_SYS_SDT_H)
  set_property(SOURCE ${CMAKE_CURRENT_LIST_DIR}/recording/recorder.c APPEND PROPERTY
               COMPILE_DEFINITIONS HT_HAVE_SDT=1)
endif()
