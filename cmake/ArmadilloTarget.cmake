# Armadillo::Armadillo, from what CMake's own FindArmadillo module found (find_package(Armadillo)
# first). Debian's ArmadilloConfig.cmake is shipped only as documentation, so we wrap the
# module's variables in a target of our own. An imported target, not an alias of one of ours:
# the installed package's export then names Armadillo::Armadillo, and attnConfig.cmake, which
# includes this file too, makes it again from the Armadillo of the project that uses the package.
if(NOT TARGET Armadillo::Armadillo)
  add_library(Armadillo::Armadillo INTERFACE IMPORTED)
  target_include_directories(Armadillo::Armadillo SYSTEM INTERFACE ${ARMADILLO_INCLUDE_DIRS})
  target_link_libraries(Armadillo::Armadillo INTERFACE ${ARMADILLO_LIBRARIES})
endif()
