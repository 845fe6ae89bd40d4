# Warning and sanitizer flags shared by every hoptrace target.

function(ht_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  if(HT_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  target_compile_definitions(${target} PRIVATE _GNU_SOURCE)
  ht_target_sanitize(${target})
endfunction()

function(ht_target_sanitize target)
  if(HT_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${HT_SANITIZE}
                           -fno-omit-frame-pointer -fno-sanitize-recover=all)
    target_link_options(${target} PRIVATE -fsanitize=${HT_SANITIZE})
  endif()
endfunction()

# Fuzzing instruments every object (so coverage reaches the library) and
# needs clang's libFuzzer.
if(HT_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "HT_FUZZ=ON needs clang: configure with CC=clang")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
