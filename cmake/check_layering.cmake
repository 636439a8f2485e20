# The folders' one-way dependencies, checked on every configure (and by
# test/lit/layering.test): each folder may include headers of the folders
# below it and its own, nothing above.
#
#   utils <- spaces <- cache <- {wrapper, cache/cli, tuner}
#   utils <- utils/cli (LLVM's cl parser) <- {cache/cli, tuner's main}: never the wrappers
#
# and inside tuner/, one library per sub-folder:
#
#   tuner/formats <- tuner/objectives <- tuner/search <- tuner/rundir <- tuner/measure
#     <- tuner/run <- tuner/commands <- tuner (ciq-tuner's main)
#   tuner/measure <- tuner/report <- tuner
#   utils <- tuner/formats (its header-only writers) <- tuner/inject (the library loaded into programs)
#   utils <- tuner/formats <- tuner/replay (ciq-replay)
#
# Each folder is also one library that links only downward (its
# CMakeLists.txt); this check catches what linking would not: an upward
# #include of a header-only part. A header belongs to the deepest listed
# folder that holds it (tuner/measure/slurm.h to tuner/measure). Every
# folder of utils/, spaces/, cache/, wrapper/ and tuner/ with C++ in it, at
# any depth, must have its place here: one that has none fails the check
# rather than go unchecked. Usage as a script:
#   cmake -DROOT=<source dir> -P cmake/check_layering.cmake
cmake_policy(SET CMP0057 NEW) # if(IN_LIST) in script mode too
set(ciq_below_utils utils)
set(ciq_below_utils/cli utils utils/cli)
set(ciq_below_spaces utils spaces)
set(ciq_below_cache utils spaces cache)
set(ciq_below_wrapper utils spaces cache wrapper)
set(ciq_below_cache/cli utils utils/cli spaces cache cache/cli)
# tuner/formats owns the files libciq-inject writes (utils only);
# tuner/inject is the library loaded into the user's program: it links no
# ciq library but utils' ELF part (ciq_elf) and ciq_system, so of
# tuner/formats it can use only the header-only writers
# (kernel_trace_lines.h, capture_lines.h; anything else fails its link); objectives and
# everything above may read traces.
set(ciq_below_tuner/formats utils tuner/formats)
set(ciq_below_tuner/inject utils tuner/formats tuner/inject)
# tuner/replay re-runs captured launches (ciq-replay): the capture reader only.
set(ciq_below_tuner/replay utils tuner/formats tuner/replay)
set(ciq_below_tuner/objectives utils spaces cache tuner/formats tuner/objectives)
set(ciq_below_tuner/search ${ciq_below_tuner/objectives} tuner/search)
set(ciq_below_tuner/rundir ${ciq_below_tuner/search} tuner/rundir)
set(ciq_below_tuner/measure ${ciq_below_tuner/rundir} tuner/measure)
set(ciq_below_tuner/report ${ciq_below_tuner/measure} tuner/report)
set(ciq_below_tuner/run ${ciq_below_tuner/measure} tuner/run)
set(ciq_below_tuner/commands ${ciq_below_tuner/run} tuner/commands)
set(ciq_below_tuner ${ciq_below_tuner/commands} utils/cli tuner/report tuner)
set(ciq_folders utils utils/cli spaces cache wrapper cache/cli tuner/formats tuner/inject tuner/replay
    tuner/objectives tuner/search tuner/rundir tuner/measure tuner/report tuner/run tuner/commands tuner)

set(ciq_layering_errors "")
# Every folder of the layered trees that holds C++ itself, at any depth
# (a new cache/x/ or wrapper/x/ as much as a new tuner/x/), has a place.
file(GLOB_RECURSE ciq_tuner_entries LIST_DIRECTORIES true RELATIVE ${ROOT}
     ${ROOT}/utils/* ${ROOT}/spaces/* ${ROOT}/cache/* ${ROOT}/wrapper/* ${ROOT}/tuner/*)
foreach(entry ${ciq_tuner_entries})
  if(IS_DIRECTORY ${ROOT}/${entry} AND NOT entry IN_LIST ciq_folders)
    file(GLOB cxx ${ROOT}/${entry}/*.cpp ${ROOT}/${entry}/*.h)
    if(cxx) # tuner/python/ holds no C++: nothing to layer
      string(APPEND ciq_layering_errors "\n  ${entry}/ has no place in the layering: give it one in cmake/check_layering.cmake (ciq_below_${entry} and ciq_folders)")
    endif()
  endif()
endforeach()
foreach(folder ${ciq_folders})
  file(GLOB sources ${ROOT}/${folder}/*.cpp ${ROOT}/${folder}/*.h)
  foreach(source ${sources})
    file(STRINGS ${source} includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"[a-z_]+/")
    foreach(line ${includes})
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([^\"]+)\".*" "\\1" header "${line}")
      # The deepest listed folder above the header; else its first part.
      get_filename_component(target "${header}" DIRECTORY)
      while(NOT target IN_LIST ciq_folders AND target MATCHES "/")
        get_filename_component(target "${target}" DIRECTORY)
      endwhile()
      if(NOT target IN_LIST ciq_below_${folder})
        file(RELATIVE_PATH shown ${ROOT} ${source})
        string(APPEND ciq_layering_errors "\n  ${shown} includes ${header} (${folder}/ may use only: ${ciq_below_${folder}})")
      endif()
    endforeach()
  endforeach()
endforeach()
if(ciq_layering_errors)
  message(FATAL_ERROR "ciq: an include goes against the folders' layering (utils <- spaces <- cache <- wrapper, cache/cli, tuner; "
                      "tuner/formats <- tuner/objectives <- tuner/search <- tuner/rundir <- tuner/measure <- tuner/run <- tuner/commands <- tuner, tuner/measure <- tuner/report <- tuner; "
                      "tuner/formats <- tuner/inject, tuner/replay):${ciq_layering_errors}")
endif()
