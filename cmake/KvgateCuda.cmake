# CUDA toggle. KVGATE_CUDA=AUTO builds the CUDA parts when nvcc is found; the CPU build is complete without them.
set(KVGATE_HAVE_CUDA OFF)
if(NOT KVGATE_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Hopper: sm_90 machine code; kernels that use wgmma/setmaxnreg add -gencode=arch=compute_90a,code=sm_90a themselves.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    enable_language(CUDA)
    # CUDA sources are C++17 (CMake 3.25 does not know nvcc 13 accepts C++20): headers that .cu
    # files include (kernels/, harness/core/) stay C++17.
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    string(APPEND CMAKE_CUDA_FLAGS " --expt-relaxed-constexpr")
    find_package(CUDAToolkit REQUIRED)
    set(KVGATE_HAVE_CUDA ON)
    # The CUDA engine (harness/decoder_cuda) defines make_cuda_engine in this build.
    set(KVGATE_CUDA_ENGINE ON)
  elseif(KVGATE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "KVGATE_CUDA=ON but no CUDA compiler was found: install the CUDA toolkit or configure with -DKVGATE_CUDA=OFF")
  endif()
endif()
message(STATUS "kvgate: CUDA parts ${KVGATE_HAVE_CUDA}")
