# Build step of `hoptrace view`: turns the page's CSS and script into C
# char arrays (bytes as hex: no escaping, no string-literal length
# limit), so the tool writes one self-contained file with no network.
# cmake -DOUT=view_assets.c -DINPUTS="name=file;..." -P embed.cmake
set(text "/* Generated from tools/hoptrace/output/view by embed.cmake. */\n")
foreach(pair IN LISTS INPUTS)
  string(REPLACE "=" ";" parts "${pair}")
  list(GET parts 0 name)
  list(GET parts 1 file)
  file(READ "${file}" hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n"
         bytes "${bytes}")
  string(APPEND text "const char ${name}[] = {\n${bytes}0x00};\n")
endforeach()
file(WRITE "${OUT}.tmp" "${text}")
file(RENAME "${OUT}.tmp" "${OUT}")
