// Every KV-format codec (__host__ __device__), for CUDA kernels and their CPU twins.
#pragma once
#include "kernels/codec_bytes.h"
#include "kernels/codec_fp8_per_tensor.h"
#include "kernels/codec_ggml.h"
#include "kernels/codec_kivi.h"
#include "kernels/codec_nvfp4.h"
#include "kernels/codec_per_token_head.h"
#include "kernels/codec_turboquant.h"
#include "kernels/float_formats.h"
#include "kernels/fp8_formats.h"
#include "kernels/hadamard.h"
