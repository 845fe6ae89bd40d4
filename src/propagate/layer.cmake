# Included (not add_subdirectory'd) by the top level.
# Propagate layer: ids, spans, samplers, flags, the thread's current
# context. Pure logic, no I/O; depends on src/common only. Emits through events.h.
target_sources(hoptrace_objects PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/active.c
  ${CMAKE_CURRENT_LIST_DIR}/current.c
  ${CMAKE_CURRENT_LIST_DIR}/epoch.c
  ${CMAKE_CURRENT_LIST_DIR}/events.c
  ${CMAKE_CURRENT_LIST_DIR}/flight.c
  ${CMAKE_CURRENT_LIST_DIR}/ids.c
  ${CMAKE_CURRENT_LIST_DIR}/sampler.c
  ${CMAKE_CURRENT_LIST_DIR}/sampling_config.c
  ${CMAKE_CURRENT_LIST_DIR}/span.c)
