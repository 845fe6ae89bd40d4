# Included (not add_subdirectory'd) by the top level.
# Common layer: what every other layer uses (error texts, trace-context
# validity, hex, the process-wide counters, the library's version).
# Depends on nothing.
target_sources(hoptrace_objects PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/clock.c
  ${CMAKE_CURRENT_LIST_DIR}/context.c
  ${CMAKE_CURRENT_LIST_DIR}/counters.c
  ${CMAKE_CURRENT_LIST_DIR}/error.c
  ${CMAKE_CURRENT_LIST_DIR}/hex.c
  ${CMAKE_CURRENT_LIST_DIR}/version.c)
