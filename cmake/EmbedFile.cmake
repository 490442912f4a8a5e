#===- EmbedFile.cmake - text files embedded at build time -----*- cmake -*-===//
#
# Two parts. Included from a CMakeLists.txt, it defines
#
#   mtc_embed_file(<input> <output> <symbol>)
#
# a custom command that regenerates <output> (a C++ source in the binary
# folder) whenever <input> changes. Run as a script (cmake -P) with INPUT,
# OUTPUT and SYMBOL set, it writes <output>: <input>'s bytes as
#
#   namespace mtc { extern const char <symbol>[] = {..., 0}; }
#
# NUL-terminated, so that a declaration `extern const char <symbol>[];` and
# `llvm::StringRef(<symbol>)` give the text. Bytes, not a raw string literal:
# any content embeds, and nothing but CMake itself is needed.
#
#===----------------------------------------------------------------------===//
if(CMAKE_SCRIPT_MODE_FILE)
  file(READ "${INPUT}" hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  # Sixteen bytes a line.
  string(REPEAT "0x[0-9a-f][0-9a-f]," 16 line)
  string(REGEX REPLACE "(${line})" "\\1\n  " bytes "${bytes}")
  get_filename_component(name "${INPUT}" NAME)
  file(WRITE "${OUTPUT}"
    "// Generated from ${name} by cmake/EmbedFile.cmake; do not edit.\n"
    "namespace mtc {\n"
    "extern const char ${SYMBOL}[];\n"
    "const char ${SYMBOL}[] = {\n  ${bytes}0x00};\n"
    "} // namespace mtc\n")
  return()
endif()

set(MTC_EMBED_FILE_SCRIPT ${CMAKE_CURRENT_LIST_FILE})

function(mtc_embed_file input output symbol)
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${input} -DOUTPUT=${output}
            -DSYMBOL=${symbol} -P ${MTC_EMBED_FILE_SCRIPT}
    DEPENDS ${input} ${MTC_EMBED_FILE_SCRIPT}
    COMMENT "Embedding ${input}"
    VERBATIM)
endfunction()
