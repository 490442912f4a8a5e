#===- MtcStaticLLVM.cmake - self-contained link -----------------*- cmake -*-===//
#
# Debian's MLIR archives link against the shared libLLVM. For a binary that runs
# where no LLVM is installed, swap `LLVM` in every imported MLIR target for the
# static component libraries, and link the C++ runtime statically. Mixing the
# shared libLLVM with static LLVM archives aborts at start ("Option registered
# more than once"), so every target must be rewritten, not just the direct ones.
#
#===----------------------------------------------------------------------===//
llvm_map_components_to_libnames(MTC_STATIC_LLVM_LIBS
  core support irreader passes ipo analysis transformutils target targetparser
  asmparser bitreader bitwriter frontendopenmp codegen mc
  nvptxcodegen nvptxdesc nvptxinfo)

foreach(tgt IN LISTS MLIR_EXPORTED_TARGETS)
  if(TARGET ${tgt})
    get_target_property(type ${tgt} TYPE)
    if(type STREQUAL "INTERFACE_LIBRARY" OR type STREQUAL "STATIC_LIBRARY")
      get_target_property(libs ${tgt} INTERFACE_LINK_LIBRARIES)
      if(libs)
        list(TRANSFORM libs REPLACE "^LLVM$" "${MTC_STATIC_LLVM_LIBS}")
        set_target_properties(${tgt} PROPERTIES INTERFACE_LINK_LIBRARIES "${libs}")
      endif()
    endif()
  endif()
endforeach()

set(LLVM_LINK_LLVM_DYLIB OFF)
add_link_options(-static-libstdc++ -static-libgcc -Wl,--gc-sections)
# Debian ships fmt as a shared library only; use it header-only so that the
# binary needs nothing beyond libc, libm, libz and libzstd.
set(MTC_FMT_TARGET fmt::fmt-header-only)
