# The folders' one-way dependencies, checked on every configure (and by
# test/lit/layering.test): each folder may include headers of the folders
# below it and its own, nothing above.
#
#   utils <- spaces <- cache <- {wrapper, cache/cli, tuner}
#
# Each folder is also one library that links only downward (its
# CMakeLists.txt); this check catches what linking would not: an upward
# #include of a header-only part. Usage as a script:
#   cmake -DROOT=<source dir> -P cmake/check_layering.cmake
cmake_policy(SET CMP0057 NEW) # if(IN_LIST) in script mode too
set(ciq_below_utils utils)
set(ciq_below_spaces utils spaces)
set(ciq_below_cache utils spaces cache)
set(ciq_below_wrapper utils spaces cache wrapper)
set(ciq_below_cache/cli utils spaces cache cache/cli)
set(ciq_below_tuner utils spaces cache tuner)

set(ciq_layering_errors "")
foreach(folder utils spaces cache wrapper cache/cli tuner)
  if(folder STREQUAL "tuner")
    # tuner/ has sub-folders (profile/, inject/, ...), all under tuner's rule.
    file(GLOB_RECURSE sources ${ROOT}/${folder}/*.cpp ${ROOT}/${folder}/*.h)
  else()
    file(GLOB sources ${ROOT}/${folder}/*.cpp ${ROOT}/${folder}/*.h)
  endif()
  foreach(source ${sources})
    file(STRINGS ${source} includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"[a-z_]+/")
    foreach(line ${includes})
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]+\"([^\"]+)\".*" "\\1" header "${line}")
      if(header MATCHES "^cache/cli/")
        set(target cache/cli)
      else()
        string(REGEX REPLACE "/.*" "" target "${header}")
      endif()
      if(NOT target IN_LIST ciq_below_${folder})
        file(RELATIVE_PATH shown ${ROOT} ${source})
        string(APPEND ciq_layering_errors "\n  ${shown} includes ${header} (${folder}/ may use only: ${ciq_below_${folder}})")
      endif()
    endforeach()
  endforeach()
endforeach()
if(ciq_layering_errors)
  message(FATAL_ERROR "ciq: an include goes against the folders' layering (utils <- spaces <- cache <- wrapper, cache/cli, tuner):${ciq_layering_errors}")
endif()
