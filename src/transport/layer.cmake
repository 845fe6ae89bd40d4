# Included (not add_subdirectory'd) by the top level.
# Transport layer: libuv messenger (listeners, connections, framing, RPC
# correlation, timeouts, back-pressure, reconnect). Depends on src/wire.
target_sources(hoptrace_objects PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/address.c
  ${CMAKE_CURRENT_LIST_DIR}/conn.c
  ${CMAKE_CURRENT_LIST_DIR}/dispatch.c
  ${CMAKE_CURRENT_LIST_DIR}/handlers.c
  ${CMAKE_CURRENT_LIST_DIR}/listener.c
  ${CMAKE_CURRENT_LIST_DIR}/log.c
  ${CMAKE_CURRENT_LIST_DIR}/messenger.c
  ${CMAKE_CURRENT_LIST_DIR}/notice.c
  ${CMAKE_CURRENT_LIST_DIR}/options.c
  ${CMAKE_CURRENT_LIST_DIR}/out.c
  ${CMAKE_CURRENT_LIST_DIR}/peer.c
  ${CMAKE_CURRENT_LIST_DIR}/pending.c
  ${CMAKE_CURRENT_LIST_DIR}/request.c)
