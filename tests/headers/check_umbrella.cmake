# hoptrace.h, "the one header an application includes", includes every
# public header: a header added to include/hoptrace/ and forgotten there
# fails this test (capture.h was, for a release).
# usage: cmake -DINCLUDE_DIR=<include/> -DGENERATED=<header;...> -P check_umbrella.cmake
file(READ ${INCLUDE_DIR}/hoptrace.h umbrella)
file(GLOB headers RELATIVE ${INCLUDE_DIR} ${INCLUDE_DIR}/hoptrace/*.h)
list(APPEND headers ${GENERATED})
set(missing)
foreach(header ${headers})
  string(FIND "${umbrella}" "#include \"${header}\"" at)
  if(at EQUAL -1)
    list(APPEND missing ${header})
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "hoptrace.h does not include: ${missing}")
endif()
list(LENGTH headers n)
message(STATUS "hoptrace.h includes all ${n} public headers")
