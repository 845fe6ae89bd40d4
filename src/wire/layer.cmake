# Included (not add_subdirectory'd) by the top level, so that the
# generated sources live in the scope of hoptrace_objects.
# Wire layer: envelope codec (by hand: a canonical fast path and one
# general decoder), frame reader, trace-context text bridges. Depends on
# src/common. protobuf-c is for the tests only: its code generated from
# hoptrace.proto is the oracle the codec is checked against.

target_sources(hoptrace_objects PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/arena.c
  ${CMAKE_CURRENT_LIST_DIR}/b3.c
  ${CMAKE_CURRENT_LIST_DIR}/envelope_codec.c
  ${CMAKE_CURRENT_LIST_DIR}/envelope_encode.c
  ${CMAKE_CURRENT_LIST_DIR}/envelope_fast.c
  ${CMAKE_CURRENT_LIST_DIR}/envelope_general.c
  ${CMAKE_CURRENT_LIST_DIR}/frame_reader.c
  ${CMAKE_CURRENT_LIST_DIR}/traceparent.c)

if(HT_BUILD_TESTS)
  set(HT_WIRE_GEN_DIR ${CMAKE_BINARY_DIR}/src/wire)
  file(MAKE_DIRECTORY ${HT_WIRE_GEN_DIR})
  set(HT_PROTO ${CMAKE_CURRENT_LIST_DIR}/hoptrace.proto)
  set(HT_PROTO_OUT ${HT_WIRE_GEN_DIR}/hoptrace.pb-c.c
                   ${HT_WIRE_GEN_DIR}/hoptrace.pb-c.h)
  add_custom_command(
    OUTPUT ${HT_PROTO_OUT}
    COMMAND ${PROTOC_C} --proto_path=${CMAKE_CURRENT_LIST_DIR}
            --c_out=${HT_WIRE_GEN_DIR} ${HT_PROTO}
    DEPENDS ${HT_PROTO}
    COMMENT "protoc-c hoptrace.proto")
  # Generated code is not ours to fix: no -Werror there.
  set_source_files_properties(${HT_WIRE_GEN_DIR}/hoptrace.pb-c.c
    PROPERTIES COMPILE_OPTIONS "-w")
  # protobuf-c's generated code is not in the library: it is the oracle the
  # decoder's tests and fuzz target compare against.
  add_library(ht_wire_pb_oracle STATIC EXCLUDE_FROM_ALL
    ${HT_WIRE_GEN_DIR}/hoptrace.pb-c.c)
  target_include_directories(ht_wire_pb_oracle PUBLIC ${HT_WIRE_GEN_DIR})
  target_link_libraries(ht_wire_pb_oracle PUBLIC PkgConfig::PROTOBUFC)
endif()
