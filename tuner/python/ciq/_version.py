# ciq's version, the same as CMakeLists.txt's project(ciq VERSION ...): CMake
# refuses to configure when they differ (tuner/python/CMakeLists.txt), and
# the build backend (backend/ciq_build.py) gives it to pip.
__version__ = "0.1.0"
